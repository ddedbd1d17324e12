import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// `trove sync setup-server`, `trove sync --server --space` and `trove sync status` against a real
/// PostgreSQL server (started once for this test process).
@Suite("CLI: sync", .serialized)
struct SyncCLITests {
    static let schema = DocumentSchema(id: .string, fields: [.text("title")], fullText: FullTextDefinition(fields: ["title"]))

    /// A database file with a `notes` document collection (String ids) holding `titles`.
    func database(_ path: String, titles: [String: String]) async throws {
        let database = try Database(path: path)
        let notes = try await database.documents("notes", schema: Self.schema)
        try await notes.insert(titles.map { Document(id: .string($0.key), ["title": .string($0.value)]) })
    }

    @Test("setup-server installs the schema (twice: idempotent); two databases sync a note; status agrees with the server")
    func syncThroughTheServer() async throws {
        let server = try TestPostgresServer.shared()
        for _ in 0..<2 {
            let setup = await runTrove(["sync", "setup-server", server.adminURL])
            #expect(setup.status == 0, "\(setup.err)")
            #expect(setup.out.contains("installed Trove's sync schema (version 1)"))
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

        let pushed = await runTrove(["sync", "--server", url, "--space", space, "--db", a], environment: environment)
        #expect(pushed.status == 0, "\(pushed.err)")
        #expect(pushed.out.hasPrefix("pushed 1 change set, pulled 0"), "\(pushed.out)")
        let pulled = await runTrove(["sync", "--server", url, "--space", space, "--db", b], environment: environment)
        #expect(pulled.status == 0, "\(pulled.err)")
        #expect(pulled.out.contains("pulled 1"), "\(pulled.out)")
        let notes = try await Database(path: b).documents(named: "notes")
        #expect(try await notes.search(Query().matching(.typed("harbour ferry"))).map(\.document.id) == ["n1"])

        let status = await runTrove(["sync", "status", "--space", space, "--server", url, "--db", b, "--json"])
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
            ["sync", "--server", url, "--space", space, "--db", c], environment: ["TROVE_SYNC_PASSWORD": "wrong"])
        #expect(wrong.status == ExitCode.wrongPassphrase, "\(wrong.err)")
        #expect(try await Database(path: c).documents(named: "notes").count() == 0)
    }

    @Test("sync without --server, without a passphrase, or of a collection with Int64 ids fails with a message")
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
        #expect(noPassphrase.status == ExitCode.wrongPassphrase && noPassphrase.err.contains("TROVE_SYNC_PASSWORD"))
        let unknown = await runTrove(["sync", "nonsense"])
        #expect(unknown.status == ExitCode.usage)

        let counters = try await Database(path: path).documents(
            "counters", schema: DocumentSchema(id: .int64, fields: [.integer("n")]))
        try await counters.insert(Document(id: 1, ["n": 1]))
        let int64 = await runTrove(
            ["sync", "--server", url, "--space", "cli-\(UUID().uuidString.prefix(8))", "--db", path, "--collection", "counters"],
            environment: ["TROVE_SYNC_PASSWORD": "pw"])
        #expect(int64.status == ExitCode.failure)
        #expect(int64.err.contains("Int64 ids"), "\(int64.err)")
    }

    @Test("sync --help explains the three forms with examples")
    func help() async {
        let help = await runTrove(["sync", "--help"])
        #expect(help.status == 0)
        for text in ["setup-server URL", "--space NAME", "status", "TROVE_SYNC_PASSWORD", "Examples:", "sslmode"] {
            #expect(help.out.contains(text), "\(text)")
        }
        #expect(await runTrove(["--help"]).out.contains("sync"))
    }
}
