import Foundation
import Trove
import TroveEmbeddings

/// Text-in search over the notes with one model or several.
///
/// - One model: the store's own search, with the query embedded as a query (multilingual-e5
///   embeds `query: …` against its `passage: …` documents).
/// - Several models (a vector field per model in `notes`, see ``Notebook``): one query with a
///   vector leg per model (and the text leg in hybrid mode), every leg under the same filter,
///   ranked by the engine's `CompetenceFusion`, ``LegCompetence`` saying which legs speak for a
///   note (Documentation/PARAMETERS.md, "Two models").
struct MultiModelSearch: Sendable {
    let collection: SearchCollection
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
        let fields = collection.configuration.vectorFields
        precondition(vectors.count == fields.count, "one query vector per model")
        if fields.count == 1 {
            if case .vector = mode {
                return try await collection.search(vector: vectors[0], where: filter, limit: limit)
            }
            return try await collection.search(
                Query(filter).nearest(to: vectors[0], in: "embedding").matching(.typed(query))
                    .limit(limit))
        }
        let fusion = CompetenceFusion(limit: limit)
        var request = Query(filter)
        for (vector, field) in zip(vectors, fields) {
            request = request.nearest(to: vector, in: field)
        }
        if case .hybrid = mode { request = request.matching(.typed(query)) }
        request = try fusion.query(request)
        return fusion.rerank(
            try await collection.search(request), of: request, competent: competent)
    }
}

extension Hit {
    /// The best rank any model's vector leg gave the record (the only leg's with one model), nil
    /// when none found it: what `trove search` shows as the meaning rank.
    var meaningRank: Int? { vectorRanks.compactMap { $0 }.min() }
}
