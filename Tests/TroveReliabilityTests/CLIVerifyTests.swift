import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// `trove verify` and `trove repair`, run in-process.
@Suite("trove verify / trove repair")
struct CLIVerifyTests {
    func trove(_ arguments: [String]) async -> (status: Int32, out: String, err: String) {
        let out = BufferSink()
        let err = BufferSink()
        let console = Console(
            out: out, err: err, stdoutIsTerminal: false, stderrIsTerminal: false,
            readStandardInput: { nil }, environment: ["HOME": "/nonexistent-home"],
            currentDirectory: "/")
        let status = await TroveCommandLine.run(arguments, console: console)
        return (status, out.text, err.text)
    }

    @Test("verify reports damage with status 1, repair fixes it, verify is clean again")
    func verifyRepairRoundTrip() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("cli.trove")
        do {
            let database = try Database(path: path)
            _ = try await seededCollection(database, count: 30)
        }
        let clean = await trove(["verify", "--db", path])
        #expect(clean.status == 0, "\(clean)")
        #expect(
            clean.out.contains("items  ok: 30 rows, vector index 30, text index 30"), "\(clean.out)"
        )

        do {
            let database = try Database(path: path)
            try await database.execute("DELETE FROM items_fts_docsize WHERE id = 4")
        }
        let damaged = await trove(["verify", "--db", path])
        #expect(damaged.status == 1)
        #expect(
            damaged.out.contains("text index holds 29 documents, the table 30 rows"),
            "\(damaged.out)")
        let json = await trove(["verify", "--db", path, "--json"])
        let report = try JSONDecoder().decode(VerifyReport.self, from: Data(json.out.utf8))
        #expect(!report.isHealthy && report.collections.first { $0.name == "items" }?.rows == 30)

        let repaired = await trove(["repair", "--db", path])
        #expect(repaired.status == 0, "\(repaired)")
        #expect(
            repaired.out.contains("repaired  items: rebuilt its derived indexes from the table"),
            "\(repaired.out)")
        #expect(await trove(["verify", "--db", path]).status == 0)
    }

    @Test("verify on a missing file is the not-found status, and creates nothing")
    func missingDatabase() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("missing.trove")
        let result = await trove(["verify", "--db", path])
        #expect(result.status == 3, "\(result)")
        #expect(result.err.contains("no database at"))
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(
            await trove(["help", "repair"]).out.contains("rebuild the text and vector indexes"))
    }
}
