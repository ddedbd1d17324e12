import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport
import TroveVectors

@Suite("Vector search")
struct VectorSearchTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var metric: DistanceMetric
        var dimension: Int
        var testDescription: String { "\(metric) \(dimension)-d" }
    }

    static let cases: [Case] = DistanceMetric.allCases.flatMap { m in
        [3, 17, 64].map { Case(metric: m, dimension: $0) }
    }

    @Test("exact search equals the brute-force oracle", arguments: cases)
    func oracle(_ c: Case) async throws {
        let items = try await makeCollection(dimension: c.dimension, metric: c.metric)
        let entries = randomEntries(
            count: 300, dimension: c.dimension, seed: UInt64(c.dimension) * 31 + 7)
        try await items.insert(entries)
        var oracle = ExactOracle(metric: c.metric)
        for e in entries { oracle.upsert(id: e.id.integer, vector: e.vector) }
        var rng = SeededGenerator(seed: 99)
        for _ in 0..<10 {
            let q = rng.vector(dimension: c.dimension)
            let hits = try await items.search(vector: q, limit: 10)
            let expected = oracle.search(q, k: 10)
            #expect(hits.count == 10)
            let got = hits.map { Neighbor(id: $0.id.integer, distance: Float($0.distance!)) }
            #expect(oracle.mismatch(got, expected: expected, query: q) == nil)
            for hit in hits {
                #expect(
                    abs(hit.score - Double(c.metric.score(distance: Float(hit.distance!)))) < 1e-6)
                #expect(
                    hit.record.content == "row \(hit.id.integer) word\((hit.id.integer - 1) % 7)")
            }
            #expect(hits.map(\.vectorRank) == Array(1...10))
        }
    }

    @Test(
        "filtered search returns exactly k matching rows at 1%, 10% and 50% selectivity",
        arguments: [1, 10, 50])
    func filteredExactlyK(_ percent: Int) async throws {
        let dimension = 8
        let items = try await makeCollection(dimension: dimension, metric: .l2)
        let entries = randomEntries(count: 2_000, dimension: dimension, seed: 11)
        try await items.insert(entries)
        var oracle = ExactOracle(metric: .l2)
        for e in entries { oracle.upsert(id: e.id.integer, vector: e.vector) }
        let modulus = 100 / percent
        let k = 10
        var rng = SeededGenerator(seed: 12)
        for _ in 0..<5 {
            let q = rng.vector(dimension: dimension)
            let hits = try await items.search(
                vector: q,
                where: .sql("json_extract(metadata, '$.n') % ? = 0", [.integer(Int64(modulus))]),
                limit: k)
            // metadata n = id - 1
            let expected = oracle.search(q, k: k) { ($0 - 1) % Int64(modulus) == 0 }
            #expect(hits.count == k)
            #expect(hits.allSatisfy { ($0.id.integer - 1) % Int64(modulus) == 0 })
            let got = hits.map { Neighbor(id: $0.id.integer, distance: Float($0.distance!)) }
            #expect(oracle.mismatch(got, expected: expected, query: q) == nil)
        }
    }

    @Test("source filter and SQL filter combine; fewer than k matches returns all of them")
    func sourceAndSQL() async throws {
        let items = try await makeCollection(dimension: 4)
        try await items.insert(randomEntries(count: 60, dimension: 4, seed: 13))
        let hits = try await items.search(
            vector: [1, 0, 0, 0],
            where: .source("a") && .sql("json_extract(metadata, '$.even')", []),
            limit: 50)
        // source a = i % 3 == 0; even = i % 2 == 0 -> i % 6 == 0 -> 10 rows
        #expect(hits.count == 10)
        #expect(hits.allSatisfy { $0.record.source == "a" && ($0.id.integer - 1) % 6 == 0 })
        let none = try await items.search(
            vector: [1, 0, 0, 0], where: .sql("id < 0", []), limit: 5)
        #expect(none.isEmpty)
    }

    @Test("topK up to 10,000 and beyond the row count; out-of-range topK throws")
    func largeTopK() async throws {
        let items = try await makeCollection(dimension: 2, metric: .dot, lexicalSearch: false)
        try await items.insert(randomEntries(count: 10_500, dimension: 2, seed: 14))
        let hits = try await items.search(vector: [1, 0.5], limit: 10_000)
        #expect(hits.count == 10_000)
        #expect(zip(hits, hits.dropFirst()).allSatisfy { $0.distance! <= $1.distance! })
        #expect(
            try await items.search(vector: [1, 0.5], limit: Query.maximumLimit).count == 10_500)
        for k in [0, -3, Query.maximumLimit + 1] {
            await #expect(throws: TroveError.invalidLimit(k, maximum: Query.maximumLimit)) {
                try await items.search(vector: [1, 0], limit: k)
            }
        }
    }

    @Test("query validation: dimension, NaN, infinity, zero under cosine")
    func queryValidation() async throws {
        let items = try await makeCollection(dimension: 3)
        try await items.insert(VectorEntry(id: 1, content: "x", vector: [1, 0, 0]))
        await #expect(throws: TroveError.dimensionMismatch(expected: 3, actual: 2)) {
            try await items.search(vector: [1, 0])
        }
        await #expect(throws: TroveError.dimensionMismatch(expected: 3, actual: 0)) {
            try await items.search(vector: [Float]())
        }
        for bad: [Float] in [[.nan, 0, 0], [0, .infinity, 0], [0, 0, 0]] {
            await #expect(throws: TroveError.self) { try await items.search(vector: bad) }
        }
        #expect(try await items.search(vector: [1, 0, 0]).count == 1)
    }

    @Test("a malformed or writing filter throws invalidFilter")
    func invalidFilter() async throws {
        let items = try await makeCollection(dimension: 2)
        try await items.insert(VectorEntry(id: 1, content: "x", vector: [1, 0]))
        for sql in ["nosuchcolumn = 1", "id = = 1", "1); DROP TABLE items; --"] {
            let error = await #expect(throws: TroveError.self) {
                try await items.search(
                    vector: [1, 0],
                    where: .sql(sql, []))
            }
            if case .invalidFilter? = error {
            } else {
                Issue.record("\(sql): expected invalidFilter, got \(String(describing: error))")
            }
        }
        await #expect(throws: TroveError.self) {
            try await items.search(
                vector: [1, 0],
                where: .sql("id = ?", []))
        }
        #expect(try await items.count() == 1)
    }
}
