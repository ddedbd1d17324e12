import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveSync

/// A device process killed with SIGKILL while it pushes to PostgreSQL and while it applies what
/// it pulled: after a restart nothing is lost and nothing is stored or applied twice.
@Suite(.serialized) struct PostgresCrashTests {
    @Test func aDeviceKilledDuringPushAndApplyThroughPostgreSQLLosesNothingAndDoublesNothing()
        async throws
    {
        // A server of its own: the crash child syncs the space named "crash".
        let server = try TestPostgresServer()
        try server.psql(file: SyncServerFixture.schemaFile)
        let role = try SyncServerFixture.newDevice(on: server)
        let transport = try PostgresTransport(url: role.url)
        defer { transport.close() }
        try await transport.createSpace("crash")
        let directory = try TemporaryDirectory()
        let (a, b, c) = (
            directory.path("a.trove"), directory.path("b.trove"), directory.path("c.trove")
        )
        #expect(try SyncCrashTests.run(["edit", a, role.url, "12000"]) == ["E 12000"])

        var killedWhileRunning = 0
        for delay in [150, 400, 900] {
            if try await SyncCrashTests.runAndKill(
                ["push", a, role.url], onProgressLine: 1, after: .milliseconds(delay))
            {
                killedWhileRunning += 1
            }
        }
        #expect(killedWhileRunning > 0)
        let pushed = try SyncCrashTests.run(["push", a, role.url])
        #expect(pushed.first?.hasPrefix("P ") == true, "\(pushed)")
        // Each change set once, numbered without gaps (12,000 records, 2,000 per change set).
        let feed = try server.psql(
            "SELECT device_sequence FROM trove_sync.changes ORDER BY server_sequence")
        let sequences: [String] = feed.split(separator: "\n").map { String($0) }
        let expected: [String] = ["1", "2", "3", "4", "5", "6"]
        #expect(sequences == expected)

        _ = try SyncCrashTests.run(["edit", b, role.url, "0"])
        killedWhileRunning = 0
        for delay in [300, 800, 1500] {
            if try await SyncCrashTests.runAndKill(
                ["pull", b, role.url], onProgressLine: 1, after: .milliseconds(delay))
            {
                killedWhileRunning += 1
            }
        }
        #expect(killedWhileRunning > 0)
        let pulled = try SyncCrashTests.run(["pull", b, role.url])
        #expect(pulled.first?.hasPrefix("A ") == true, "\(pulled)")
        _ = try SyncCrashTests.run(["edit", c, role.url, "0"])
        _ = try SyncCrashTests.run(["pull", c, role.url])

        var dumps: [[String]] = []
        for path in [a, b, c] {
            let database = try Database(path: path)
            #expect(try await database.documents(named: "notes").count() == 12_000)
            dumps.append(try await canonicalDump(of: database))
        }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[0] == dumps[2])
        let cursor = try await Database(path: b).query("SELECT pulled FROM _trove_sync_device")
            .first?.int64(at: 0)
        #expect(cursor == 6)
    }
}
