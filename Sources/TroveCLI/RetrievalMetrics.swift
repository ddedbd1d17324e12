import Foundation
import Trove

/// A labelled query: its text, the id of its one right document, and its kind.
///
/// ```swift
/// let queries = try EvalQuery.load(try String(contentsOfFile: path, encoding: .utf8), path: path)
/// ```
struct EvalQuery: Sendable, Equatable {
    var id: String
    var query: String
    var answer: String
    var kind: String

    init(id: String, query: String, answer: String, kind: String) {
        self.id = id
        self.query = query
        self.answer = answer
        self.kind = kind
    }

    /// Reads a queries file: one `{"id", "query", "answer", "kind"}` object per line, each field
    /// a non-empty string, ids unique (the rules of shared/eval/score.py).
    /// - Throws: ``DocumentError/malformedLine(path:line:reason:)``.
    static func load(_ text: String, path: String) throws -> [EvalQuery] {
        var queries: [EvalQuery] = []
        var ids = Set<String>()
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        where !line.allSatisfy(\.isWhitespace) {
            let number = offset + 1
            let value: JSONValue
            do {
                value = try JSONValue.parse(String(line))
            } catch {
                throw DocumentError.malformedLine(
                    path: path, line: number, reason: "not valid JSON (\(error.reason))")
            }
            var fields: [String] = []
            for name in ["id", "query", "answer", "kind"] {
                guard let field = value[name]?.string, !field.isEmpty else {
                    throw DocumentError.malformedLine(
                        path: path, line: number,
                        reason: "field \"\(name)\" missing or not a non-empty string")
                }
                fields.append(field)
            }
            guard ids.insert(fields[0]).inserted else {
                throw DocumentError.malformedLine(
                    path: path, line: number, reason: "duplicate query id \(fields[0])")
            }
            queries.append(
                EvalQuery(id: fields[0], query: fields[1], answer: fields[2], kind: fields[3]))
        }
        if queries.isEmpty {
            throw DocumentError.malformedLine(path: path, line: 0, reason: "no queries")
        }
        return queries
    }
}

/// hit@k, MRR@10 and nDCG@10 for queries with exactly one right answer, computed exactly as
/// shared/eval/score.py does.
///
/// ```swift
/// let summary = RetrievalSummary(ranks: [1, nil, 3])
/// summary.hitsAt1    // 1
/// summary.mrr        // (1 + 1/3) / 3
/// ```
struct RetrievalSummary: Codable, Sendable, Equatable {
    /// Only the first `cutoff` entries of a ranking count.
    static let cutoff = 10

    var count: Int
    var hitsAt1: Int
    var hitsAt3: Int
    var hitsAt10: Int
    /// Mean of 1/rank, 0 for answers outside the first 10.
    var mrr: Double
    /// Mean of 1/log2(rank + 1); with one right answer the ideal DCG is 1.
    var ndcg: Double

    /// Summarises 1-based ranks of the answers (nil when not within the first 10).
    init(ranks: [Int?]) {
        count = ranks.count
        let found = ranks.compactMap { $0 }.filter { $0 <= Self.cutoff }
        hitsAt1 = found.filter { $0 <= 1 }.count
        hitsAt3 = found.filter { $0 <= 3 }.count
        hitsAt10 = found.count
        // Sum in query order, as score.py does, so the floating-point result is identical.
        var reciprocal = 0.0
        var discounted = 0.0
        for rank in found {
            reciprocal += 1.0 / Double(rank)
            discounted += 1.0 / log2(Double(rank + 1))
        }
        mrr = count > 0 ? reciprocal / Double(count) : 0
        ndcg = count > 0 ? discounted / Double(count) : 0
    }

    /// The 1-based rank of `answer` within the first 10 entries of `ranked`, or nil.
    static func rank(of answer: String, in ranked: [String]) -> Int? {
        ranked.prefix(cutoff).firstIndex(of: answer).map { $0 + 1 }
    }

