import Foundation
import Testing
import TroveTestSupport

@testable import TroveCLI

/// `trove get` and `trove multi-get`: paths, short ids, record ids, line ranges, globs and budgets.
@Suite("get and multi-get")
struct GetCommandTests {
    static let dentist =
        "# Dentist\nCleaning with Dr. Okafor on Tuesday at 8:30.\nBring the insurance card.\nPark on Elm Street.\n"

    func indexed() async throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("dentist.md", Self.dentist)
        try fixture.write(
            "garden/tomatoes.md", "Stake the tomatoes when planting.\nWater at the base.\n")
        try fixture.write("journal/2025-05-01.md", "Walked to the lake.\n")
        try fixture.write("furnace.txt", "Furnace filter 16x25x1.\n")
        try fixture.write(
            "phone.jsonl",
            #"{"id": "p1", "text": "Plumber Yusuf fixes leaking pipes", "source": "phone"}"# + "\n"
                + #"{"id": "p2", "text": "Parcel pickup code 4471", "source": "phone"}"# + "\n")
        let index = await fixture.trove(["index", "--quiet", "."])
        #expect(index.status == 0, "\(index.err)")
        return fixture
    }

    @Test("a whole note by path, by the short id search shows, and by record id")
    func wholeNote() async throws {
        let fixture = try await indexed()
        let byPath = await fixture.trove(["get", "dentist.md"])
        #expect(byPath.status == 0, "\(byPath.err)")
        #expect(byPath.out == Self.dentist)

        let search = try await fixture.json(["search", "--mode", "text", "-k", "1", "insurance"])
        let hit = try #require(search["results"]?.array?.first)
        let shortID = try #require(hit["short_id"]?.string)
        #expect(shortID.count == 9 && shortID.hasPrefix("#"))
        #expect(shortID == Note.shortID(file: fixture.path("dentist.md"), documentID: nil))
        let plain = await fixture.trove(["search", "--mode", "text", "insurance"])
        #expect(plain.out.contains(shortID), "search output shows the short id")
        #expect(await fixture.trove(["get", shortID]).out == Self.dentist)
        #expect(
            await fixture.trove(["get", String(shortID.prefix(5))]).out == Self.dentist,
            "a unique start is enough")
        let id = try #require(hit["id"]?.idString)
        #expect(await fixture.trove(["get", id]).out == Self.dentist)
        #expect(await fixture.trove(["get", fixture.path("dentist.md")]).out == Self.dentist)
    }

    @Test("a range prints exactly its lines, blank last lines included (issue 42)")
    func blankLines() async throws {
        let fixture = try NotesFixture()
        try fixture.write("gaps.md", "one\ntwo\n\n\nfive\n\n")
        #expect(await fixture.trove(["index", "--quiet", "."]).status == 0)
        #expect(await fixture.trove(["get", "gaps.md", ":1-2"]).out == "one\ntwo\n")
        #expect(await fixture.trove(["get", "gaps.md", ":1-3"]).out == "one\ntwo\n\n")
        #expect(await fixture.trove(["get", "gaps.md", ":2-4"]).out == "two\n\n\n")
        #expect(await fixture.trove(["get", "gaps.md", ":3-4"]).out == "\n\n")
        #expect(await fixture.trove(["get", "gaps.md", ":3"]).out == "\n\nfive\n\n")
        #expect(await fixture.trove(["get", "gaps.md", ":6"]).out == "\n")
        // The whole note as it is on disk, its last blank line included.
        #expect(await fixture.trove(["get", "gaps.md"]).out == "one\ntwo\n\n\nfive\n\n")
        #expect(try await fixture.json(["get", "gaps.md", ":3-4"])["text"]?.string == "\n")
    }

    @Test("line ranges: :FROM-TO, :FROM to the end, TO past the end; bad ranges are usage errors")
    func ranges() async throws {
        let fixture = try await indexed()
        #expect(
            await fixture.trove(["get", "dentist.md", ":2-3"]).out
                == "Cleaning with Dr. Okafor on Tuesday at 8:30.\nBring the insurance card.\n")
        #expect(await fixture.trove(["get", "dentist.md", ":4"]).out == "Park on Elm Street.\n")
        #expect(
            await fixture.trove(["get", "dentist.md", ":3-99"]).out
                == "Bring the insurance card.\nPark on Elm Street.\n")
        let json = try await fixture.json(["get", "dentist.md", ":2-2"])
        #expect(json["text"]?.string == "Cleaning with Dr. Okafor on Tuesday at 8:30.")
        #expect(json["lines"] == .int(4))
        #expect(json["from_line"] == .int(2) && json["to_line"] == .int(2))
        #expect(json["origin"]?.string == "file")
        #expect(json["collections"]?.array?.compactMap { $0["name"]?.string } == ["default"])
        for bad in [":0", ":5", ":3-2", ":x", "2-"] {
            let result = await fixture.trove(["get", "dentist.md", bad])
            #expect(result.status == ExitCode.usage, "\(bad): \(result.err)")
            #expect(result.out.isEmpty)
        }
    }

    @Test(
        "a .jsonl document by FILE#ID; unknown notes are not found; a bad short id is a usage error"
    )
    func documentsAndMisses() async throws {
        let fixture = try await indexed()
        let document = try await fixture.json(["get", "phone.jsonl#p2"])
        #expect(document["text"]?.string == "Parcel pickup code 4471")
        #expect(document["origin"]?.string == "index")
        #expect(await fixture.trove(["get", "nowhere.md"]).status == ExitCode.notFound)
        #expect(await fixture.trove(["get", "#ffffffff"]).status == ExitCode.notFound)
        #expect(await fixture.trove(["get", "#zz"]).status == ExitCode.usage)
        #expect(await fixture.trove(["get", "999999"]).status == ExitCode.notFound)
    }

    @Test(
        "multi-get: a glob in path order, the budget cuts one note at a line end and leaves the rest out"
    )
    func multiGet() async throws {
        let fixture = try await indexed()
        let all = await fixture.trove(["multi-get", "*.md"])
        #expect(all.status == 0, "\(all.err)")
        let headers = all.out.split(separator: "\n").filter { $0.hasPrefix("==> ") }
        #expect(headers.count == 3)
        #expect(headers[0].hasPrefix("==> dentist.md #"))
        #expect(headers[1].hasPrefix("==> garden/tomatoes.md #"))
        #expect(all.err.isEmpty)
        #expect(try await fixture.json(["multi-get", "journal/*.md"])["notes"]?.array?.count == 1)
        #expect(
            try await fixture.json(["multi-get", "**/tomatoes.md", "furnace.txt"])["notes"]?.array?
                .count == 2)

        // A budget of dentist.md (101 bytes) and 34 holds it and the first line of tomatoes.md.
        let budget = Self.dentist.utf8.count + 34
        let cut = try await fixture.json(["multi-get", "--max-bytes", String(budget), "*.md"])
        let notes = try #require(cut["notes"]?.array)
        #expect(notes.count == 2)
        #expect(notes[0]["cut"] == .bool(false))
        #expect(notes[1]["cut"] == .bool(true))
        #expect(notes[1]["text"]?.string == "Stake the tomatoes when planting.\n")
        #expect(cut["left_out"]?.array?.count == 1)
        if case .int(let bytes)? = cut["bytes"] {
            #expect(bytes <= budget)
        } else {
            Issue.record("no bytes")
        }
        let text = await fixture.trove(["multi-get", "--max-bytes", String(budget), "*.md"])
        #expect(text.err.contains("garden/tomatoes.md was cut to 34 of 53 bytes"))
        #expect(
            text.err.contains(
                "left out 1 note over the --max-bytes \(budget) budget: journal/2025-05-01.md"))

        #expect(await fixture.trove(["multi-get", "*.pdf"]).status == ExitCode.notFound)
        #expect(
            await fixture.trove(["multi-get", "--max-bytes", "0", "*.md"]).status == ExitCode.usage)
    }

    @Test("note patterns: * within a folder, ** across, ?, sets, absolute and relative")
    func globs() throws {
        func glob(_ pattern: String) throws -> NotePattern {
            try NotePattern(
                pattern, environment: ["HOME": "/home/ana"], currentDirectory: "/home/ana/notes")
        }
        #expect(try glob("*.md").matches("/home/ana/notes/a.md"))
        #expect(
            try glob("*.md").matches("/home/ana/notes/deep/b.md"),
            "a relative glob matches the end of a path")
        #expect(try !glob("*.md").matches("/home/ana/notes/a.txt"))
        #expect(try glob("journal/2025-0?-*.md").matches("/x/journal/2025-05-01.md"))
        #expect(try !glob("journal/*.md").matches("/x/journal/old/2019.md"))
        #expect(try glob("journal/**/*.md").matches("/x/journal/old/2019.md"))
        #expect(try glob("journal/**/*.md").matches("/x/journal/2019.md"))
        #expect(try glob("~/notes/[ab].md").matches("/home/ana/notes/b.md"))
        #expect(try !glob("/tmp/*.md").matches("/home/ana/notes/a.md"))
        #expect(
            try !glob("notes.md").matches("/home/ana/mynotes.md"),
            "tails start at a folder boundary")
    }

    @Test("--help of every new command has examples")
    func help() async {
        for command in ["get", "multi-get", "mcp", "model"] {
            let result = await runTrove([command, "--help"])
            #expect(result.status == 0)
            #expect(result.out.contains("Examples:\n  "), "\(command)")
            #expect(
                result.out.contains("trove \(command) "), "\(command): the examples run the command"
            )
        }
        let overview = await runTrove(["--help"])
        #expect(
            !overview.out.contains("scripts/"), "trove --help points at the tool, not at scripts")
        #expect(overview.out.contains("trove model install all-MiniLM-L6-v2"))
    }
}
