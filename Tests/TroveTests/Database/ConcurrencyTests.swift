import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Concurrency")
struct ConcurrencyTests {
    @Test("many reader tasks and one writer on one Database: every read sees whole batches")
    func readersAndWriter() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("store.trove"))
        let items = try await SearchCollection("items", in: db, dimension: 4)
        let batchSize = 25
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for b in 0..<8 {
                    try await items.insert(
                        randomEntries(
                            count: batchSize, dimension: 4, seed: UInt64(b),
                            firstID: Int64(b * batchSize + 1)))
                }
            }
            for r in 0..<6 {
                group.addTask {
                    var rng = SeededGenerator(seed: UInt64(100 + r))
                    for _ in 0..<20 {
                        let hits = try await items.search(
                            vector: rng.vector(dimension: 4), limit: 1_000)
                        let texts = try await items.search(Query().matching("row").limit(1_000))
                        // Batches are atomic: counts are always whole multiples of the batch size.
                        #expect(hits.count % batchSize == 0)
                        #expect(texts.count % batchSize == 0)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await items.count() == 8 * batchSize)
        #expect(try await items.search(vector: [1, 0, 0, 0], limit: 1_000).count == 8 * batchSize)
        #expect(db.fileSize() > 0)
        try await db.checkpoint()
        let sources = try await items.sources()
        #expect(sources.reduce(0) { $0 + $1.count } == 8 * batchSize)
        #expect(sources.allSatisfy { $0.lastUpdated.timeIntervalSinceNow > -600 })
    }
}
