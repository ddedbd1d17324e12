import Foundation
import Testing
import TroveTestSupport

@testable import TroveSync

@Suite struct PostgresServerSchemaTests {
    @Test func installingTwiceChangesNothingAndKeepsTheFeed() async throws {
        let server = try SyncServerFixture.server()
        let device = try SyncServerFixture.newDevice()
        let space = SyncServerFixture.newSpaceName()
        let transport = try PostgresTransport(url: device.url)
        defer { transport.close() }
        try await transport.createSpace(space)
        let first = try await transport.push(
            [SealedChangeSet(device: "d", deviceSequence: 1, payload: Data([1, 2, 3]))], space: space)

        // Once through the tool, once more through the file with psql, on top of the fixture's own install.
        let version = try await PostgresTransport.installServerSchema(url: server.adminURL)
        #expect(version == 2)
        try server.psql(file: SyncServerFixture.schemaFile)

        let policies = try server.psql(
            "SELECT count(*) FROM pg_policies WHERE schemaname = 'trove_sync'")
        #expect(policies.trimmingCharacters(in: .whitespacesAndNewlines) == "8")
        let rowSecurity = try server.psql(
            "SELECT string_agg(relname || '=' || relrowsecurity, ',' ORDER BY relname) FROM pg_class "
                + "WHERE relnamespace = 'trove_sync'::regnamespace AND relkind = 'r'")
        #expect(rowSecurity.trimmingCharacters(in: .whitespacesAndNewlines) == "changes=true,members=true,spaces=true")
        let pulled = try await transport.pull(space: space, after: 0, limit: 10)
        #expect(pulled.map(\.serverSequence) == first.map { Optional($0) })
    }

    @Test func aRoleWithoutPrivilegesCannotInstallIt() async throws {
        let device = try SyncServerFixture.newDevice()
        do {
            try await PostgresTransport.installServerSchema(url: device.url)
            Issue.record("a device role installed the schema")
        } catch let error as PostgresError {
            // 42501: insufficient privilege (creating the schema's objects as a plain role).
            #expect(error.sqlState == "42501")
        }
    }
}
