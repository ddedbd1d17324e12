import Foundation
import Trove
import TroveTestSupport
import TroveVectors

/// Random entries with seeded vectors and a few sources, for store tests.
func randomEntries(
    count: Int, dimension: Int, seed: UInt64, firstID: Int64 = 1,
    sources: [String] = ["a", "b", "c"]
) -> [VectorEntry] {
    var rng = SeededGenerator(seed: seed)
    return (0..<count).map { i in
        let id = firstID + Int64(i)
        return VectorEntry(
            id: .int(id), content: "row \(id) word\(i % 7)", source: sources[i % sources.count],
            metadata: "{\"n\":\(i),\"even\":\(i % 2 == 0)}",
            vector: rng.vector(dimension: dimension))
    }
}

/// A fresh in-memory database with one collection.
func makeCollection(
    dimension: Int = 4, metric: DistanceMetric = .cosine, lexicalSearch: Bool = true,
    name: String = "items"
) async throws -> SearchCollection {
    try await SearchCollection(
        name, in: Database(), dimension: dimension, metric: metric, lexicalSearch: lexicalSearch)
}

extension DocumentID {
    /// The integer of an Int64 id, for tests of Int64 collections that compare ids with
    /// integers (oracles, arithmetic on ids).
    var integer: Int64 {
        guard case .int(let value) = self else { preconditionFailure("not an Int64 id: \(self)") }
        return value
    }
}
