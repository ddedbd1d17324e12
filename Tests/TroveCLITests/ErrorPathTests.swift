import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// Every error path gives a clear message on stderr, a documented non-zero status, and leaves
/// the database as it was.
@Suite("Error paths", .serialized)
struct ErrorPathTests {
    func indexedFixture() async throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("a.md", "Apples and pears from the market.")
        try fixture.write("b.txt", "Bicycle repair on Saturday.")
        let result = await fixture.trove(["index", "."])
        #expect(result.status == 0)
        return fixture
    }

    func recordCount(_ fixture: NotesFixture) async throws -> JSONValue? {
        try await fixture.json(["stats"])["records"]
    }

    @Test("a missing path: status 3, nothing written")
    func missingPath() async throws {
        let fixture = try await indexedFixture()
        try fixture.write("c.md", "Carrots.")
        let result = await fixture.trove(["index", "c.md", "nope/missing.md"])
        #expect(result.status == ExitCode.notFound)
        #expect(result.out.isEmpty)
        #expect(result.err == "trove: error: no such file or folder: nope/missing.md\n")
        #expect(try await recordCount(fixture) == .int(2))
        // No database is created by a failed first run either.
        let fresh = try NotesFixture()
        let none = await fresh.trove(["index", "missing"])
        #expect(none.status == ExitCode.notFound)
        #expect(!FileManager.default.fileExists(atPath: fresh.database))
    }

    @Test("a missing model: status 4 and the command that installs it")
    func missingModel() async throws {
        let fixture = try await indexedFixture()
        try fixture.write("c.md", "Carrots.")
        let empty = try TemporaryDirectory()
        for arguments in [["index", "c.md"], ["search", "carrots"]] {
            let result = await fixture.trove(
                arguments + ["--model", empty.url.path], services: .standard)
            #expect(result.status == ExitCode.modelMissing)
            #expect(result.err.contains("the embedding model is not installed"))
            #expect(result.err.contains("Install it with:  trove model install all-MiniLM-L6-v2"))
        }
        let embed = await runTrove(["embed", "--model", empty.url.path, "x"], services: .standard)
        #expect(embed.status == ExitCode.modelMissing)
        #expect(try await recordCount(fixture) == .int(2))
        // Text search needs no model.
        let text = await fixture.trove(
            ["search", "--mode", "text", "--model", empty.url.path, "apples"], services: .standard)
        #expect(text.status == 0)
    }

    @Test(
        "a bad --where: status 5 (or 2 for a bind count mismatch) with the reason",
        arguments: [
            (["--where", "no_such_column = 1"], ExitCode.invalidQuery, "not a valid filter"),
            (
                ["--where", "json_extract(metadata, '$.chunk' = ?", "--bind", "1"],
                ExitCode.invalidQuery,
                "not a valid filter"
            ),
            (["--where", "id = ?"], ExitCode.usage, "1 ? placeholder but 0 --bind values"),
            (["--bind", "3"], ExitCode.usage, "--bind needs a --where"),
            (["--mode", "fuzzy"], ExitCode.usage, "--mode must be hybrid, vector or text"),
            (["-k", "0"], ExitCode.usage, "-k expects a whole number"),
        ])
    func badQuery(arguments: [String], status: Int32, fragment: String) async throws {
        let fixture = try await indexedFixture()
        let result = await fixture.trove(["search"] + arguments + ["apples"])
        #expect(result.status == status)
        #expect(result.out.isEmpty)
        #expect(result.err.hasPrefix("trove: error: "))
        #expect(result.err.contains(fragment), "\(result.err)")
        #expect(try await recordCount(fixture) == .int(2))
    }

    @Test("an unreadable file: warning, status 1, its earlier records kept, the others indexed")
    func unreadableFile() async throws {
        let fixture = try await indexedFixture()
        try fixture.write("c.md", "Carrots and celery.")
        try fixture.write("a.md", "Apricots now.")
        let path = fixture.path("a.md")
        if getuid() == 0 {
            // Permissions do not stop root (and binary content is skipped, not a failure): a
            // link to a file whose read fails (EIO) stands in for one it may not read.
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.createSymbolicLink(
                atPath: path, withDestinationPath: "/proc/self/mem")
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        }
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        }
        let result = await fixture.trove(["index", "."])
        #expect(result.status == ExitCode.failure)
        #expect(result.err.contains("trove: warning: "))
        #expect(result.err.contains(path))
        #expect(result.err.contains("earlier records are kept"))
        #expect(result.err.contains("1 added, 0 updated, 0 removed, 1 unchanged, 1 failed"))
        let old = try await fixture.json(["search", "--mode", "text", "pears"])
        if case .array(let hits)? = old["results"] {
            #expect(hits.first?["source"]?.string == path)
        } else {
            Issue.record("no results")
        }
        #expect(try await recordCount(fixture) == .int(3))
    }

    /// Makes `path` (a folder of the fixture) one that indexing cannot read. Permissions do not
    /// stop root, so as root the folder is replaced by a link that loops (`sub -> sub`), which no
    /// one can follow; otherwise it loses its permissions. Returns how to undo it.
    static func makeUnreadable(folder path: String) throws -> () -> Void {
        if getuid() == 0 {
            // Outside the notes, where no walk finds it.
            let aside = (NSTemporaryDirectory() as NSString).appendingPathComponent(
                "trove-aside-\(UUID().uuidString)")
            try FileManager.default.moveItem(atPath: path, toPath: aside)
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path)
            return {
                try? FileManager.default.removeItem(atPath: path)
                try? FileManager.default.moveItem(atPath: aside, toPath: path)
            }
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o000], ofItemAtPath: path)
        return {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
    }

    @Test(
        "an unreadable subfolder: warning naming it, status 1, its earlier records kept (issue 42)")
    func unreadableFolder() async throws {
        let fixture = try await indexedFixture()
        try fixture.write("sub/c.md", "Carrots and celery.")
        #expect(await fixture.trove(["index", "."]).status == 0)
        #expect(try await recordCount(fixture) == .int(3))
        let folder = fixture.path("sub")
        let undo = try Self.makeUnreadable(folder: folder)
        defer { undo() }
        let result = await fixture.trove(["index", "."])
        #expect(result.status == ExitCode.failure)
        #expect(result.err.contains("trove: warning: cannot read \(folder)"), "\(result.err)")
        #expect(result.err.contains("earlier records are kept"), "\(result.err)")
        #expect(
            result.err.contains("0 added, 0 updated, 0 removed, 2 unchanged, 1 failed"),
            "\(result.err)")
        #expect(try await recordCount(fixture) == .int(3))
        let kept = try await fixture.json(["search", "--mode", "text", "celery"])
        #expect(results(kept).first?["source"]?.string == fixture.path("sub/c.md"))
        // Readable again: indexed as before, status 0.
        undo()
        #expect(await fixture.trove(["index", "."]).status == 0)
    }

    @Test("a malformed .jsonl line names the file and line; nothing of it is written")
    func malformedJSONLines() async throws {
        let fixture = try await indexedFixture()
        try fixture.write(
            "bad.jsonl", #"{"id": 1, "text": "fine"}"# + "\n" + #"{"id": 2, "txt": "oops"}"# + "\n")
        let result = await fixture.trove(["index", "bad.jsonl"])
        #expect(result.status == ExitCode.failure)
        #expect(result.err.contains("bad.jsonl:2: field \"text\" missing or not a string"))
        #expect(try await recordCount(fixture) == .int(2))
    }

    @Test("commands on a missing database say how to create one, and create nothing")
    func missingDatabase() async throws {
        let fixture = try NotesFixture()
        for arguments in [["search", "x"], ["show", "1"], ["rm", "1"], ["stats"]] {
            let result = await fixture.trove(arguments)
            #expect(result.status == ExitCode.notFound)
            #expect(result.err.contains("no database at \(fixture.database)"))
            #expect(result.err.contains("trove index"))
        }
        #expect(!FileManager.default.fileExists(atPath: fixture.database))
    }

    @Test("show and rm of unknown ids: status 3, nothing removed")
    func unknownIDs() async throws {
        let fixture = try await indexedFixture()
        let known = try #require(
            try await SearchCollection(named: "notes", in: Database(path: fixture.database)).fetch(
                Query().limit(1)
            ).first)
        let unknown = UUID().uuidString.lowercased()
        #expect(await fixture.trove(["show", unknown]).status == ExitCode.notFound)
        let rm = await fixture.trove(["rm", known.id.description, unknown])
        #expect(rm.status == ExitCode.notFound)
        #expect(rm.err.contains("no record with id \(unknown) (nothing was removed)"))
        #expect(try await recordCount(fixture) == .int(2))
        #expect(await fixture.trove(["rm", "--source", "nowhere"]).status == ExitCode.notFound)
        #expect(await fixture.trove(["rm", "abc"]).status == ExitCode.usage)
        #expect(await fixture.trove(["rm", "1"]).status == ExitCode.usage, "record ids are UUIDs")
        #expect(await fixture.trove(["rm"]).status == ExitCode.usage)
        #expect(await fixture.trove(["rm", "--source", "x", "1"]).status == ExitCode.usage)
        #expect(try await recordCount(fixture) == .int(2))
    }

    @Test("a database indexed with another model is refused, not mixed")
    func modelMismatch() async throws {
        let fixture = try await indexedFixture()
        try fixture.write("c.md", "Carrots.")
        let other = Services(loadEmbedder: { _ in
            HashingEmbedder(dimension: 32, modelID: "test/other")
        })
        let result = await fixture.trove(["index", "c.md"], services: other)
        #expect(result.status == ExitCode.failure)
        #expect(result.err.contains("test/hashing-bow"))
        #expect(try await recordCount(fixture) == .int(2))
    }
}

