import Foundation
import Testing
import TroveChildProcess
import TroveTestSupport

@testable import TroveCLI

/// A tiny hand-made labelled set. Its expected figures were printed by
/// `python3 shared/eval/score.py --queries q.jsonl --run r.jsonl --json out.json` on exactly
/// these two files; when python3 and score.py are at hand the last test runs it again.
enum TinySet {
    static let queries = """
        {"id": "a1", "query": "x", "answer": "d1", "kind": "lexical"}
        {"id": "a2", "query": "x", "answer": "d2", "kind": "paraphrase"}
        {"id": "a3", "query": "x", "answer": "d3", "kind": "lexical"}
        {"id": "a4", "query": "x", "answer": "d4", "kind": "paraphrase"}
        {"id": "a5", "query": "x", "answer": "d5", "kind": "Zeta"}
        {"id": "a6", "query": "x", "answer": "d6", "kind": "paraphrase"}
        {"id": "a7", "query": "x", "answer": "d7", "kind": "lexical"}

        """
    static let run: [String: [String]] = [
        "a1": ["d1", "d2"],
        "a2": ["d9", "d8", "d2"],
        "a3": ["d1", "d2", "d4", "d5", "d6", "d7", "d8", "d9", "d10", "d11", "d3"],
        "a4": [],
        "a5": ["d1", "d2", "d4", "d5", "d6"],
        "a6": ["d1", "d6"],
        "a7": ["d1", "d2", "d3", "d4", "d5", "d6", "d8", "d9", "d10", "d7"],
    ]
    /// score.py's stdout for this set, verbatim.
    static let table = """
        kind              n  hit@1            hit@3            hit@10            MRR@10  nDCG@10
        overall           7  1/7 (0.14)       3/7 (0.43)       5/7 (0.71)         0.312    0.407
        Zeta              1  0/1 (0.00)       0/1 (0.00)       1/1 (1.00)         0.250    0.431
        lexical           3  1/3 (0.33)       1/3 (0.33)       2/3 (0.67)         0.367    0.430
        paraphrase        3  0/3 (0.00)       2/3 (0.67)       2/3 (0.67)         0.278    0.377

        """
    /// score.py --json: (name, n, hit@1, hit@3, hit@10, mrr@10, ndcg@10).
    static let summary: [(String, Int, Int, Int, Int, Double, Double)] = [
        ("overall", 7, 1, 3, 5, 0.31190476190476185, 0.4072387339946769),
        ("Zeta", 1, 0, 0, 1, 0.25, 0.43067655807339306),
        ("lexical", 3, 1, 1, 2, 0.3666666666666667, 0.42968827543929594),
        ("paraphrase", 3, 0, 2, 2, 0.27777777777777773, 0.37697658452381916),
    ]
    static let ranks: [String: Int?] = [
        "a1": 1, "a2": 3, "a3": nil, "a4": nil, "a5": 4, "a6": 2, "a7": 10,
    ]
}

@Suite("RetrievalSummary")
struct RetrievalMetricsTests {
    @Test("figures and table agree with score.py on a tiny hand-made set")
    func agreesWithScorePy() throws {
        let queries = try EvalQuery.load(TinySet.queries, path: "q.jsonl")
        let report = try RetrievalReport(queries: queries, run: TinySet.run)
        #expect(report.table == TinySet.table)
        #expect(report.rows.count == TinySet.summary.count)
        for (row, expected) in zip(report.rows, TinySet.summary) {
            #expect(row.name == expected.0)
            #expect(row.summary.count == expected.1)
            #expect(row.summary.hitsAt1 == expected.2)
            #expect(row.summary.hitsAt3 == expected.3)
            #expect(row.summary.hitsAt10 == expected.4)
            #expect(abs(row.summary.mrr - expected.5) < 1e-12)
            #expect(abs(row.summary.ndcg - expected.6) < 1e-12)
        }
        for (id, rank) in report.ranks { #expect(TinySet.ranks[id]! == rank) }
    }

    @Test("rank counts only the first 10 entries")
    func rankCutoff() {
        let ranked = (1...12).map { "d\($0)" }
        #expect(RetrievalSummary.rank(of: "d10", in: ranked) == 10)
        #expect(RetrievalSummary.rank(of: "d11", in: ranked) == nil)
        #expect(RetrievalSummary.rank(of: "x", in: []) == nil)
    }

    @Test("a run missing a query is an error")
    func missingQuery() throws {
        let queries = try EvalQuery.load(TinySet.queries, path: "q.jsonl")
        var run = TinySet.run
        run["a4"] = nil
        #expect(throws: CLIError.self) { try RetrievalReport(queries: queries, run: run) }
    }

    @Test("malformed query files are refused")
    func malformedQueries() {
        #expect(throws: DocumentError.self) {
            try EvalQuery.load(#"{"id": "q", "query": "x", "answer": "", "kind": "k"}"#, path: "q")
        }
        #expect(throws: DocumentError.self) { try EvalQuery.load("\n\n", path: "q") }
    }

    @Test("run files are one {id, ranked} object per line")
    func runFile() throws {
        let queries = try EvalQuery.load(TinySet.queries, path: "q.jsonl")
        let text = RunFile.contents(queries: queries, run: TinySet.run)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 7)
        #expect(lines[0] == #"{"id":"a1","ranked":["d1","d2"]}"#)
        #expect(lines[3] == #"{"id":"a4","ranked":[]}"#)
    }

