import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// What `trove search` prints for a person and for scripts: rank, score, path · title, legs,
/// snippet, context; `--files`; an empty query refused.
@Suite("SearchOutput", .serialized)
struct SearchOutputTests {

    @Test("--files prints score and path only; with --json, source and score")
    func files() async throws {
        let f = try NotesFixture.errands()
        _ = await f.trove(["index", "."])
        let run = await f.trove(["search", "--files", "-k", "2", "tomatoes"])
        let lines = run.out.split(separator: "\n")
        #expect(lines.count == 2)
        let fields = lines[0].split(separator: "\t")
        #expect(
            fields.count == 2 && Double(fields[0]) != nil
                && fields[1] == f.path("garden/tomatoes.txt")[...])
        let json = try await f.json(["search", "--files", "-k", "2", "tomatoes"])
        #expect(results(json).first?.members?.map(\.0) == ["source", "score"])
    }

    @Test("an empty or blank query is a usage error, nothing printed on stdout")
    func emptyQuery() async throws {
        let f = try NotesFixture.errands()
        _ = await f.trove(["index", "."])
        for words in [[""], ["   "], [" ", "\t"]] {
            let run = await f.trove(["search"] + words)
            #expect(run.status == ExitCode.usage, "\(words)")
            #expect(run.out.isEmpty && run.err.contains("the query is empty"))
        }
    }

    @Test("readable output: rank, score, path · title, legs; snippet; highlight only on a terminal")
    func readableOutput() async throws {
        let f = try NotesFixture.errands()
        _ = await f.trove(["index", "."])
        let piped = await f.trove(["search", "-k", "1", "dentist", "Tuesday"])
        let lines = piped.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(piped.out)")
        #expect(lines[0].hasPrefix(" 1  0.") || lines[0].hasPrefix(" 1  1.00"), "\(lines[0])")
        #expect(lines[0].contains("dentist.md · Dentist"))
        #expect(lines[1] == "    Dentist Cleaning with Dr. Okafor on Tuesday at 8:30.")
        #expect(!piped.out.contains("\u{1B}["))
        let terminal = await runTrove(
            ["search", "-k", "1", "--db", f.database, "dentist"], directory: f.notes, terminal: true
        )
        #expect(terminal.out.contains("\u{1B}[1;33mDentist\u{1B}[0m"), "\(terminal.out)")
    }

    @Test("title: the first heading, else a short first line of a longer note")
    func title() {
        #expect(SearchOutput.title(of: "# Dentist\n\nTuesday") == "Dentist")
        #expect(SearchOutput.title(of: "Groceries\noat milk\neggs") == "Groceries")
        #expect(SearchOutput.title(of: "Just one line about the garden.") == nil)
    }
}