/// An embedder that fails the way a broken model would: NaN components for texts containing
/// "POISON", so the store refuses the write part-way through a batch.
struct PoisonedEmbedder: Embedder {
    let base = HashingEmbedder()
    var manifest: EmbeddingManifest { base.manifest }

    func embed(_ texts: [String]) async throws -> [[Float]] {
        texts.map { $0.contains("POISON") ? [Float](repeating: .nan, count: 64) : base.vector($0) }
    }
}

@Suite("Index atomicity", .serialized)
struct IndexAtomicityTests {
    @Test("a write failing part-way leaves every file of its batch as it was")
    func batchRollsBack() async throws {
        let fixture = try NotesFixture()
        try fixture.write("a.md", "Apples and pears.")
        try fixture.write("b.md", "Bicycle repair.")
        #expect(await fixture.trove(["index", "."]).status == 0)
        try fixture.write("a.md", "Apricots instead.")
        try fixture.write("c.md", "POISON pill.")
        let poisoned = Services(loadEmbedder: { _ in PoisonedEmbedder() })
        let failed = await fixture.trove(["index", "."], services: poisoned)
        #expect(failed.status == ExitCode.failure)
        #expect(failed.err.contains("trove: error: "))
        let stats = try await fixture.json(["stats"])
        #expect(stats["records"] == .int(2))
        #expect(stats["files"] == .int(2))
        let old = try await fixture.json(["search", "--mode", "text", "pears"])
        guard case .array(let hits)? = old["results"] else {
            Issue.record("no results")
            return
        }
        #expect(hits.count == 1)
        // The hash of a.md was not updated either, so a healthy run picks the change up.
        try fixture.write("c.md", "Carrots.")
        let healed = try await fixture.json(["index", "."])
        #expect(healed["updated"] == .int(1))
        #expect(healed["added"] == .int(1))
    }

    @Test("oversized metadata fails that file alone")
    func oversizedMetadata() async throws {
        let fixture = try NotesFixture()
        let big = String(repeating: "x", count: 20_000)
        try fixture.write("big.jsonl", #"{"id": 1, "text": "big one", "note": "\#(big)"}"# + "\n")
        try fixture.write("fine.md", "A fine note.")
        let result = await fixture.trove(["index", "."])
        #expect(result.status == ExitCode.failure)
        #expect(result.err.contains("over the limit of 16384"))
        #expect(try await fixture.json(["stats"])["records"] == .int(1))
    }
}
