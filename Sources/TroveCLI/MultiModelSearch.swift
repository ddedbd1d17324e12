import Foundation
import Trove
import TroveEmbeddings

/// Text-in search over the notes with one model or several.
///
/// - One model: the store's own search, with the query embedded as a query (multilingual-e5
///   embeds `query: …` against its `passage: …` documents).
/// - Several models (`notes` plus companion collections, see ``Notebook``): each model's
///   vector leg is searched with the same filter, the legs' hits are put together as one query
///   with a vector leg per model would return them, and the engine's `CompetenceFusion` ranks
///   them, ``LegCompetence`` saying which legs speak for a note (Documentation/PARAMETERS.md,
///   "Two models").
struct MultiModelSearch: Sendable {
    let collection: SearchCollection
    let companions: [SearchCollection]
    let embedders: [any Embedder]

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
        let competence = LegCompetence(query: query, embedders: embedders)
        return try await search(query, vectors: vectors, mode: mode, where: filter, limit: limit) {
            leg, entry in competence.isCompetent(model: leg, content: entry.content)
        }
    }

    /// The search with the query embedded and the legs' competence given: whether model `leg`
    /// may speak for an entry.
    func search(
        _ query: String, vectors: [[Float]], mode: SearchMode, where filter: Filter, limit: Int,
        competent: (_ leg: Int, _ entry: VectorEntry) -> Bool
    ) async throws -> [Hit<VectorEntry>] {
        if case .text = mode {
            return try await collection.search(query, mode: .text, where: filter, limit: limit)
        }
        precondition(vectors.count == companions.count + 1, "one query vector per model")
        if companions.isEmpty {
            if case .vector = mode {
                return try await collection.search(vector: vectors[0], where: filter, limit: limit)
            }
            return try await collection.search(
                Query(filter).nearest(to: vectors[0], in: "embedding").matching(.typed(query))
                    .limit(limit))
        }
        let fusion = CompetenceFusion(limit: limit)
        var request = Query(filter)
        for vector in vectors { request = request.nearest(to: vector, in: "embedding") }
        if case .hybrid = mode { request = request.matching(.typed(query)) }
        request = try fusion.query(request)

        // Until the notes are one collection, each leg is searched in its own and its ranks and
        // distances are put where one query over every leg would put them.
        var hits: [Hit<VectorEntry>] = []
        var positions: [DocumentID: Int] = [:]
        func position(_ hit: Hit<VectorEntry>) -> Int {
            if let position = positions[hit.id] { return position }
            hits.append(
                Hit(
                    record: hit.record, score: 0,
                    vectorRanks: Array(repeating: nil, count: vectors.count),
                    distances: Array(repeating: nil, count: vectors.count)))
            positions[hit.id] = hits.count - 1
            return hits.count - 1
        }
        for (leg, (table, vector)) in zip([collection] + companions, vectors).enumerated() {
            let found = try await table.search(vector: vector, where: filter, limit: fusion.depth)
            for (rank, hit) in found.enumerated() {
                let at = position(hit)
                hits[at].vectorRanks[leg] = rank + 1
                hits[at].distances[leg] = hit.distance
            }
        }
        if let text = request.textLeg {
            // The text leg's hits that vote in a fused query (the coverage gate), in their order:
            // the text ranks of a hybrid search whose vector leg has weight 0.
            let found = try await collection.search(
                Query(filter).nearest(to: vectors[0], in: "embedding", weight: 0, k: fusion.depth)
                    .matching(text.query, k: fusion.depth)
                    .limit(min(Query.maximumLimit, 2 * fusion.depth)))
            for hit in found {
                guard let rank = hit.textRank else { continue }
                let at = position(hit)
                hits[at].textRank = rank
                hits[at].bm25 = hit.bm25
            }
        }
        return fusion.rerank(hits, of: request, competent: competent)
    }
}

extension Hit {
    /// The best rank any model's vector leg gave the record (the only leg's with one model), nil
    /// when none found it: what `trove search` shows as the meaning rank.
    var meaningRank: Int? { vectorRanks.compactMap { $0 }.min() }
}
