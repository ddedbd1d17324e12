import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// Search collections keep their flat, HNSW and BM25 indexes in one `DerivedIndexSet`: one
/// watermark, one catch-up per query; and searches of one collection share its index lock.
@Suite("Search collections: one catch-up, concurrent searches")
struct PresetConcurrencyTests {
    /// Each search waits inside (holding the index lock) until `parties` searches are inside, or
    /// until the watchdog's deadline: with an exclusive lock the first waits the whole deadline
    /// alone, and records that it never met the other.
    final class Rendezvous: @unchecked Sendable {
        // @unchecked Sendable: `arrived` and `met` are only touched under `condition`.
        private let condition = NSCondition()
        private var arrived = 0
        private var met: [Bool] = []
        let parties: Int
        let deadline: TimeInterval

        init(parties: Int, deadline: TimeInterval) {
            self.parties = parties
            self.deadline = deadline
        }

        func arrive() {
            condition.lock()
            defer { condition.unlock() }
            arrived += 1
            condition.broadcast()
            let until = Date(timeIntervalSinceNow: deadline)
            while arrived < parties, condition.wait(until: until) {}
            met.append(arrived >= parties)
        }

        var outcomes: [Bool] {
            condition.lock()
            defer { condition.unlock() }
            return met
        }
    }

    func makeItems(_ db: Database, index: IndexKind = .flat, count: Int = 300) async throws
        -> SearchCollection
    {
        let items = try await SearchCollection(
            "items", in: db, configuration: CollectionConfiguration(dimension: 8, index: index))
        try await items.insert(randomEntries(count: count, dimension: 8, seed: 21, firstID: 1))
        return items
    }

    func counters(_ db: Database) async throws -> DerivedIndexCounters {
        try await SearchCollection(named: "items", in: db).documents.store.indexes.statistics
    }

    func loaded(_ db: Database) async throws -> (flat: Bool, ann: Bool, text: Bool) {
        let indexes = try await SearchCollection(named: "items", in: db).documents.store.indexes
        let vector = indexes.vectors["embedding"]!
        return indexes.lock.read {
            (
                vector is FlatVectorIndex && vector.isLoaded,
                vector is HNSWVectorIndex && vector.isLoaded,
                indexes.text?.isLoaded ?? false
            )
        }
    }

    @Test(
        "a hybrid query catches up its vector and text indexes once, with one replay of the log",
        arguments: [IndexKind.flat, .hnsw()])
    func oneCatchUpPerHybridQuery(kind: IndexKind) async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("one.trove"))
        let items = try await makeItems(db, index: kind)
        let probe = [Float](repeating: 0.5, count: 8)
        // The first query builds both indexes in one pass over the table.
        let start = try await counters(db)
        _ = try await items.search(
            Query().nearest(to: probe, in: "embedding").matching(.typed("row")).limit(5))
        var now = try await counters(db)
        #expect(
            now.catchUps - start.catchUps == 1 && now.builds - start.builds == 1
                && now.replays == start.replays)
        // Raw SQL on the writer is not applied after its commit: the next query replays it.
        try await db.execute("UPDATE items SET content = 'zanzibar flamingo' WHERE id = 7")
        try await db.execute("DELETE FROM items WHERE id = 8")
        try await db.execute(
            "INSERT INTO items(id, content, source, embedding) VALUES (9001, 'zanzibar', 'raw', ?)",
            bindings: [.blob(VectorBlob.bytes(probe))])
        let before = try await counters(db)
        let hits = try await items.search(
            Query().nearest(to: probe, in: "embedding").matching(.typed("zanzibar flamingo")).limit(
                5))
        now = try await counters(db)
        #expect(now.catchUps - before.catchUps == 1, "one catch-up for both legs")
        #expect(now.replays - before.replays == 1, "one replay of the log for both legs")
        #expect(now.builds == before.builds)
        #expect(hits.first?.id == 9001 || hits.first?.id == 7)
        #expect(Set(hits.map(\.id)).isSuperset(of: [7, 9001]) && !hits.contains { $0.id == 8 })
        // Nothing changed since: no catch-up at all.
        _ = try await items.search(
            Query().nearest(to: probe, in: "embedding").matching(.typed("zanzibar")).limit(5))
        #expect(try await counters(db) == now)
        // API writes are applied by the writer after its commit, so the next query is current.
        try await items.insert(VectorEntry(id: 9002, content: "zanzibar again", vector: probe))
        let afterWrite = try await counters(db)
        let again = try await items.search(
            Query().nearest(to: probe, in: "embedding").matching(.typed("zanzibar")).limit(10))
        #expect(try await counters(db) == afterWrite)
        #expect(again.contains { $0.id == 9002 })
        // An HNSW collection never loaded the flat index.
        let state = try await loaded(db)
        #expect(state.flat == !kind.isApproximate && state.ann == kind.isApproximate && state.text)
    }

    @Test("a text query does not load the vectors; a vector query does not load the text index")
    func lazyLoading() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("lazy.trove")
        _ = try await makeItems(try Database(path: path))
        let db = try Database(path: path)
        let items = try await SearchCollection(named: "items", in: db)
        _ = try await items.search(Query().matching(.typed("row")).limit(3))
        var state = try await loaded(db)
        #expect(!state.flat && state.text)
        let other = try Database(path: path)
        _ = try await SearchCollection(named: "items", in: other).search(
            vector: [Float](repeating: 1, count: 8), limit: 3)
        state = try await loaded(other)
        #expect(state.flat && !state.text)
        // A second index joins at the shared watermark: loading it replays nothing.
        try await db.execute("UPDATE items SET content = 'quokka' WHERE id = 3")
        _ = try await items.search(vector: [Float](repeating: 1, count: 8), limit: 3)
        #expect(
            try await items.search(Query().matching(.typed("quokka")).limit(3)).map(\.id) == [3])
    }

    @Test(
        "two searches of one collection on two readers are inside the search at the same time",
        arguments: [IndexKind.flat, .hnsw()])
    func searchesOverlap(kind: IndexKind) async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("overlap.trove"))
        let items = try await makeItems(db, index: kind)
        let probe = [Float](repeating: 0.25, count: 8)
        // Load every index first: a search that must catch up takes the lock exclusively.
        _ = try await items.search(
            Query().nearest(to: probe, in: "embedding").matching(.typed("row")).limit(5))
        for round in 0..<2 {
            let rendezvous = Rendezvous(parties: 2, deadline: 10)
            items.documents.store.indexes.searchHook = { rendezvous.arrive() }
            async let first = withTaskExecutorPreference(OwnThreadExecutor()) {
                round == 0
                    ? try await items.search(vector: probe, limit: 5).count
                    : try await items.search(Query().matching(.typed("row")).limit(5)).count
            }
            async let second = withTaskExecutorPreference(OwnThreadExecutor()) {
                try await items.search(
                    Query().nearest(to: probe, in: "embedding").matching(.typed("row")).limit(5)
                )
                .count
            }
            let counts = try await [first, second]
            items.documents.store.indexes.searchHook = nil
            #expect(counts == [5, 5])
            // Every leg of a search waits once (a hybrid search twice): the first two to arrive are
            // from different searches, since one search cannot pass its first wait alone.
            #expect(
                rendezvous.outcomes.count >= 2 && rendezvous.outcomes.allSatisfy { $0 },
                "round \(round): both searches were inside at once")
        }
    }
}
