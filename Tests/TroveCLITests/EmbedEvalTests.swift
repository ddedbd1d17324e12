import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

@Suite("embed command")
struct EmbedCommandTests {
    @Test("--json prints one array per text with every Float exact")
    func json() async throws {
        let result = await runTrove(["embed", "--json", "buy oat milk", "dentist on tuesday"])
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 2)
        let embedder = HashingEmbedder()
        for (line, text) in zip(lines, ["buy oat milk", "dentist on tuesday"]) {
            guard case .array(let numbers) = try JSONValue.parse(String(line)) else {
                Issue.record("not an array: \(line)")
                continue
            }
            let floats = numbers.map { value -> Float in
                switch value {
                case .double(let x): return Float(x)
                case .int(let x): return Float(x)
                default: return .nan
                }
            }
            #expect(floats == embedder.vector(text))
        }
    }

    @Test("stdin: one text per line, in order; plain output is space-separated numbers")
    func standardInput() async throws {
        let result = await runTrove(["embed"], stdin: "first line\nsecond line\n")
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(
            lines[1].split(separator: " ").compactMap { Float($0) }
                == HashingEmbedder().vector("second line"))
        let none = await runTrove(["embed"], stdin: "")
        #expect(none.status == ExitCode.usage)
    }
}

@Suite("eval command", .serialized)
struct EvalCommandTests {
    @Test("eval writes run files that score.py's rules score to the printed table")
    func evalRunFiles() async throws {
        let directory = try TemporaryDirectory()
        let docs = [
            (#"n1"#, "Dentist appointment with Dr. Okafor on Tuesday"),
            ("n2", "Furnace filter size 16x25x1, change every three months"),
            ("n3", "Lemon tart recipe from grandma: eggs, sugar, lemons, cream"),
            ("n4", "Tomatoes: stake them at planting time, water at the base"),
        ].map { #"{"id": "\#($0.0)", "text": "\#($0.1)", "source": "laptop", "tags": ["x"]}"# }
        try (docs.joined(separator: "\n") + "\n").write(
            toFile: directory.path("notes.jsonl"), atomically: true, encoding: .utf8)
        let queries = """
            {"id": "q1", "query": "dentist tuesday", "answer": "n1", "kind": "lexical"}
            {"id": "q2", "query": "furnace filter", "answer": "n2", "kind": "lexical"}
            {"id": "q3", "query": "lemon tart", "answer": "n3", "kind": "paraphrase"}
            {"id": "q4", "query": "something unrelated entirely", "answer": "n4", "kind": "paraphrase"}
            """
        try queries.write(
            toFile: directory.path("queries.jsonl"), atomically: true, encoding: .utf8)
        let result = await runTrove(
            ["eval", "--docs", "notes.jsonl", "--queries", "queries.jsonl", "--out", "runs"],
            directory: directory.url.path)
        #expect(result.status == 0, "\(result.err)")
        let evalQueries = try EvalQuery.load(queries, path: "queries.jsonl")
        for mode in ["text", "vector", "hybrid"] {
            #expect(result.out.contains("== \(mode)"))
            let text = try String(
                contentsOfFile: directory.path("runs/\(mode).jsonl"), encoding: .utf8)
            var run: [String: [String]] = [:]
            for line in text.split(separator: "\n") {
                let value = try JSONValue.parse(String(line))
                guard let id = value["id"]?.string, case .array(let ranked)? = value["ranked"]
                else {
                    Issue.record("bad run line \(line)")
                    continue
                }
                let ids = ranked.compactMap(\.string)
                #expect(ids.count <= 10 && Set(ids).count == ids.count)
                run[id] = ids
            }
            #expect(run.count == 4)
            #expect(run["q1"]?.first == "n1")
            #expect(run["q2"]?.first == "n2")
            // The printed table is the table of the written run file.
            let table = try RetrievalReport(queries: evalQueries, run: run).table
            #expect(result.out.contains(table))
        }
        #expect(result.out.contains("4 documents (4 chunks), 4 queries"))
    }

    @Test("eval --json reports every mode; missing files are errors")
    func evalJSON() async throws {
        let directory = try TemporaryDirectory()
        try #"{"id": "a", "text": "alpha beta"}"#.write(
            toFile: directory.path("d.jsonl"), atomically: true, encoding: .utf8)
        try #"{"id": "q", "query": "alpha", "answer": "a", "kind": "k"}"#.write(
            toFile: directory.path("q.jsonl"), atomically: true, encoding: .utf8)
        let result = await runTrove(
            ["eval", "--json", "--docs", "d.jsonl", "--queries", "q.jsonl"],
            directory: directory.url.path)
        #expect(result.status == 0)
        let document = try JSONValue.parse(result.out)
        for mode in ["text", "vector", "hybrid"] {
            #expect(document["modes"]?[mode]?["overall"]?["hit@1"] == .int(1))
            #expect(document["modes"]?[mode]?["k"]?["n"] == .int(1))
        }
        let missing = await runTrove(
            ["eval", "--docs", "nope.jsonl", "--queries", "q.jsonl"], directory: directory.url.path)
        #expect(missing.status == ExitCode.notFound)
        let noArgs = await runTrove(["eval"], directory: directory.url.path)
        #expect(noArgs.status == ExitCode.usage)
    }
}