    static var scorePy: String? {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let candidates = [
            ProcessInfo.processInfo.environment["TROVE_SCORE_PY"],
            repo.deletingLastPathComponent().appendingPathComponent("shared/eval/score.py").path,
        ].compactMap { $0 }
        let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
        return python ? candidates.first { FileManager.default.fileExists(atPath: $0) } : nil
    }

    @Test("score.py prints the same table for our run file", .enabled(if: scorePy != nil))
    func scorePyLive() throws {
        let directory = try TemporaryDirectory()
        let queries = try EvalQuery.load(TinySet.queries, path: "q.jsonl")
        try TinySet.queries.write(
            toFile: directory.path("q.jsonl"), atomically: true, encoding: .utf8)
        try RunFile.contents(queries: queries, run: TinySet.run)
            .write(toFile: directory.path("r.jsonl"), atomically: true, encoding: .utf8)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [
            Self.scorePy!, "--queries", directory.path("q.jsonl"), "--run",
            directory.path("r.jsonl"),
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(
            decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(output == (try RetrievalReport(queries: queries, run: TinySet.run)).table)
    }
}

@Suite("Snippet")
struct SnippetTests {
    let plain = Style(enabled: false)
    let color = Style(enabled: true)

    /// The highlights of a colored snippet as `[word]`, for readable expectations.
    func marked(_ snippet: String) -> String {
        snippet.replacingOccurrences(of: "\u{1B}[1;33m", with: "[").replacingOccurrences(
            of: "\u{1B}[0m", with: "]")
    }

    @Test("matched words are highlighted case- and accent-insensitively")
    func highlight() {
        #expect(
            Snippet.make(
                content: "Dentist on Tuesday at 3 pm.", query: "dentist tuesday", style: plain)
                == "Dentist on Tuesday at 3 pm.")  // plain when piped
        #expect(
            Snippet.make(
                content: "Dentist on Tuesday at 3 pm.", query: "dentist tuesday", style: color)
                == "\u{1B}[1;33mDentist\u{1B}[0m on \u{1B}[1;33mTuesday\u{1B}[0m at 3 pm.")
        #expect(
            marked(Snippet.make(content: "Café crème", query: "cafe", style: color))
                == "[Café] crème")
        #expect(
            marked(Snippet.make(content: "two dentists", query: "dentist", style: color))
                == "two [dentists]")
        // Stopwords are not highlighted unless the query has nothing else.
        #expect(
            marked(Snippet.make(content: "the cat", query: "the cat", style: color)) == "the [cat]")
        #expect(marked(Snippet.make(content: "to be", query: "to be", style: color)) == "[to] [be]")
        let colored = Snippet.make(content: "a cat", query: "cat", style: Style(enabled: true))
        #expect(colored == "a \u{1B}[1;33mcat\u{1B}[0m")
    }

    @Test("long content: a window around the matches, line breaks folded, cuts marked")
    func window() {
        let before = (1...50).map { "w\($0)" }.joined(separator: " ")
        let after = (51...100).map { "w\($0)" }.joined(separator: "\n")
        let snippet = marked(
            Snippet.make(
                content: before + " furnace service\n" + after, query: "furnace", style: color,
                wordCount: 6))
        #expect(snippet == "…w49 w50 [furnace] service w51 w52 …")
        let start = marked(
            Snippet.make(content: before, query: "nothing", style: color, wordCount: 3))
        #expect(start == "w1 w2 w3 …")
    }
}

@Suite("ProgressBar")
struct ProgressBarTests {
    @Test("the bar shows files, chunks, rate and ETA")
    func line() {
        let text = ProgressBar.line(
            files: 26, totalFiles: 50, bytes: 500, totalBytes: 1000, chunks: 300, elapsed: 10,
            width: 10)
        #expect(text == "[#####.....]  50%  26/50 files  300 chunks  30.0 chunks/s  ETA 0:10")
        let early = ProgressBar.line(
            files: 0, totalFiles: 5, bytes: 0, totalBytes: 10, chunks: 0, elapsed: 0.1, width: 4)
        #expect(early == "[....]   0%  0/5 files  0 chunks")
        #expect(ProgressBar.duration(3725) == "1:02:05")
    }

    @Test("draws only when enabled, and erases itself")
    func drawing() {
        let sink = BufferSink()
        let off = ProgressBar(sink: sink, enabled: false, totalFiles: 1, totalBytes: 1)
        off.update(files: 1, bytes: 1, chunks: 1, force: true)
        off.finish()
        #expect(sink.text.isEmpty)
        let on = ProgressBar(sink: sink, enabled: true, totalFiles: 1, totalBytes: 1)
        on.update(files: 1, bytes: 1, chunks: 1, force: true)
        on.finish()
        #expect(sink.text.hasPrefix("\r[####################] 100%"))
        #expect(sink.text.hasSuffix("\r\u{1B}[K"))
    }
}

@Suite("Snippet prefixes")
struct SnippetPrefixTests {
    @Test("a query word matches short extensions of itself only")
    func prefixes() {
        let snippet = Snippet.make(
            content: "planting database", query: "plant data", style: Style(enabled: true))
        #expect(snippet == "\u{1B}[1;33mplanting\u{1B}[0m database")
    }
}
