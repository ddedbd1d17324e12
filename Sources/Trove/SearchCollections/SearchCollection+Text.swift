import Foundation
import TroveEmbeddings
import TroveSQLite

extension SearchCollection {
    private func requireEmbedder() throws -> any Embedder {
        guard let embedder else { throw TroveError.embedderRequired(collection: name) }
        return embedder
    }

    /// The rows for `entries`: an unassigned id left for the write to choose, an empty vector
    /// filled by its model's embedder (all of a batch's texts in one call per model, off the
    /// database's actor, so other work on the database is not blocked while a model runs).
    ///
    /// - Throws: ``TroveError/embedderRequired(collection:)`` when an entry lacks a vector and
    ///   the collection that model's embedder, and the embedders' errors; before anything is
    ///   written.
    func rows(_ entries: [VectorEntry]) async throws -> [PendingRow] {
        var rows = entries.map(PendingRow.init)
        let further = configuration.additionalEmbeddings.count
        for i in rows.indices where further > 0 && rows[i].additionalVectors.isEmpty {
            rows[i].additionalVectors = Array(repeating: [], count: further)
        }
        for model in 0...further {
            let unembedded = rows.indices.filter { i in
                model == 0
                    ? rows[i].vector?.isEmpty ?? true
                    : rows[i].additionalVectors.count == further
                        && rows[i].additionalVectors[model - 1].isEmpty
            }
            guard !unembedded.isEmpty else { continue }
            guard
                let embedder = model == 0
                    ? embedder
                    : model <= additionalEmbedders.count ? additionalEmbedders[model - 1] : nil
            else { throw TroveError.embedderRequired(collection: name) }
            let vectors = try await embedder.embed(unembedded.map { rows[$0].content })
            guard vectors.count == unembedded.count else {
                throw TroveError.invalidVector(
                    reason:
                        "the embedder returned \(vectors.count) vectors for \(unembedded.count) texts"
                )
            }
            for (i, vector) in zip(unembedded, vectors) {
                if model == 0 {
                    rows[i].vector = vector
                } else {
                    rows[i].additionalVectors[model - 1] = vector
                }
            }
        }
        return rows
    }

    /// Searches with text: embeds it as a query and runs hybrid search (vector and words fused),
    /// or one leg alone. The words are treated as typed by a person: no syntax errors. On a
    /// collection created with lexical search off, `.hybrid` runs the vector leg alone. A
    /// collection of several models has a vector leg per model, fused with the text leg by
    /// reciprocal rank (``Query/fused(_:)`` in ``search(_:)`` to fuse otherwise).
    ///
    /// The text is embedded with the embedder's `embedQuery(_:)`, as `trove search` does: models
    /// trained with instructions (multilingual-e5: `query: ` against the stored `passage: `) rank
    /// well only when the question carries the query prefix.
    ///
    /// ```swift
    /// let hits = try await notes.search("when is the dentist?", limit: 5)
    /// let wordsOnly = try await notes.search("dentist", mode: .text, snippet: SnippetStyle())
    /// let due = try await notes.search("dentist", where: Field("metadata", path: "$.due").exists)
    /// ```
    /// - Throws: ``TroveError/embedderRequired(collection:)`` for the vector and hybrid modes
    ///   without an embedder, and the errors of ``search(_:)``.
    public func search(
        _ text: String, mode: SearchMode = .hybrid, where filter: Filter = .all, limit: Int = 10,
        snippet: SnippetStyle? = nil
    ) async throws -> [Hit<VectorEntry>] {
        var query = Query(filter).limit(limit)
        if mode != .text {
            query = query.nearest(to: try await requireEmbedder().embedQuery(text), in: "embedding")
            for (field, model) in zip(
                configuration.vectorFields.dropFirst(), configuration.additionalEmbeddings.indices)
            {
                guard model < additionalEmbedders.count else {
                    throw TroveError.embedderRequired(collection: name)
                }
                query = query.nearest(
                    to: try await additionalEmbedders[model].embedQuery(text), in: field)
            }
        }
        // Without a text index, "hybrid" has only one leg: answer with it rather than fail.
        if mode == .text || (mode == .hybrid && configuration.lexicalSearch) {
            query = query.matching(.typed(text))
            if let snippet { query = query.snippets(snippet) }
        }
        return try await search(query)
    }
}
