import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// `trove sync setup-server`, `trove sync --server --space` and `trove sync status` against a real
/// PostgreSQL server (started once for this test process).
@Suite("CLI: sync", .serialized)
struct SyncCLITests {
    static let schema = DocumentSchema(
        id: .string, fields: [.text("title")], fullText: FullTextDefinition(fields: ["title"]))

    /// A database file with a `notes` document collection (String ids) holding `titles`.
    func database(_ path: String, titles: [String: String]) async throws {
        let database = try Database(path: path)
        let notes = try await database.documents("notes", schema: Self.schema)
        try await notes.insert(
            titles.map { Document(id: .string($0.key), ["title": .string($0.value)]) })
    }

    @Test(
        "setup-server installs the schema (twice: idempotent); two databases sync a note; status agrees with the server"
    )
    func syncThroughTheServer() async throws {
        let server = try TestPostgresServer.shared()
        for _ in 0..<2 {
            let setup = await runTrove(["sync", "setup-server", server.adminURL])
            #expect(setup.status == 0, "\(setup.err)")
            #expect(setup.out.contains("installed Trove's sync schema (version 4)"))
        }
        let role = "cli_\(UUID().uuidString.prefix(8).lowercased())"
        try server.createRole(role, password: "pw", inRoles: ["trove_sync_device"])
        let url = server.url(user: role, password: "pw")
        let space = "cli-space-\(UUID().uuidString.prefix(8))"
        let directory = try TemporaryDirectory(prefix: "trove-cli-sync")
        let a = directory.path("a.trove")
        let b = directory.path("b.trove")
        try await database(a, titles: ["n1": "ferry timetable for the harbour"])
        try await database(b, titles: [:])
        let environment = ["TROVE_SYNC_PASSWORD": "correct horse battery staple"]

        let pushed = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", a], environment: environment)
        #expect(pushed.status == 0, "\(pushed.err)")
        #expect(pushed.out.hasPrefix("pushed 1 change set, pulled 0"), "\(pushed.out)")
        let pulled = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", b], environment: environment)
        #expect(pulled.status == 0, "\(pulled.err)")
        #expect(pulled.out.contains("pulled 1"), "\(pulled.out)")
        let notes = try await Database(path: b).documents(named: "notes")
        #expect(
            try await notes.search(Query().matching(.typed("harbour ferry"))).map(\.record.id)
                == ["n1"])

        let status = await runTrove([
            "sync", "status", "--space", space, "--server", url, "--db", b, "--json",
        ])
        #expect(status.status == 0, "\(status.err)")
        let json = try JSONValue.parse(status.out)
        #expect(json["serverSequence"] == .int(1))
        #expect(json["status"]?["lastPulledSequence"] == .int(1))
        #expect(json["status"]?["pendingChanges"] == .int(0))
        let text = await runTrove(["sync", "status", "--space", space, "--db", a])
        #expect(text.status == 0 && text.out.contains("last pushed:        1"), "\(text.out)")

