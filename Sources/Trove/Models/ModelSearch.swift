import Foundation

extension ModelCollection {
    /// Models ranked by how well they match `text`, among those the predicate accepts.
    ///
    /// ```swift
    /// let notes = try await database.models(Note.self, embedder: embedder)
    /// let hits = try await notes.search("dentist appointment", where: #Predicate { $0.year >= 2025 }, limit: 5)
    /// for hit in hits { print(hit.record.title, hit.score) }
    /// ```
    /// - Throws: ``TroveError/embedderRequired(collection:)`` for `.vector` and `.hybrid` without
    ///   an embedder or an ``ModelOptions/embedding(of:into:)``; ``TroveError/lexicalSearchDisabled(collection:)``
    ///   for `.text` and `.hybrid` without ``ModelOptions/fullText(_:weight:)-(KeyPath<Root,String>,_)`` properties.
    public func search(
        _ text: String, mode: SearchMode = .hybrid, where predicate: Predicate<M>? = nil,
        limit: Int = 10
    ) async throws -> [Hit<M>] {
        let query = try await searchQuery(text, mode: mode, where: predicate, limit: limit)
        return try hits(try await documents.search(query))
    }

    /// The engine query of a typed search (its text embedded when it has a vector leg).
    func searchQuery(_ text: String, mode: SearchMode, where predicate: Predicate<M>?, limit: Int)
        async throws -> Query
    {
        var query = Query(
            try predicate.map { try PredicateTranslator.filter($0, schema: schema) } ?? .all
        ).limit(limit)
        if mode != .text {
            guard let embedder, let vector = schema.embeddedVector,
                let column = schema.propertiesByName[vector]?.column
            else {
                throw TroveError.embedderRequired(collection: documents.name)
            }
            query = query.nearest(to: try await embedder.embedQuery(text), in: column)
        }
        if mode != .vector {
            guard schema.documentSchema.fullText != nil else {
                throw TroveError.lexicalSearchDisabled(collection: documents.name)
            }
            query = query.matching(.typed(text))
        }
        return query
    }

    /// Document hits as model hits.
    func hits(_ hits: [Hit<Document>]) throws -> [Hit<M>] {
        try hits.map { hit in try hit.map { try schema.decode($0) } }
    }
}
