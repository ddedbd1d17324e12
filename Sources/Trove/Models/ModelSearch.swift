import Foundation

/// How a typed search ranks models.
public enum ModelSearchMode: Hashable, Sendable {
    /// Meaning and words: the vector and full-text legs fused by reciprocal rank fusion.
    case hybrid
    /// Meaning only: nearness of the embedded query to the embedded text property.
    case vector
    /// Words only: BM25 over the full-text properties.
    case words
}

/// A model found by a search, with its score.
public struct ModelHit<M: Model>: Sendable {
    /// The model.
    public var model: M
    /// The fused score, bigger is better (a single leg's own score when there is one leg).
    public var score: Double
    /// The vector distance, when the vector leg found it.
    public var distance: Double?
    /// The BM25 score from the words leg (smaller is better, as SQLite reports it).
    public var bm25: Double?
}

extension ModelCollection {
    /// Models ranked by how well they match `text`, among those the predicate accepts.
    ///
    /// ```swift
    /// let notes = try await database.models(Note.self, embedder: embedder)
    /// let hits = try await notes.search("dentist appointment", where: #Predicate { $0.year >= 2025 }, limit: 5)
    /// for hit in hits { print(hit.model.title, hit.score) }
    /// ```
    /// - Throws: ``TroveError/embedderRequired(collection:)`` for `.vector` and `.hybrid` without
    ///   an embedder or an ``ModelOptions/embedding(of:into:)``; ``TroveError/lexicalSearchDisabled(collection:)``
    ///   for `.words` and `.hybrid` without ``ModelOptions/fullText(_:weight:)-(KeyPath<Root,String>,_)`` properties.
    public func search(_ text: String, mode: ModelSearchMode = .hybrid, where predicate: Predicate<M>? = nil,
                       limit: Int = 10) async throws -> [ModelHit<M>] {
        var query = Query(try predicate.map { try PredicateTranslator.filter($0, schema: schema) } ?? .all).limit(limit)
        if mode != .words {
            guard let embedder, let vector = schema.embeddedVector, let column = schema.propertiesByName[vector]?.column else {
                throw TroveError.embedderRequired(collection: documents.name)
            }
            query = query.nearest(to: try await embedder.embedQuery(text), in: column)
        }
        if mode != .vector {
            guard schema.documentSchema.fullText != nil else { throw TroveError.lexicalSearchDisabled(collection: documents.name) }
            query = query.matching(.typed(text))
        }
        let hits = try await documents.search(query)
        return try hits.map { hit in
            ModelHit(model: try schema.decode(hit.document), score: hit.score,
                     distance: hit.distances.first ?? nil, bm25: hit.bm25)
        }
    }
}
