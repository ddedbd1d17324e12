import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// `trove backup`, `trove dump` and `trove load`: results, refusals and exit statuses.
@Suite("CLI: backup, dump, load", .serialized)
struct AdminCLITests {
    func indexed() async throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("a.md", "Apples and pears from the market.")
        try fixture.write("b.txt", "Bicycle repair on Saturday.")
        try fixture.write("c.md", "The dentist moved to Tuesday at 10.")
        let indexed = await fixture.trove(["index", "."])
        #expect(indexed.status == 0, "\(indexed.err)")
        return fixture
    }

    func run(_ arguments: [String], in fixture: NotesFixture) async -> RunResult {
        await runTrove(arguments, directory: fixture.notes)
    }

    @Test("backup writes a copy that opens; an existing target exits 7 unless --overwrite")
    func backup() async throws {
        let fixture = try await indexed()
        let target = fixture.directory.path("copy.sqlite")
        let first = await fixture.trove(["backup", target])
        #expect(first.status == 0, "\(first.err)")
        #expect(first.out.hasPrefix("backed up "))
        let stats = try JSONValue.parse(
            await run(["stats", "--json", "--db", target], in: fixture).out)
        #expect(stats["records"] == .int(3))
        let again = await fixture.trove(["backup", target])
        #expect(again.status == ExitCode.targetExists)
        #expect(again.err.contains("--overwrite"))
        #expect(await fixture.trove(["backup", "--overwrite", target]).status == 0)
        let missing = await runTrove([
            "backup", target, "--db", fixture.directory.path("none.sqlite"),
        ])
        #expect(missing.status == ExitCode.notFound)
    }

    @Test("dump, load into a new database, dump again: the same bytes; the loaded notes search")
    func dumpAndLoad() async throws {
        let fixture = try await indexed()
        let file = fixture.directory.path("notes.trove-dump")
        let dumped = await fixture.trove(["dump", file])
        #expect(dumped.status == 0, "\(dumped.err)")
        let restored = fixture.directory.path("restored/trove.sqlite")
        let loaded = await run(["load", "--db", restored, file], in: fixture)
        #expect(loaded.status == 0, "\(loaded.err)")
        #expect(loaded.out.contains("verified"))
        let again = await run(["dump", "-", "--db", restored], in: fixture)
        #expect(again.status == 0)
        #expect(again.out == (try String(contentsOfFile: file, encoding: .utf8)))
        let search = await run(
            ["search", "--mode", "text", "--db", restored, "dentist"], in: fixture)
        #expect(search.status == 0 && search.out.contains("c.md"), "\(search.out)")
        // The file hashes came along: re-indexing the same notes changes nothing.
        let reindex = await runTrove(
            ["index", "--json", ".", "--db", restored], directory: fixture.notes)
        #expect(reindex.status == 0, "\(reindex.err)")
        #expect(try JSONValue.parse(reindex.out)["unchanged"] == .int(3), "\(reindex.out)")
    }

    @Test("load refuses a database that is not empty (7) and a damaged dump (8), loading nothing")
    func loadRefusals() async throws {
        let fixture = try await indexed()
        let file = fixture.directory.path("notes.trove-dump")
        #expect(await fixture.trove(["dump", file]).status == 0)
        let busy = await fixture.trove(["load", file])
        #expect(busy.status == ExitCode.targetExists)
        #expect(busy.err.contains("is not empty"))

        let text = try String(contentsOfFile: file, encoding: .utf8)
        let damaged = fixture.directory.path("damaged.trove-dump")
        try Data(text.utf8.dropLast(40)).write(to: URL(fileURLWithPath: damaged))
        let target = fixture.directory.path("new.sqlite")
        let bad = await run(["load", "--db", target, damaged], in: fixture)
        #expect(bad.status == ExitCode.invalidDump)
        #expect(bad.err.contains("nothing was loaded"))
        let database = try Database(path: target)
        #expect(try await database.collectionNames().isEmpty)
        #expect(
            await run(["load", "--db", target, fixture.directory.path("nope.dump")], in: fixture)
                .status
                == ExitCode.notFound)
        #expect(
            await run(["load", "--db", target, "--rename", "notes", file], in: fixture).status
                == ExitCode.usage)
    }

    @Test("load --rename puts a collection under a new name")
    func rename() async throws {
        let fixture = try await indexed()
        let file = fixture.directory.path("notes.trove-dump")
        #expect(await fixture.trove(["dump", file]).status == 0)
        let target = fixture.directory.path("renamed.sqlite")
        let loaded = await run(
            ["load", "--json", "--db", target, "--rename", "notes=archive", file], in: fixture)
        #expect(loaded.status == 0, "\(loaded.err)")
        let report = try JSONValue.parse(loaded.out)
        #expect(report["records"]?["archive"] == .int(3))
        // The collections' synced definitions travel in the dump too, under their own name.
        #expect(
            try await Database(path: target).collectionNames()
                == ["archive", Notebook.definitionsName])
    }

    @Test("help lists the commands and their exit statuses")
    func help() async throws {
        let overview = await runTrove(["--help"])
        for command in ["backup", "dump", "load"] {
            #expect(overview.out.contains("  \(command) "))
        }
        #expect(overview.out.contains("7 target exists"))
        let dump = await runTrove(["dump", "--help"])
        #expect(dump.status == 0 && dump.out.contains("Usage: trove dump [options] FILE"))
        #expect(await runTrove(["load", "--help"]).out.contains("--rename-field C.OLD=NEW"))
        #expect(await runTrove(["backup"]).status == ExitCode.usage)
    }
}
