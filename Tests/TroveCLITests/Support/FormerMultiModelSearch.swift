import Foundation
import Trove
import TroveText

@testable import TroveCLI

/// The CLI's multi-model fusion as it was before it moved into the engine (``CompetenceFusion``),
/// kept as the oracle of the differential tests: the vector legs are searched one collection
/// at a time (`notes` and its companions `notes_vectors_N`), fused by the mean z-score of the
/// legs competent for each note, then with the text leg by RRF k = 60 (text hits voting only
/// when they match two thirds of the query's words). Only competence is a parameter here (it
/// was ``LegCompetence``); everything else is the former code.
struct FormerMultiModelSearch: Sendable {
    let collection: SearchCollection
    let companions: [SearchCollection]

    static func depth(limit: Int) -> Int { min(Query.maximumLimit, max(50, 4 * limit)) }

    func search(
        _ query: String, vectors: [[Float]], mode: SearchMode, where filter: Filter, limit: Int,
        competent: (Int, VectorEntry) -> Bool
    ) async throws -> [Hit<VectorEntry>] {
        if case .text = mode {
            return try await collection.search(query, mode: .text, where: filter, limit: limit)
        }
        let depth = Self.depth(limit: limit)
        var rows: [DocumentID: Hit<VectorEntry>] = [:]
        var legs: [[(id: DocumentID, score: Double)]] = []
        for (leg, vector) in zip([collection] + companions, vectors) {
            let hits = try await leg.search(vector: vector, where: filter, limit: depth)
            for hit in hits where rows[hit.id] == nil { rows[hit.id] = hit }
            legs.append(hits.map { ($0.id, 1 - ($0.distance ?? 1)) })
        }
        var competence: [DocumentID: [Bool]] = [:]
        for (id, row) in rows {
            competence[id] = vectors.indices.map { competent($0, row.record) }
        }
        let meaning = Self.competentZScores(legs) { leg, id in competence[id]?[leg] ?? true }
        if case .vector = mode {
            return meaning.prefix(limit).enumerated().compactMap { rank, fused in
                result(rows[fused.id], score: fused.score, vectorRank: rank + 1, textRank: nil)
            }
        }
        let text = try await votingTextHits(query, vector: vectors[0], depth: depth, filter: filter)
        for hit in text where rows[hit.id] == nil { rows[hit.id] = hit }
        var keys: [DocumentID: Int64] = [:]
        var notes: [DocumentID] = []
        func key(_ id: DocumentID) -> Int64 {
            if let key = keys[id] { return key }
            keys[id] = Int64(notes.count)
            notes.append(id)
            return Int64(notes.count - 1)
        }
        let meaningKeys = meaning.prefix(depth).map { key($0.id) }
        let textKeys = text.map { key($0.id) }
        let fused = RankFusion.reciprocalRank(
            [.init(ids: meaningKeys), .init(ids: textKeys)], k: RankFusion.defaultK)
        return fused.prefix(limit).compactMap { hit in
            result(
                rows[notes[Int(hit.id)]], score: hit.score, vectorRank: hit.ranks[0],
                textRank: hit.ranks[1])
        }
    }

    static func competentZScores<ID: Hashable & Comparable>(
        _ legs: [[(id: ID, score: Double)]], competent: (Int, ID) -> Bool
    ) -> [(id: ID, score: Double)] {
        var z: [[ID: Double]] = []
        var floors: [Double] = []
        for hits in legs {
            let n = Double(hits.count)
            let mean = hits.reduce(0) { $0 + $1.score } / max(n, 1)
            let deviation =
                (hits.reduce(0) { $0 + ($1.score - mean) * ($1.score - mean) } / max(n, 1))
                .squareRoot()
            var scores: [ID: Double] = [:]
            for hit in hits where scores[hit.id] == nil {
                scores[hit.id] = deviation > 1e-12 ? (hit.score - mean) / deviation : 0
            }
            z.append(scores)
            floors.append(scores.values.min() ?? 0)
        }
        var ids = Set<ID>()
        for scores in z { ids.formUnion(scores.keys) }
        let fused = ids.map { id -> (id: ID, score: Double) in
            var voters = legs.indices.filter { competent($0, id) }
            if voters.isEmpty { voters = Array(legs.indices) }
            let total = voters.reduce(0.0) { $0 + (z[$1][id] ?? floors[$1]) }
            return (id, total / Double(voters.count))
        }
        return fused.sorted { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }
    }

    private func votingTextHits(
        _ query: String, vector: [Float], depth: Int, filter: Filter
    ) async throws -> [Hit<VectorEntry>] {
        let hits = try await collection.search(
            Query(filter).nearest(to: vector, in: "embedding", weight: 0, k: depth)
                .matching(.typed(query), k: depth).limit(min(Query.maximumLimit, 2 * depth)))
        return hits.filter { $0.textRank != nil }.sorted { $0.textRank! < $1.textRank! }
    }

    private func result(_ row: Hit<VectorEntry>?, score: Double, vectorRank: Int?, textRank: Int?)
        -> Hit<VectorEntry>?
    {
        guard var row else { return nil }
        row.score = score
        row.vectorRanks = [vectorRank]
        row.textRank = textRank
        if vectorRank == nil { row.distances = [nil] }
        return row
    }
}
