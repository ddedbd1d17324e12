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
            [SealedChangeSet(device: "d", deviceSequence: 1, payload: Data([1, 2, 3]))],
            space: space)

        // Once through the tool, once more through the file with psql, on top of the fixture's own install.
        let version = try await PostgresTransport.installServerSchema(url: server.adminURL)
        #expect(version == 4)
        try server.psql(file: SyncServerFixture.schemaFile)

        let policies = try server.psql(
            "SELECT count(*) FROM pg_policies WHERE schemaname = 'trove_sync'")
        #expect(policies.trimmingCharacters(in: .whitespacesAndNewlines) == "14")
        let rowSecurity = try server.psql(
            "SELECT string_agg(relname || '=' || relrowsecurity, ',' ORDER BY relname) FROM pg_class "
                + "WHERE relnamespace = 'trove_sync'::regnamespace AND relkind = 'r'")
        #expect(
            rowSecurity.trimmingCharacters(in: .whitespacesAndNewlines)
                == "changes=true,cursors=true,devices=true,members=true,settings=false,snapshot_parts=true,"
                + "snapshots=true,spaces=true,wrapped_keys=true"
        )
        let pulled = try await transport.pull(space: space, after: 0, limit: 10)
        #expect(pulled.map(\.serverSequence) == first.map { Optional($0) })
    }

    /// Version 2 (key checks) upgraded in place: spaces, key checks and feeds kept, snapshots and
    /// pruning there afterwards, and installing again changes nothing.
    @Test func installingOverVersion2KeepsSpacesAndFeeds() async throws {
        let server = try SyncServerFixture.server()
        let database = "upgrade_\(SyncServerFixture.uniqueSuffix())"
        try server.psql("CREATE DATABASE \(database)", database: "postgres")
        try server.psql(ServerSchemaVersion2.sql, database: database)
        let device = try SyncServerFixture.newDevice()
        // The URLs end with the fixture's database: put the new one in its place.
        func onDatabase(_ url: String) -> String {
            guard let range = url.range(of: "/\(server.database)", options: .backwards) else {
                return url
            }
            return url.replacingCharacters(in: range, with: "/\(database)")
        }
        let url = onDatabase(device.url)
        let transport = try PostgresTransport(url: url)
        defer { transport.close() }
        let space = SyncServerFixture.newSpaceName()
        try await transport.createSpace(space)
        let sets = (1...3).map {
            SealedChangeSet(device: "d", deviceSequence: Int64($0), payload: Data([UInt8($0)]))
        }
        _ = try await transport.push(sets, space: space)
        _ = try await transport.setKeyCheck(Data([9, 9]), space: space)
        #expect(
            try server.psql("SELECT trove_sync.schema_version()", database: database).contains("2"))

        let adminURL = onDatabase(server.adminURL)
        #expect(try await PostgresTransport.installServerSchema(url: adminURL) == 4)
        #expect(try await PostgresTransport.installServerSchema(url: adminURL) == 4)
        #expect(
            try await transport.pull(space: space, after: 0, limit: 10).map(\.payload)
                == sets.map(\.payload))
        #expect(try await transport.keyCheck(space: space) == Data([9, 9]))
        let state = try await transport.feedState(space: space, fullSize: true)
        #expect(
            state.lastSequence == 3 && state.prunedUpTo == 0 && state.snapshot == nil
                && state.changeSets == 3)
        #expect(state.horizon == .seconds(90 * 86_400))
        try await transport.putSnapshotPart(
            Data([1]), part: 0, of: 1, upTo: 2, device: "d", space: space)
        #expect(try await transport.finishSnapshot(upTo: 2, device: "d", space: space))
        #expect(try await transport.reportCursor(3, device: "d", space: space) == 2)
        #expect(
            try await transport.pull(space: space, after: 0, limit: 10).map(\.deviceSequence) == [3]
        )
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
