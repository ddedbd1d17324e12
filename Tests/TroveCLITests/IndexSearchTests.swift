import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// The `index` → `search` loop on temporary folders, with the hashing embedder.
@Suite("IndexCommand and SearchCommand", .serialized)
struct IndexSearchTests {
    func sampleFixture() throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("dentist.md", "# Dentist\n\nCleaning with Dr. Okafor on Tuesday at 8:30.")
        try fixture.write(
            "garden/tomatoes.txt", "Stake the tomatoes when planting. Water at the base.")
        try fixture.write("work/standup.md", "Standup: freeze the release branch Thursday noon.")
        try fixture.write(
            "phone.jsonl",
            #"{"id": "p1", "text": "Plumber Yusuf fixes leaking pipes", "source": "phone", "metadata": {"tag": "home"}}"#
                + "\n" + #"{"id": "p2", "text": "Parcel pickup code 4471", "source": "phone"}"#
                + "\n")
        try fixture.write(".hidden.md", "secret tomatoes")
        return fixture
    }

    @Test("index then search finds each note by its words, in every mode")
    func roundTrip() async throws {
        let fixture = try sampleFixture()
        let index = await fixture.trove(["index", "."])
        #expect(index.status == 0, "\(index.err)")
        #expect(
            index.err.contains(
                "indexed 4 files: 4 added, 0 updated, 0 removed, 0 unchanged (5 chunks)"))
        for mode in ["hybrid", "vector", "text"] {
            let found = try await fixture.json([
                "search", "--mode", mode, "-k", "2", "tomatoes", "planting",
            ])
            let top = results(found).first
            #expect(top?["source"]?.string == fixture.path("garden/tomatoes.txt"), "mode \(mode)")
        }
        let byPipe = try await fixture.json(["search", "leaking", "pipes"])
        #expect(results(byPipe).first?["source"]?.string == "phone")
        #expect(results(byPipe).first?["metadata"]?["doc_id"]?.string == "p1")
        #expect(results(byPipe).first?["metadata"]?["tag"]?.string == "home")
        // Hidden files are not indexed.
        let hidden = try await fixture.json(["search", "--mode", "text", "secret"])
        #expect(results(hidden).isEmpty)
    }

    @Test("pretty output: rank, score, source and highlighted snippet, no color off a terminal")
    func prettyOutput() async throws {
        let fixture = try sampleFixture()
        _ = await fixture.trove(["index", "."])
        let result = await fixture.trove(["search", "-k", "1", "tomatoes"])
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix(" 1  "))
        #expect(lines[0].contains("garden/tomatoes.txt"))
        #expect(lines[0].contains("[meaning #1, words #1]"))
        #expect(lines[1] == "    Stake the tomatoes when planting. Water at the base.")
        #expect(!result.out.contains("\u{1B}["))
    }

    @Test("--json schema: query, mode, k and results with ids, scores and per-leg ranks")
    func jsonSchema() async throws {
        let fixture = try sampleFixture()
        _ = await fixture.trove(["index", "."])
        for mode in ["hybrid", "vector", "text"] {
            let document = try await fixture.json(["search", "--mode", mode, "-k", "3", "tomatoes"])
            #expect(document["query"] == .string("tomatoes"))
            #expect(document["mode"] == .string(mode))
            #expect(document["k"] == .int(3))
            let hits = results(document)
            #expect(!hits.isEmpty && hits.count <= 3)
            for (index, hit) in hits.enumerated() {
                #expect(hit["rank"] == .int(Int64(index + 1)))
                guard case .string(let id)? = hit["id"], UUID(uuidString: id) != nil else {
                    Issue.record("id missing: \(hit.serialized())")
                    continue
                }
                guard case .double? = hit["score"] else {
                    Issue.record("score missing")
                    continue
                }
                #expect(hit["source"]?.string != nil)
                #expect(hit["content"]?.string != nil)
                #expect(hit["metadata"]?["file"]?.string != nil)
                for leg in ["vector_rank", "text_rank", "distance", "bm25"] {
                    #expect(hit[leg] != nil, "\(leg)")
                }
            }
            let top = hits[0]
            switch mode {
            case "vector": #expect(top["vector_rank"] == .int(1))
            case "text": #expect(top["text_rank"] == .int(1))
            default:
                #expect(top["vector_rank"] != .null || top["text_rank"] != .null)
            }
        }
    }

    @Test("filters: --source (relative or absolute) and --where with typed --bind values")
    func filters() async throws {
        let fixture = try sampleFixture()
        _ = await fixture.trove(["index", "."])
        let bySource = try await fixture.json([
            "search", "--source", "dentist.md", "-k", "5", "tomatoes",
        ])
        #expect(results(bySource).count == 1)
        #expect(results(bySource).first?["source"]?.string == fixture.path("dentist.md"))
        let byTag = try await fixture.json([
            "search", "--where", "json_extract(metadata, '$.tag') = ?", "--bind", "home", "-k", "5",
            "code",
        ])
        #expect(results(byTag).map { $0["metadata"]?["doc_id"]?.string } == ["p1"])
        let byChunk = try await fixture.json([
            "search", "--where", "json_extract(metadata, '$.chunk') = ?", "--bind", "0", "-k", "10",
            "x",
        ])
        #expect(results(byChunk).count == 5)
        #expect(SearchCommand.bindValue("0") == .integer(0))
        #expect(SearchCommand.bindValue("2.5") == .real(2.5))
        #expect(SearchCommand.bindValue("nan") == .text("nan"))
        #expect(SearchCommand.countPlaceholders("a = ? AND b = '?' AND c = ?") == 2)
    }

    @Test("incremental: unchanged files skipped, changed replaced, deleted removed")
    func incremental() async throws {
        let fixture = try sampleFixture()
        let first = try await fixture.json(["index", "."])
        #expect(first["added"] == .int(4))
        let again = try await fixture.json(["index", "."])
        #expect(again["unchanged"] == .int(4))
        #expect(again["added"] == .int(0))
        #expect(again["chunks"] == .int(0))

        try fixture.write("dentist.md", "# Dentist\n\nMoved to Thursday, bring the insurance card.")
        try FileManager.default.removeItem(atPath: fixture.path("work/standup.md"))
        try fixture.write("new.txt", "Buy oat milk and bananas.")
        let changed = try await fixture.json(["index", "."])
        #expect(changed["added"] == .int(1))
        #expect(changed["updated"] == .int(1))
        #expect(changed["removed"] == .int(1))
        #expect(changed["unchanged"] == .int(2))

        let stats = try await fixture.json(["stats"])
        #expect(stats["records"] == .int(5))  // dentist, tomatoes, p1, p2, new
        #expect(stats["files"] == .int(4))
        let old = try await fixture.json(["search", "--mode", "text", "Okafor"])
        #expect(results(old).isEmpty)
        let new = try await fixture.json(["search", "--mode", "text", "insurance"])
        #expect(results(new).first?["source"]?.string == fixture.path("dentist.md"))
        let gone = try await fixture.json(["search", "--mode", "text", "freeze"])
        #expect(results(gone).isEmpty)
        let vectorGone = try await fixture.json([
            "search", "--mode", "vector", "-k", "10", "freeze release",
        ])
        #expect(
            !results(vectorGone).contains {
                $0["source"]?.string == fixture.path("work/standup.md")
            })
    }

    @Test("indexing one file does not remove files indexed from elsewhere")
    func separateRoots() async throws {
        let fixture = try sampleFixture()
        _ = await fixture.trove(["index", "garden"])
        let other = try await fixture.json(["index", "dentist.md"])
        #expect(other["removed"] == .int(0))
        #expect(try await fixture.json(["stats"])["records"] == .int(2))
    }

    @Test("long documents are chunked; each chunk keeps its file and position")
    func chunking() async throws {
        let fixture = try NotesFixture()
        let paragraphs = (1...12).map { index in
            "Paragraph \(index) talks about topic\(index) with several more words to fill the line nicely."
        }
        try fixture.write("long.md", paragraphs.joined(separator: "\n\n"))
        let index = try await fixture.json(["index", "--chunk-tokens", "40", "long.md"])
        guard case .int(let chunks)? = index["chunks"] else {
            Issue.record("no chunk count")
            return
        }
        #expect(chunks >= 6)
        let hit = results(try await fixture.json(["search", "--mode", "text", "topic11"])).first
        #expect(hit?["metadata"]?["file"]?.string == fixture.path("long.md"))
        #expect(hit?["metadata"]?["chunks"] == .int(chunks))
        #expect(hit?["content"]?.string?.contains("Paragraph 11") == true)
        #expect(hit?["content"]?.string?.contains("Paragraph 1 ") == false)
    }

    @Test("show, rm by id and by source, stats")
    func showRemoveStats() async throws {
        let fixture = try sampleFixture()
        _ = await fixture.trove(["index", "."])
        let hit = results(try await fixture.json(["search", "--mode", "text", "Okafor"])).first
        guard case .string(let id)? = hit?["id"] else {
            Issue.record("no hit")
            return
        }
        #expect(UUID(uuidString: id) != nil, "record ids are UUIDs")
        let shown = try await fixture.json(["show", id])
        #expect(shown["content"]?.string?.contains("Okafor") == true)
        #expect(shown["dimension"] == .int(64))
        let pretty = await fixture.trove(["show", id])
        #expect(pretty.out.hasPrefix("id:       \(id)\nsource:   \(fixture.path("dentist.md"))\n"))

        let removed = try await fixture.json(["rm", id])
        #expect(removed["removed"] == .int(1))
        #expect(await fixture.trove(["show", id]).status == ExitCode.notFound)
        // Its file's hash was forgotten, so indexing again restores it (without duplicates).
        let restored = try await fixture.json(["index", "."])
        #expect(restored["added"] == .int(1))
        #expect(try await fixture.json(["stats"])["records"] == .int(5))

        let bySource = try await fixture.json(["rm", "--source", "phone"])
        #expect(bySource["removed"] == .int(2))
        let stats = try await fixture.json(["stats"])
        #expect(stats["records"] == .int(3))
        #expect(stats["sources"] == .int(3))
        #expect(stats["model"]?["model_id"]?.string == "test/hashing-bow")
        #expect(stats["index"]?.string == "flat")
        let text = await fixture.trove(["stats"])
        #expect(text.out.contains("records   3 from 3 sources"))
    }

    @Test("the progress bar is drawn on a terminal only, and the summary is one line")
    func progressOnTerminal() async throws {
        let fixture = try sampleFixture()
        let onTerminal = await runTrove(
            ["index", "--db", fixture.database, "."], directory: fixture.notes, terminal: true)
        #expect(onTerminal.status == 0)
        #expect(onTerminal.err.contains("files"))
        #expect(onTerminal.err.contains("\r"))
        #expect(onTerminal.err.hasSuffix(" s\n"))
        let quiet = await fixture.trove(["index", "--quiet", "."])
        #expect(quiet.err.isEmpty && quiet.out.isEmpty)
    }
}

