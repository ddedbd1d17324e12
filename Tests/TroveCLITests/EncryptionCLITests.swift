import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// `trove` on encrypted databases: --encrypt, passphrase sources, stats, wrong passphrase.
@Suite("CLI: encryption", .serialized)
struct EncryptionCLITests {
    func run(_ fixture: NotesFixture, _ arguments: [String], _ environment: [String: String]) async
        -> RunResult
    {
        await runTrove(
            arguments + ["--db", fixture.database], environment: environment,
            directory: fixture.notes)
    }

    @Test(
        "index --encrypt with TROVE_PASSWORD; search and stats with TROVE_PASSWORD_FILE; no plaintext on disk"
    )
    func indexEncryptedAndSearch() async throws {
        let fixture = try NotesFixture()
        try fixture.write("a.md", "SENTINELCLI apples and pears from the market.")
        try fixture.write("b.txt", "Bicycle repair on Saturday.")
        let created = await run(
            fixture, ["index", "--encrypt", "."], ["TROVE_PASSWORD": "cli secret"])
        #expect(created.status == 0, "\(created.err)")
        let passwordFile = fixture.directory.path("pass.txt")
        try Data("cli secret\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        let fromFile = ["TROVE_PASSWORD_FILE": passwordFile]
        let search = await run(fixture, ["search", "--mode", "text", "--json", "apples"], fromFile)
        #expect(search.status == 0, "\(search.err)")
        #expect(search.out.contains("SENTINELCLI"))
        let stats = await run(fixture, ["stats"], fromFile)
        #expect(stats.status == 0)
        #expect(
            stats.out.contains(
                "yes, AES-256-GCM, key from passphrase by PBKDF2-HMAC-SHA512 (256000 iterations)"))
        let statsJSON = try JSONValue.parse(await run(fixture, ["stats", "--json"], fromFile).out)
        #expect(
            statsJSON["encryption"]
                == .string(
                    "AES-256-GCM, key from passphrase by PBKDF2-HMAC-SHA512 (256000 iterations)"))
        for file in [fixture.database, fixture.database + "-wal"]
        where FileManager.default.fileExists(atPath: file) {
            let data = try #require(FileManager.default.contents(atPath: file))
            #expect(data.range(of: Data("SENTINELCLI".utf8)) == nil, "plaintext in \(file)")
        }
        // Incremental re-index of the encrypted file (no --encrypt needed).
        try fixture.write("c.md", "Carrots.")
        #expect(await run(fixture, ["index", "."], fromFile).status == 0)
        #expect(await run(fixture, ["verify"], fromFile).status == 0)
    }

    @Test("a wrong or missing passphrase: its own exit status and a clear message, nothing changed")
    func wrongPassphrase() async throws {
        let fixture = try NotesFixture()
        try fixture.write("a.md", "Apples.")
        #expect(
            await run(fixture, ["index", "--encrypt", "."], ["TROVE_PASSWORD": "right"]).status == 0
        )
        let before = FileManager.default.contents(atPath: fixture.database)
        let wrong = await run(
            fixture, ["search", "--mode", "text", "apples"], ["TROVE_PASSWORD": "wrong"])
        #expect(wrong.status == ExitCode.wrongPassphrase)
        #expect(
            wrong.err
                == "trove: error: wrong passphrase for \(fixture.database) (from TROVE_PASSWORD)\n")
        #expect(!wrong.err.contains("wrong\n") && !wrong.err.contains("right"))
        let missing = await run(fixture, ["stats"], [:])
        #expect(missing.status == ExitCode.wrongPassphrase)
        #expect(missing.err.contains("set TROVE_PASSWORD_FILE or TROVE_PASSWORD"))
        #expect(FileManager.default.contents(atPath: fixture.database) == before)
        // --encrypt on an existing plaintext database is a usage error.
        let plain = try NotesFixture()
        try plain.write("a.md", "Apples.")
        #expect(await plain.trove(["index", "."]).status == 0)
        let refused = await run(plain, ["index", "--encrypt", "."], ["TROVE_PASSWORD": "x"])
        #expect(refused.status == ExitCode.usage)
        let plainStats = await plain.trove(["stats"])
        #expect(plainStats.out.contains("encrypted no"))
    }
}
