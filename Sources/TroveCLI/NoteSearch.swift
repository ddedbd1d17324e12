import Foundation
import Trove
import TroveEmbeddings

/// One search over a notebook as `trove search` runs it, for the CLI and for any other front
/// end (`trove mcp`) that must give the same results: the ranked legs and their fusion
/// (``MultiModelSearch``, the engine's `CompetenceFusion`), chunks collapsed to their note,
/// then each result's calibrated
/// ``Relevance`` and its collection's context.
///
/// ```swift
/// let search = NoteSearch(notebook: notebook, embedders: embedders)
/// let hits = try await search.run(NoteSearch.Request(query: "dentist", mode: .hybrid, limit: 5))
/// hits.first?.relevance   // 0.93
/// ```
struct NoteSearch: Sendable {
    let notebook: Notebook
    /// The database's models in order; empty for text-only searches.
    let embedders: [any Embedder]

    /// What to search.
    struct Request: Sendable {
        var query: String
        var mode: SearchMode
        /// Most results; nil for every match (`--all`).
        var limit: Int?
        /// Records allowed (collections, source, `--where`).
        var filter: Filter = .all
        /// Every matching chunk, instead of each note's best.
        var allChunks = false
        /// Results below this relevance are left out.
        var minimumRelevance: Double = 0
    }

    /// One leg's view of a result.
    struct Leg: Sendable, Equatable {
        /// `text`, or the model's name (`all-MiniLM-L6-v2`, `multilingual-e5-small`, or its id).
        var name: String
        /// 1-based rank in this leg's list, nil when the leg's candidates did not hold it.
        var rank: Int?
        /// The leg's raw score: the cosine for a model, word coverage (0...1) for text.
        var score: Double
        /// ``score`` through the leg's calibration.
        var relevance: Double
        /// Whether the leg may speak for this result (``LegCompetence``).
        var competent: Bool
    }

    /// One result.
    struct NoteHit: Sendable {
        var result: Hit<VectorEntry>
        /// The calibrated 0..1 relevance (monotone in rank).
        var relevance: Double
        /// The fusion's own score (reciprocal-rank sum, or the single leg's score).
        var fusedScore: Double
        var legs: [Leg]
        var collection: String?
        var context: String?
        /// The parsed metadata.
        var metadata: JSONValue?
    }

    /// Runs a search.
    /// - Throws: store errors (an invalid `--where` is `TroveError.invalidFilter`).
    func run(_ request: Request) async throws -> [NoteHit] {
        let search = MultiModelSearch(
            collection: notebook.collection, embedders: embedders)
        var vectors: [[Float]] = []
        if request.mode != .text { vectors = try await search.queryVectors(request.query) }
        let everything = try await notebook.collection.count(where: request.filter)
        guard everything > 0 else { return [] }
        let wanted = min(request.limit ?? everything, everything)
        // Extra chunks, so that `wanted` notes remain after collapsing a note's chunks.
        let fetch =
            request.allChunks || request.limit == nil
            ? wanted : min(Query.maximumLimit, max(wanted * 4, wanted + 20))
        var results = try await search.search(
            request.query, vectors: vectors, mode: request.mode, where: request.filter,
            limit: fetch
        )
        if !request.allChunks { results = Array(Self.bestChunkPerDocument(results).prefix(wanted)) }

        let contexts = Dictionary(
            try await notebook.collections().map { ($0.name, $0.context) },
            uniquingKeysWith: { first, _ in first })
        let competence = LegCompetence(query: request.query, embedders: embedders)
        var hits: [NoteHit] = []
        var cap = Double.infinity
        for result in results {
            let legs = try await legs(
                of: result, query: request.query, mode: request.mode, vectors: vectors,
                competence: competence)
            let spoken = legs.filter(\.competent).map(\.relevance)
            // Every leg incompetent (an English-only model on Chinese): the legs still ranked
            // it, so they still say how much.
            cap = min(cap, (spoken.isEmpty ? legs.map(\.relevance) : spoken).max() ?? 0)
            // Monotone: once below the bar, every later result is too.
            if cap < request.minimumRelevance { break }
            let metadata = result.record.metadata.flatMap { try? JSONValue.parse($0) }
            let collection = metadata?["collection"]?.string
            hits.append(
                NoteHit(
                    result: result, relevance: cap, fusedScore: result.score, legs: legs,
                    collection: collection,
                    context: collection.flatMap { contexts[$0] ?? nil }, metadata: metadata))
        }
        return hits
    }

    /// Each leg's raw score and relevance for one result: the cosine with each model's stored
    /// vector (the result carries them all, so it is there even when the leg's candidates
    /// missed it), and the word coverage.
    private func legs(
        of result: Hit<VectorEntry>, query: String, mode: SearchMode, vectors: [[Float]],
        competence: LegCompetence
    ) async throws -> [Leg] {
        var legs: [Leg] = []
        if mode != .text {
            let stored = [result.record.vector] + result.record.additionalVectors
            for (index, embedder) in embedders.enumerated() {
                guard index < stored.count, !stored[index].isEmpty else { continue }
                let cosine = Relevance.cosine(vectors[index], stored[index])
                let manifest = embedder.manifest
                legs.append(
                    Leg(
                        name: BuiltInModel(manifest: manifest)?.rawValue ?? manifest.modelID,
                        rank: index < result.vectorRanks.count ? result.vectorRanks[index] : nil,
                        score: cosine,
                        relevance: Relevance.calibration(modelID: manifest.modelID).relevance(
                            cosine),
                        competent: competence.isCompetent(
                            model: index, content: result.record.content)))
            }
        }
        if mode != .vector {
            let coverage = Relevance.coverage(query: query, content: result.record.content)
            // A note without any of the query's words gets no say from the word leg.
            legs.append(
                Leg(
                    name: "text", rank: result.textRank, score: coverage,
                    relevance: coverage > 0 ? Relevance.text.relevance(coverage) : 0,
                    competent: true))
        }
        return legs
    }

    /// The first (best) hit of each document: a file, or one line of a .jsonl file.
    static func bestChunkPerDocument(_ hits: [Hit<VectorEntry>]) -> [Hit<VectorEntry>] {
        var seen = Set<String>()
        return hits.filter { hit in
            let metadata = hit.record.metadata.flatMap { try? JSONValue.parse($0) }
            guard let file = metadata?["file"]?.string else { return true }
            let key =
                file + "\u{0}" + (metadata?["doc_id"]?.idString ?? "") + "\u{0}"
                + (metadata?["collection"]?.string ?? "")
            return seen.insert(key).inserted
        }
    }
}