@Suite("IndexCommand on binary files", .serialized)
struct BinaryFileTests {
    @Test(
        "a .txt or .md holding binary content is skipped: no warning, not failed, exit 0, every run"
    )
    func binarySkipped() async throws {
        let fixture = try NotesFixture()
        try fixture.write("note.md", "Buy oat milk.")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0x01, 0xFF]).write(
            to: URL(fileURLWithPath: fixture.path("photo.md")))
        try Data([0xFF, 0xFE, 0x41, 0x00]).write(
            to: URL(fileURLWithPath: fixture.path("utf16.txt")))
        for _ in 0..<2 {
            let run = await fixture.trove(["index", "."])
            #expect(run.status == 0, "\(run.err)")
            #expect(!run.err.contains("warning"), "\(run.err)")
            #expect(
                run.err.contains("2 binary skipped") && !run.err.contains("failed"), "\(run.err)")
        }
        // A note that turns binary loses its records.
        try Data([0x00, 0x01]).write(to: URL(fileURLWithPath: fixture.path("note.md")))
        let json = try await fixture.json(["index", "."])
        #expect(
            json["skipped"] == .int(3) && json["removed"] == .int(1) && json["failed"] == .int(0))
    }
}

@Suite("Search collapsing", .serialized)
struct SearchCollapsingTests {
    @Test("a chunked note is listed once unless --all-chunks")
    func collapse() async throws {
        let fixture = try NotesFixture()
        let paragraphs = (1...6).map {
            "Paragraph \($0) about the garden shed and its roof and door."
        }
        try fixture.write("shed.md", paragraphs.joined(separator: "\n\n"))
        try fixture.write("other.md", "The garden hose is in the shed.")
        _ = await fixture.trove(["index", "--chunk-tokens", "30", "."])
        func sources(_ arguments: [String]) async throws -> [String] {
            let document = try await fixture.json(
                ["search", "--mode", "text", "-k", "5"] + arguments + ["garden", "shed"])
            guard case .array(let hits)? = document["results"] else { return [] }
            return hits.compactMap { $0["source"]?.string }
        }
        let collapsed = try await sources([])
        #expect(collapsed.count == 2)
        #expect(Set(collapsed) == [fixture.path("shed.md"), fixture.path("other.md")])
        let all = try await sources(["--all-chunks"])
        #expect(all.count == 5)
        #expect(all.filter { $0 == fixture.path("shed.md") }.count >= 4)
    }
}
