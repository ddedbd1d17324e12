import Foundation
import Synchronization
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// One search, one look at the change log: the legs of a search share one read transaction, each
/// in-memory index catches up once, and the filter's SQL runs once however many legs use it.
@Suite("Search scope")
struct SearchScopeTests {
    final class Counter: Sendable {
        private let calls = Mutex(0)
        func bump() { calls.withLock { $0 += 1 } }
        func reset() { calls.withLock { $0 = 0 } }
        var count: Int { calls.withLock { $0 } }
    }

    /// A collection whose filter calls `seen(id)`, a SQL function counting its calls.
    static func counted(rows: Int) async throws -> (SearchCollection, Counter) {
        let items = try await makeCollection(dimension: 4)
        var rng = SeededGenerator(seed: 61)
        var entries: [VectorEntry] = []
        for i in 1...rows {
            let fruit = i % 3 == 0 ? "pear" : "plum"
            entries.append(
                VectorEntry(
                    id: .int(Int64(i)), content: "apple note \(i) \(fruit)",
                    source: i % 2 == 0 ? "even" : "odd", vector: rng.vector(dimension: 4)))
        }
        try await items.insert(entries)
        let counter = Counter()
        try await items.database.withWriter { connection in
            try connection.registerFunction(named: "seen", argumentCount: 1) { _ in
                counter.bump()
                return 1
            }
        }
        return (items, counter)
    }

    @Test("a hybrid search evaluates its filter once for both legs and matches the legs run alone")
    func filterOnce() async throws {
        let rows = 60
        let (items, counter) = try await Self.counted(rows: rows)
        let filter: Filter = .sql("seen(id) = 1 AND source = ?", [.text("even")])
        let vector: [Float] = [0.1, 0.2, 0.3, 0.4]
        counter.reset()
        let hybrid = try await items.search(
            Query(filter).nearest(to: vector, in: "embedding").matching(.typed("pear")).limit(10))
        // The filter's SQL visits each row at most once per evaluation; one evaluation in all.
        let perEvaluation = counter.count
        #expect(perEvaluation > 0 && perEvaluation <= rows)
        counter.reset()
        _ = try await items.search(vector: vector, where: filter, limit: 10)
        #expect(counter.count == perEvaluation)
        // Each hit's rank in each leg is its rank in that leg run alone (the shared candidates
        // are the right ones): 30 even rows for the vector leg, the 10 with "pear" for the text leg.
        let vectorIDs = try await items.search(vector: vector, where: filter, limit: 30).map(\.id)
        let textIDs = try await items.search(Query(filter).matching(.typed("pear")).limit(30)).map(
            \.id)
        #expect(vectorIDs.count == 30 && textIDs.count == 10)
        #expect(hybrid.count == 10)
        for hit in hybrid {
            #expect(hit.id.integer % 2 == 0)
            if let rank = hit.vectorRank { #expect(vectorIDs[rank - 1] == hit.id) }
            if let rank = hit.textRank { #expect(textIDs[rank - 1] == hit.id) }
            #expect(hit.vectorRank != nil || hit.textRank != nil)
        }
    }

    @Test(
        "every index catches up within one search's snapshot: writes between searches are seen, none leaks"
    )
    func catchUpOncePerSearch() async throws {
        let (items, _) = try await Self.counted(rows: 20)
        let vector: [Float] = [1, 0, 0, 0]
        _ = try await items.search(
            Query().nearest(to: vector, in: "embedding").matching(.typed("apple")).limit(5))
        // Raw SQL changes a row behind the engine's back: the next search sees it in both legs.
        try await items.database.execute(
            "UPDATE items SET content = 'kiwi only', embedding = ? WHERE id = 7",
            bindings: [.blob([Float(1), 0, 0, 0].withUnsafeBytes { Array($0) })])
        let hits = try await items.search(
            Query().nearest(to: vector, in: "embedding").matching(.typed("kiwi")).limit(3))
        #expect(hits.first?.id == 7 && hits.first?.vectorRank == 1 && hits.first?.textRank == 1)
    }
}
