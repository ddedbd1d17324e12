// trove-bench text --dev: the quality table on ../shared/eval/notes-dev (text, vector, hybrid,
// per query kind), before and after the text-search work, with TroveText's BM25 index (scores
// identical to FTS5's bm25()) and reference all-MiniLM-L6-v2 vectors read from .npy files.
import Foundation
@_spi(Benchmarks) import Trove

private struct DevSetError: Error, CustomStringConvertible {
    let description: String
}

private struct DevQuery {
    var text: String
    var answer: Int64
    var kind: String
}

func runTextDevEvaluation(_ arguments: [String]) throws {
    let environment = ProcessInfo.processInfo.environment
    let devDirectory = environment["TROVE_EVAL_DEV"] ?? sharedDirectory + "/eval/notes-dev"
    let vectorDirectory = environment["TROVE_EVAL_VECTORS"] ?? FileManager.default.temporaryDirectory.appendingPathComponent("fusion").path
    let notes = try readJSONLines("\(devDirectory)/notes.jsonl")
    let queries: [DevQuery] = try readJSONLines("\(devDirectory)/queries.jsonl").map {
        guard let text = $0["query"] as? String, let answer = $0["answer"] as? String, let kind = $0["kind"] as? String,
              let number = Int64(answer.dropFirst())
        else { throw DevSetError(description: "bad query row") }
        return DevQuery(text: text, answer: number - 1, kind: kind)
    }
    let noteMatrix = try readNPY("\(vectorDirectory)/N.npy")
    let noteVectors = (0..<noteMatrix.rows).map(noteMatrix.row)
    let queryMatrix = try readNPY("\(vectorDirectory)/Q.npy")
    let queryVectors = (0..<queryMatrix.rows).map(queryMatrix.row)
    guard noteVectors.count == notes.count, queryVectors.count == queries.count else {
        throw DevSetError(description: "vectors do not match the dev set (\(noteVectors.count) notes, \(queryVectors.count) queries)")
    }
    let texts = notes.map { ($0["text"] as? String) ?? "" }

    print("trove-bench text --dev: \(devDirectory) (\(notes.count) notes, \(queries.count) queries)")
    print("vectors: all-MiniLM-L6-v2 (sentence-transformers reference, unit length) from \(vectorDirectory)/N.npy, Q.npy")
    print("text leg: TroveText BM25Index (k1 1.2, b 0.75; scores equal FTS5 bm25()); legs fused from their top 50\n")

    // Vector leg: exact cosine (dot product of unit vectors), top 50.
    let vectorRuns: [[Int64]] = queryVectors.map { q in
        let scores = noteVectors.enumerated().map { (Int64($0.offset), zip($0.element, q).reduce(Float(0)) { $0 + $1.0 * $1.1 }) }
        return scores.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }.prefix(50).map(\.0)
    }
    let vectorCosines: [[Float]] = queryVectors.map { q in
        noteVectors.map { zip($0, q).reduce(Float(0)) { $0 + $1.0 * $1.1 } }
    }

    func textRuns(_ configuration: TokenizerConfiguration, stopwords: Set<String>) -> [[BM25Hit]] {
        var index = BM25Index(tokenizer: Tokenizer(configuration))
        for (row, text) in texts.enumerated() { index.add(id: Int64(row), text: text) }
        return queries.map { index.search(TypedQuery($0.text, tokenizer: index.tokenizer, stopwords: stopwords), topK: 50) }
    }

    let kinds = ["overall", "lexical", "paraphrase", "single-word", "multilingual"]
    func cells(_ runs: [[Int64]]) -> String {
        kinds.map { kind in
            var counts = (0, 0, 0, 0)
            for (query, run) in zip(queries, runs) where kind == "overall" || query.kind == kind {
                counts.0 += 1
                guard let position = run.prefix(10).firstIndex(of: query.answer) else { continue }
                if position < 1 { counts.1 += 1 }
                if position < 3 { counts.2 += 1 }
                counts.3 += 1
            }
            return "\(counts.1)/\(counts.2)/\(counts.3)"
        }.joined(separator: " | ")
    }
    let counts = kinds.map { kind in queries.filter { kind == "overall" || $0.kind == kind }.count }
    print("| run | " + zip(kinds, counts).map { "\($0) (\($1))" }.joined(separator: " | ") + " |")
    print("|---|" + String(repeating: "---|", count: kinds.count))
    func line(_ name: String, _ runs: [[Int64]]) { print("| \(name) | \(cells(runs)) |") }

    // Before: the store's first text leg — FTS5 unicode61 remove_diacritics 2, every word OR-ed.
    let before = textRuns(.unicode, stopwords: [])
    // After: Porter stemming and the English stop-word list; and the CJK bigram tokenizer.
    let english = textRuns(.english, stopwords: Stopwords.english)
    let cjk = textRuns(.cjk, stopwords: Stopwords.english)
    line("vector (exact cosine)", vectorRuns)
    line("text before: unicode61, all words", before.map { $0.map(\.id) })
    line("text after: porter unicode61, stop words dropped", english.map { $0.map(\.id) })
    line("text after: cjk bigrams + porter, stop words dropped", cjk.map { $0.map(\.id) })

    func rrf(_ text: [[BM25Hit]], gate: Double?, textWeight: Double = 1) -> [[Int64]] {
        zip(vectorRuns, text).map { vector, hits in
            let lexical = gate.map { RankFusion.confidentLexicalHits(hits, minimumCoverage: $0) } ?? hits
            return RankFusion.reciprocalRank([.init(ids: vector), .init(ids: lexical.map(\.id), weight: textWeight)]).map(\.id)
        }
    }
    line("hybrid before: plain RRF k=60 (text before)", rrf(before, gate: nil))
    line("hybrid: plain RRF k=60 (text after)", rrf(english, gate: nil))
    line("hybrid: RRF, lexical gate coverage >= 1/2", rrf(english, gate: 0.5))
    line("**hybrid after (default): RRF, lexical gate coverage >= 2/3**", rrf(english, gate: 2.0 / 3.0))
    line("hybrid: RRF, lexical gate coverage = 1", rrf(english, gate: 1))
    line("hybrid: RRF gate 2/3, cjk tokenizer", rrf(cjk, gate: 2.0 / 3.0))

    // Variant: coverage counted over the clauses the collection knows (document frequency > 0);
    // words no note contains cannot be explained by any note.
    do {
        var index = BM25Index(tokenizer: Tokenizer(.english))
        for (row, text) in texts.enumerated() { index.add(id: Int64(row), text: text) }
        for gate in [0.5, 2.0 / 3.0] {
            let runs: [[Int64]] = queries.indices.map { q in
                let typed = TypedQuery(queries[q].text, tokenizer: index.tokenizer)
                let known = typed.clauses.filter { $0.terms.allSatisfy { index.documentFrequency(ofTerm: $0) > 0 } }.count
                let voting = english[q].filter { known > 0 && Double($0.matchedClauses) / Double(known) + 1e-9 >= gate }
                return RankFusion.reciprocalRank([.init(ids: vectorRuns[q]), .init(ids: voting.map(\.id))]).map(\.id)
            }
            line("hybrid: RRF, gate \(gate == 0.5 ? "1/2" : "2/3") of the clauses the collection knows", runs)
        }
    }

    // Variant: the text leg's first hit also votes when its BM25 score is at least `margin`
    // times the second's (a clear winner), whatever its coverage.
    for margin in [1.5, 2.0, 3.0] {
        let runs: [[Int64]] = queries.indices.map { q in
            let hits = english[q]
            var voting = RankFusion.confidentLexicalHits(hits)
            if let first = hits.first, voting.first?.id != first.id,
               hits.count == 1 || first.score >= margin * hits[1].score {
                voting.insert(first, at: 0)
            }
            return RankFusion.reciprocalRank([.init(ids: vectorRuns[q]), .init(ids: voting.map(\.id))]).map(\.id)
        }
        line("hybrid: gate 2/3, or text rank 1 with BM25 >= \(margin)x rank 2 (rejected)", runs)
    }

    // MMR over the default hybrid's top 20 (relevance: query cosine; similarity: note cosine).
    let hybrid = rrf(english, gate: 2.0 / 3.0)
    for lambda in [0.7, 0.9] {
        let runs: [[Int64]] = queries.indices.map { q in
            let candidates = hybrid[q].prefix(20).map { (id: $0, relevance: Double(vectorCosines[q][Int($0)])) }
            return RankFusion.maximalMarginalRelevance(candidates, count: 10, lambda: lambda) { a, b in
                Double(zip(noteVectors[Int(a)], noteVectors[Int(b)]).reduce(Float(0)) { $0 + $1.0 * $1.1 })
            }
        }
        line("hybrid gate 2/3 + MMR λ=\(lambda) (top 20 → 10)", runs)
    }

    // "No good match": how a minimum vector cosine on the hybrid results behaves here.
    print("\nminimum-cosine threshold on the default hybrid's top 10 (each query's right note exists):")
    print("| min cosine | right note kept (of those in top 10) | results kept per query (mean) | queries left with no result |")
    print("|---|---|---|---|")
    for threshold: Float in [0.0, 0.1, 0.2, 0.25, 0.3, 0.4, 0.5] {
        var kept = 0, found = 0, results = 0, empty = 0
        for q in queries.indices {
            let top = hybrid[q].prefix(10)
            let passing = top.filter { vectorCosines[q][Int($0)] >= threshold }
            results += passing.count
            if passing.isEmpty { empty += 1 }
            if top.contains(queries[q].answer) {
                found += 1
                if passing.contains(queries[q].answer) { kept += 1 }
            }
        }
        print(String(format: "| %.2f | %d / %d | %.1f | %d |", threshold, kept, found,
                     Double(results) / Double(queries.count), empty))
    }
}
