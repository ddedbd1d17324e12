import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite
import TroveText

/// Text-in search over the notes with one model or several.
///
/// - One model: the store's own search, with the query embedded as a query (multilingual-e5
///   embeds `query: …` against its `passage: …` documents).
/// - Several models (`notes` plus companion collections, see ``Notebook``): each model's
///   vector leg is searched with the same filter; the legs are fused by the mean of per-query
///   z-normalised cosines over the legs competent for each note (``competentZScores(_:competent:)``,
///   ``LegCompetence``) into one meaning ranking, which is then
///   fused with the text leg exactly as a one-model hybrid search fuses its vector leg: reciprocal
///   rank fusion, k = 60, text hits voting only when they match two thirds of the query's words
///   (Documentation/PARAMETERS.md, "Two models").
///
/// This lives in the CLI until the store's multi-vector-field schema lands; there the legs
/// become vector fields of one collection and the fusion a query option.
struct MultiModelSearch: Sendable {
    let collection: SearchCollection
    let companions: [SearchCollection]
    let embedders: [any Embedder]

    /// Candidates each leg contributes: as the store's hybrid search (4 × limit, at least 50).
    static func depth(limit: Int) -> Int { min(Query.maximumLimit, max(50, 4 * limit)) }

    func search(_ query: String, mode: SearchMode, where filter: Filter, limit: Int) async throws
        -> [Hit<VectorEntry>]
    {
        if case .text = mode {
            return try await collection.search(query, mode: .text, where: filter, limit: limit)
        }
        return try await search(
            query, vectors: try await queryVectors(query), mode: mode, where: filter, limit: limit)
    }

    /// The query embedded by each model, as a query (multilingual-e5: `query: …`).
    func queryVectors(_ query: String) async throws -> [[Float]] {
        var vectors: [[Float]] = []
        for embedder in embedders { vectors.append(try await embedder.embedQueries([query])[0]) }
        return vectors
    }

    /// The search with the query already embedded (one vector per model, in model order).
    func search(
        _ query: String, vectors: [[Float]], mode: SearchMode, where filter: Filter, limit: Int
    ) async throws -> [Hit<VectorEntry>] {
        if case .text = mode {
            return try await collection.search(query, mode: .text, where: filter, limit: limit)
        }
        precondition(embedders.count == companions.count + 1, "one model per vector collection")
        precondition(vectors.count == embedders.count, "one query vector per model")
        if companions.isEmpty {
            if case .vector = mode {
                return try await collection.search(vector: vectors[0], where: filter, limit: limit)
            }
            return try await collection.search(
                Query(filter).nearest(to: vectors[0], in: "embedding").matching(.typed(query))
                    .limit(limit))
        }

        let depth = Self.depth(limit: limit)
        var rows: [DocumentID: Hit<VectorEntry>] = [:]
        var legs: [[(id: DocumentID, score: Double)]] = []
        for (leg, vector) in zip([collection] + companions, vectors) {
            let hits = try await leg.search(vector: vector, where: filter, limit: depth)
            for hit in hits where rows[hit.id] == nil { rows[hit.id] = hit }
            // Cosine similarity, 1 − distance: the z-score only needs "higher is better" on a
            // linear scale.
            legs.append(hits.map { ($0.id, 1 - ($0.distance ?? 1)) })
        }
        let competence = LegCompetence(query: query, embedders: embedders)
        var competent: [DocumentID: [Bool]] = [:]
        for (id, row) in rows {
            competent[id] = embedders.indices.map {
                competence.isCompetent(model: $0, content: row.record.content)
            }
        }
        let meaning = Self.competentZScores(legs) { leg, id in competent[id]?[leg] ?? true }
        if case .vector = mode {
            return meaning.prefix(limit).enumerated().compactMap { rank, fused in
                result(rows[fused.id], score: fused.score, vectorRank: rank + 1, textRank: nil)
            }
        }
        let text = try await votingTextHits(query, vector: vectors[0], depth: depth, filter: filter)
        for hit in text where rows[hit.id] == nil { rows[hit.id] = hit }
        // RankFusion ranks integer keys: each note gets one, in order of first appearance.
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

    /// The meaning ranking of several vector legs: each leg's cosines z-normalised over its own
    /// results for the query (as ``RankFusion/zScoreSum(_:)``: a note a leg did not return
    /// gets the leg's lowest z), and a note's score the **mean z of the legs competent for it**
    /// (``LegCompetence``: the English-only model says nothing about a Spanish query or a
    /// Hindi note), or of every leg when none is. With every leg competent this orders notes
    /// exactly as the z-score sum does; where one is not, the others decide alone, on the
    /// same scale.
    /// - Returns: every note of every leg, best first; ties to the smaller id.
    /// - Complexity: O(n log n) in the total number of hits.
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

    /// The text leg's hits that vote in the store's hybrid fusion (typed query, the 2/3
    /// coverage gate), in their order: the text ranks of a hybrid search whose vector leg has
    /// weight 0.
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
