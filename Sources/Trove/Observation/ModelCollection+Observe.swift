import Foundation

/// Live queries over models: the same ``LiveQuery`` as documents', compared as the documents
/// underneath (so a model type need not be Equatable) and decoded only when they changed.
extension ModelCollection {
    /// Observes the models a descriptor selects, in its order.
    ///
    /// ```swift
    /// let open = notes.observe(FetchDescriptor(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)]))
    /// for try await notes in open { render(notes) }
    /// ```
    /// A predicate that cannot be translated ends the sequence with
    /// ``TroveError/unsupportedPredicate(node:reason:)`` at the first `next()`.
    public func observe(_ descriptor: FetchDescriptor<M> = FetchDescriptor()) -> LiveQuery<[M]> {
        let (name, schema) = (documents.name, self.schema)
        let query = Result { try descriptor.query(schema) }
        return LiveQuery(
            database: database, read: { r in try r.documents(name).fetch(query.get()) },
            transform: { documents in try documents.map(schema.decode) })
    }

    /// Observes one model by id (nil while it does not exist).
    ///
    /// ```swift
    /// for try await note in notes.observe(id: 7) { title = note?.title ?? "(deleted)" }
    /// ```
    public func observe(id: M.ID) -> LiveQuery<M?> {
        let (name, schema, id) = (documents.name, self.schema, id.documentID)
        return LiveQuery(
            database: database, read: { r in try r.documents(name).fetch(id: id) },
            transform: { document in try document.map(schema.decode) })
    }

    /// Observes how many models the predicate accepts (all when nil).
    ///
    /// ```swift
    /// for try await n in notes.observeCount(where: #Predicate { !$0.done }) { badge = n }
    /// ```
    public func observeCount(where predicate: Predicate<M>? = nil) -> LiveQuery<Int> {
        let (name, schema) = (documents.name, self.schema)
        let filter = Result {
            try predicate.map { try PredicateTranslator.filter($0, schema: schema) } ?? .all
        }
        return LiveQuery(database: database) { r in try r.documents(name).count(where: filter.get())
        }
    }

    /// Observes a typed search: models ranked by how well they match `text` (see
    /// ``search(_:mode:where:limit:)``). The text is embedded once, here; the ranking reruns
    /// after each commit that changes the collection.
    ///
    /// ```swift
    /// let dentist = try await notes.observeSearch("dentist appointment", limit: 5)
    /// for try await hits in dentist { show(hits.map(\.record)) }
    /// ```
    public func observeSearch(
        _ text: String, mode: SearchMode = .hybrid, where predicate: Predicate<M>? = nil,
        limit: Int = 10
    ) async throws -> LiveQuery<[Hit<M>]> {
        let query = try await searchQuery(text, mode: mode, where: predicate, limit: limit)
        let name = documents.name
        let collection = self
        return LiveQuery(
            database: database, read: { r in try r.documents(name).search(query) },
            transform: { hits in try collection.hits(hits) })
    }
}