        // Another passphrase cannot open what A sealed: exit 6, nothing applied.
        let c = directory.path("c.trove")
        try await database(c, titles: [:])
        let wrong = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", c],
            environment: ["TROVE_SYNC_PASSWORD": "wrong"])
        #expect(wrong.status == ExitCode.wrongPassphrase, "\(wrong.err)")
        #expect(try await Database(path: c).documents(named: "notes").count() == 0)
    }

    @Test(
        "sync snapshot uploads a snapshot; a new database starts from it; status shows the feed, the snapshot and the horizon"
    )
    func snapshotAndFeedStatus() async throws {
        let (url, space) = try await newSpace()
        let directory = try TemporaryDirectory(prefix: "trove-cli-snapshot")
        let a = directory.path("a.trove")
        let b = directory.path("b.trove")
        try await database(a, titles: ["n1": "ferry timetable", "n2": "harbour map"])
        try await database(b, titles: [:])
        let environment = ["TROVE_SYNC_PASSWORD": "correct horse battery staple"]
        let first = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", a], environment: environment)
        #expect(first.status == 0, "\(first.err)")
        let snapshot = await runTrove(
            ["sync", "snapshot", "--server", url, "--space", space, "--db", a],
            environment: environment)
        #expect(snapshot.status == 0, "\(snapshot.err)")
        #expect(snapshot.out.contains("uploaded a snapshot up to sequence 1"), "\(snapshot.out)")

        let joined = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", b], environment: environment)
        #expect(joined.status == 0, "\(joined.err)")
        #expect(try await Database(path: b).documents(named: "notes").count() == 2)

        let status = await runTrove(["sync", "status", "--server", url, "--db", b])
        #expect(status.status == 0, "\(status.err)")
        #expect(status.out.contains("in sync:            yes"), "\(status.out)")
        #expect(status.out.contains("snapshot:           up to 1"), "\(status.out)")
        #expect(status.out.contains("horizon:            90 days"), "\(status.out)")
        #expect(status.out.contains("feed:               0 change sets"), "\(status.out)")
        let json = try JSONValue.parse(
            await runTrove(["sync", "status", "--server", url, "--db", b, "--json"]).out)
        #expect(json["feed"]?["snapshot"]?["upToSequence"] == .int(1))
        #expect(json["status"]?["inSync"] == .bool(true))
    }

    /// A new role and space on the shared server (schema installed): the role's URL and the space.
    func newSpace() async throws -> (url: String, space: String) {
        let server = try TestPostgresServer.shared()
        let setup = await runTrove(["sync", "setup-server", server.adminURL])
        #expect(setup.status == 0, "\(setup.err)")
        let role = "cli_\(UUID().uuidString.prefix(8).lowercased())"
        try server.createRole(role, password: "pw", inRoles: ["trove_sync_device"])
        return (server.url(user: role, password: "pw"), "cli-space-\(UUID().uuidString.prefix(8))")
    }

    /// Issue #41: a mistyped passphrase pushed a change set nobody could open and broke the space.
    @Test(
        "a wrong passphrase is refused before anything is sent; status shows why without --space; the right one sends what waited"
    )
    func wrongPassphraseSendsNothing() async throws {
        let (url, space) = try await newSpace()
        let directory = try TemporaryDirectory(prefix: "trove-cli-sync")
        let (a, b, w) = (
            directory.path("a.trove"), directory.path("b.trove"), directory.path("w.trove")
        )
        try await database(a, titles: ["n1": "ferry timetable for the harbour"])
        try await database(b, titles: [:])
        try await database(w, titles: ["w1": "typed on the laptop"])
        let right = ["TROVE_SYNC_PASSWORD": "correct horse battery staple"]
        let typo = ["TROVE_SYNC_PASSWORD": "correct horse battery stapel"]
        let first = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", a], environment: right)
        #expect(first.status == 0, "\(first.err)")

        let wrong = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", w], environment: typo)
        #expect(wrong.status == ExitCode.wrongPassphrase, "\(wrong.err)")
        #expect(wrong.err.contains("TROVE_SYNC_PASSWORD"), "\(wrong.err)")
        // Nothing reached the server: a new device syncs as before.
        let fresh = await runTrove(
            ["sync", "--server", url, "--space", space, "--db", b], environment: right)
        #expect(
            fresh.status == 0 && fresh.out.hasPrefix("pushed 0 change sets, pulled 1"),
            "\(fresh.out) \(fresh.err)")

        // The status names the space it reads from the database, the server's sequence and the error.
        let status = await runTrove(["sync", "status", "--db", w, "--server", url, "--json"])
        #expect(status.status == 0, "\(status.err)")
        let json = try JSONValue.parse(status.out)
        #expect(json["space"] == .string(space))
        #expect(json["serverSequence"] == .int(1))
        #expect(json["status"]?["lastError"]?.string != nil, "\(status.out)")
        #expect(json["status"]?["pendingChanges"] == .int(1))
        let text = await runTrove(["sync", "status", "--db", w])
        #expect(
            text.status == 0 && text.out.contains("space:              \(space)"),
            "\(text.out) \(text.err)")
        #expect(text.out.contains("last error:"), "\(text.out)")

        // The right passphrase (the space, again, from the database) sends what waited.
        let fixed = await runTrove(["sync", "--server", url, "--db", w], environment: right)
        #expect(
            fixed.status == 0 && fixed.out.hasPrefix("pushed 1 change set, pulled 1"),
            "\(fixed.out) \(fixed.err)")
        let cleared = try JSONValue.parse(
            await runTrove(["sync", "status", "--db", w, "--json"]).out)
        #expect(cleared["status"]?["lastError"] == nil)
        #expect(
            await runTrove(["sync", "--server", url, "--db", b], environment: right).out.contains(
                "pulled 1"))
        let notes = try await Database(path: b).documents(named: "notes")
        #expect(try await notes.fetch(id: "w1")?["title"] == "typed on the laptop")
        #expect(try await notes.fetch(id: "n1") != nil)
    }

    @Test(
        "a change set altered on the server is quarantined and the later ones applied; the owner lists and deletes it"
    )
    func quarantine() async throws {
        let server = try TestPostgresServer.shared()
        let (url, space) = try await newSpace()
        let directory = try TemporaryDirectory(prefix: "trove-cli-sync")
        let (a, b, c) = (
            directory.path("a.trove"), directory.path("b.trove"), directory.path("c.trove")
        )
        try await database(a, titles: ["n1": "ferry timetable for the harbour"])
        try await database(b, titles: [:])
        try await database(c, titles: [:])
        let environment = ["TROVE_SYNC_PASSWORD": "correct horse battery staple"]
        func sync(_ path: String) async -> RunResult {
            await runTrove(
                ["sync", "--server", url, "--space", space, "--db", path], environment: environment)
        }
        #expect(await sync(a).status == 0)
        try await Database(path: a).documents(named: "notes").insert([
            Document(id: .string("n2"), ["title": .string("tulip bulbs")])
        ])
        #expect(await sync(a).status == 0)
        // One flipped bit in the first change set, as a server (or its disk) could do. Spaces
        // are read first, in the order push, pull and a schema re-install lock them.
        try server.psql(
            """
            SELECT FROM trove_sync.spaces WHERE false;
            UPDATE trove_sync.changes SET payload = set_byte(payload, 20, get_byte(payload, 20) # 1)
            WHERE server_sequence = 1 AND space_id = (SELECT id FROM trove_sync.spaces WHERE name = '\(space)')
            """)

        let pulled = await sync(b)
        #expect(
            pulled.status == 0 && pulled.out.contains("pulled 1"), "\(pulled.out) \(pulled.err)")
        #expect(pulled.err.contains("quarantined"), "\(pulled.err)")
        let notes = try await Database(path: b).documents(named: "notes")
        #expect(try await notes.fetch(id: "n1") == nil)
        #expect(try await notes.fetch(id: "n2")?["title"] == "tulip bulbs")

        let device = try JSONValue.parse(
            await runTrove(["sync", "status", "--db", a, "--json"]).out)["status"]?[
                "device"]
        let listed = await runTrove(["sync", "quarantine", "--db", b, "--json"])
        #expect(listed.status == 0, "\(listed.err)")
        let sets = try #require(try JSONValue.parse(listed.out)["quarantined"]?.array)
        #expect(sets.count == 1)
        #expect(
            sets.first?["serverSequence"] == .int(1) && sets.first?["deviceSequence"] == .int(1))
        #expect(sets.first?["device"] == device)
        let text = await runTrove(["sync", "status", "--db", b])
        #expect(text.out.contains("quarantined:        1"), "\(text.out)")

        let deleted = await runTrove([
            "sync", "quarantine", "--db", b, "--server", url, "--delete", "--json",
        ])
        #expect(deleted.status == 0, "\(deleted.err)")
        #expect(try JSONValue.parse(deleted.out)["deleted"] == .int(1))
        #expect(
            await runTrove(["sync", "quarantine", "--db", b]).out.contains(
                "no change set quarantined"))
        let fresh = await sync(c)
        #expect(fresh.status == 0 && !fresh.err.contains("quarantined"), "\(fresh.err)")
        #expect(try await Database(path: c).documents(named: "notes").count() == 1)
        let refused = await runTrove(["sync", "quarantine", "--db", b, "--delete"])
        #expect(refused.status == ExitCode.usage)
    }

    @Test(
        "sync without --server, without a passphrase, or of a collection with Int64 ids fails with a message"
    )
    func refusals() async throws {
        let server = try TestPostgresServer.shared()
        _ = await runTrove(["sync", "setup-server", server.adminURL])
        let directory = try TemporaryDirectory(prefix: "trove-cli-sync")
        let path = directory.path("d.trove")
        try await database(path, titles: [:])
        let noServer = await runTrove(["sync", "--space", "s", "--db", path])
        #expect(noServer.status == ExitCode.usage && noServer.err.contains("--server"))
        let url = server.adminURL
        let noPassphrase = await runTrove(["sync", "--server", url, "--space", "s", "--db", path])
        #expect(
            noPassphrase.status == ExitCode.wrongPassphrase
                && noPassphrase.err.contains("TROVE_SYNC_PASSWORD"))
        // A database that never synced has no space to read: status needs --space.
        let noSpace = await runTrove(["sync", "status", "--db", path])
        #expect(
            noSpace.status == ExitCode.usage && noSpace.err.contains("--space"), "\(noSpace.err)")
        let unknown = await runTrove(["sync", "nonsense"])
        #expect(unknown.status == ExitCode.usage)

        let counters = try await Database(path: path).documents(
            "counters", schema: DocumentSchema(id: .int64, fields: [.integer("n")]))
        try await counters.insert(Document(id: 1, ["n": 1]))
        let int64 = await runTrove(
            [
                "sync", "--server", url, "--space", "cli-\(UUID().uuidString.prefix(8))", "--db",
                path, "--collection",
                "counters",
            ],
            environment: ["TROVE_SYNC_PASSWORD": "pw"])
        #expect(int64.status == ExitCode.failure)
        #expect(int64.err.contains("Int64 ids"), "\(int64.err)")
    }

    @Test("sync --help explains syncing and lists the subcommands; each has help of its own")
    func help() async {
        let help = await runTrove(["sync", "--help"])
        #expect(help.status == 0)
        for text in [
            "--space NAME", "key check", "TROVE_SYNC_PASSWORD", "Examples:", "sslmode",
            "Subcommands:", "  setup-server ", "  status ", "  quarantine ", "  remove-device ",
        ] {
            #expect(help.out.contains(text), "\(text)")
        }
        // Only what a subcommand accepts is in its help.
        let quarantine = await runTrove(["sync", "quarantine", "--help"])
        #expect(quarantine.out.contains("--delete") && quarantine.out.contains("--forget"))
        #expect(!quarantine.out.contains("--code"))
        #expect(!help.out.contains("--delete"))
        // Options before the subcommand's name go to it.
        let status = await runTrove(["sync", "--json", "status", "--help"])
        #expect(status.out.hasPrefix("trove sync status - "))
        let unknown = await runTrove(["sync", "stauts"])
        #expect(
            unknown.status == 2 && unknown.err.contains("did you mean 'status'?"), "\(unknown.err)")
        #expect(await runTrove(["--help"]).out.contains("sync"))
    }
}