    /// One row in score.py's layout: `overall   100  66/100 (0.66)  ...`.
    func row(named name: String) -> String {
        func fraction(_ hits: Int) -> String {
            let share = count > 0 ? Double(hits) / Double(count) : 0
            return pad("\(hits)/\(count) (\(String(format: "%.2f", share)))", 16)
        }
        return pad(name, 14) + " " + leftPad(String(count), 4) + "  " + fraction(hitsAt1) + " "
            + fraction(hitsAt3) + " " + fraction(hitsAt10) + " "
            + leftPad(String(format: "%.3f", mrr), 7) + " "
            + leftPad(String(format: "%.3f", ndcg), 8)
    }

    /// The header line matching ``row(named:)``.
    static var header: String {
        pad("kind", 14) + " " + leftPad("n", 4) + "  " + pad("hit@1", 16) + " " + pad("hit@3", 16)
            + " " + pad("hit@10", 16) + " " + leftPad("MRR@10", 7) + " " + leftPad("nDCG@10", 8)
    }

    /// As JSON: `{"n", "hit@1", "hit@3", "hit@10", "mrr@10", "ndcg@10"}` like score.py --json.
    enum CodingKeys: String, CodingKey {
        case count = "n"
        case hitsAt1 = "hit@1"
        case hitsAt3 = "hit@3"
        case hitsAt10 = "hit@10"
        case mrr = "mrr@10"
        case ndcg = "ndcg@10"
    }
}

/// A scored run: one ranking per query, summarised overall and per kind.
///
/// ```swift
/// let report = try RetrievalReport(queries: queries, run: ["q001": ["n060", "n017"]])
/// print(report.table, terminator: "")   // the same text score.py prints
/// ```
struct RetrievalReport: Sendable {
    /// Per-kind summaries in score.py's order: `overall`, then kinds sorted by name.
    var rows: [(name: String, summary: RetrievalSummary)]
    /// Each query's answer rank (nil: not in the first 10), in query order.
    var ranks: [(id: String, rank: Int?)]

    /// Scores `run` (query id → ranked document ids) against `queries`.
    /// - Throws: ``CLIError/failure(_:)`` when the run misses a query.
    init(queries: [EvalQuery], run: [String: [String]]) throws {
        let missing = queries.filter { run[$0.id] == nil }.map(\.id)
        guard missing.isEmpty else {
            throw CLIError.failure(
                "run misses \(missing.count) of \(queries.count) queries: "
                    + missing.prefix(20).joined(separator: ", "))
        }
        let ranked = queries.map { ($0, RetrievalSummary.rank(of: $0.answer, in: run[$0.id]!)) }
        ranks = ranked.map { ($0.0.id, $0.1) }
        var rows = [("overall", RetrievalSummary(ranks: ranked.map(\.1)))]
        // score.py: distinct kinds in first-seen order, then sorted (Python sorts by code point).
        var kinds: [String] = []
        for query in queries where !kinds.contains(query.kind) { kinds.append(query.kind) }
        kinds.sort {
            Array($0.unicodeScalars.map(\.value)).lexicographicallyPrecedes(
                $1.unicodeScalars.map(\.value))
        }
        for kind in kinds {
            rows.append(
                (kind, RetrievalSummary(ranks: ranked.filter { $0.0.kind == kind }.map(\.1))))
        }
        self.rows = rows
    }

    /// The table score.py prints: a header, `overall`, then one row per kind.
    var table: String {
        ([RetrievalSummary.header] + rows.map { $0.summary.row(named: $0.name) })
            .joined(separator: "\n") + "\n"
    }
}

/// Run files in the format of shared/eval: one `{"id": query id, "ranked": [doc ids]}` per line.
///
/// ```swift
/// try RunFile.contents(queries: queries, run: run).write(toFile: "vector.jsonl", atomically: true, encoding: .utf8)
/// ```
enum RunFile {
    /// The text of a run file for `queries` in their order.
    static func contents(queries: [EvalQuery], run: [String: [String]]) -> String {
        queries.map { query in
            // Strings and arrays of strings: encoding cannot fail.
            (try? JSONOutput.text(Line(id: query.id, ranked: run[query.id] ?? []))) ?? ""
        }.map { $0 + "\n" }.joined()
    }

    /// One line: a query's id and the document ids it ranked.
    struct Line: Codable, Equatable, Sendable {
        var id: String
        var ranked: [String]
    }
}

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

private func leftPad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}
