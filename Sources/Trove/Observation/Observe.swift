import Foundation

extension Database {
    /// Observes any read: `read` runs on one snapshot now and again after each commit that may
    /// change its result; see ``LiveQuery`` for delivery, coalescing and cancellation.
    ///
    /// What the read depends on is tracked as it runs: the document collections it opens through
    /// `r.documents(_:)` and the tables its raw SQL (`r.query`) reads. Collections have change
    /// logs, so a commit elsewhere in the file costs nothing and an unrelated one costs one
    /// indexed lookup per collection; a table of your own has none, so a possible change to it
    /// from another process reruns the read (equal results are still not yielded twice).
    ///
    /// ```swift
    /// let summary = database.observe { r in
    ///     let items = try r.documents("items")
    ///     return (try items.count(), try items.count(where: Field("done") == true))
    /// }
    /// for try await (total, done) in summary { print("\(done)/\(total) done") }
    /// ```
    public nonisolated func observe<Value: Sendable & Equatable>(
        _ read: @escaping @Sendable (ReadTransaction) throws -> Value
    ) -> LiveQuery<Value> {
        LiveQuery(database: self, read: read)
    }
}

extension DocumentCollection {
    /// Observes the documents of an unranked query.
    ///
    /// ```swift
    /// for try await open in todos.observe(Query(Field("done") == false).sorted(by: .ascending("due"))) {
    ///     render(open)
    /// }
    /// ```
    public func observe(_ query: Query = Query()) -> LiveQuery<[Document]> {
        let name = self.name
        return database.observe { r in try r.documents(name).fetch(query) }
    }

    /// Observes one document by id (nil while it does not exist).
    ///
    /// ```swift
    /// for try await note in notes.observe(id: 42) { editor.show(note) }   // nil once deleted
    /// ```
    public func observe(id: DocumentID) -> LiveQuery<Document?> {
        let name = self.name
        return database.observe { r in try r.documents(name).fetch(id: id) }
    }

    /// Observes how many documents pass `filter`.
    ///
    /// ```swift
    /// for try await count in items.observeCount(where: Field("category") == "c0") { badge = count }
    /// ```
    public func observeCount(where filter: Filter = .all) -> LiveQuery<Int> {
        let name = self.name
        return database.observe { r in try r.documents(name).count(where: filter) }
    }

    /// Observes aggregates over the documents passing `filter` (or over a ranked query's results).
    ///
    /// ```swift
    /// let perYear = items.observeAggregate([.count(), .average("score")], groupBy: [Field("year")])
    /// ```
    public func observeAggregate(
        _ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
        over search: Query? = nil
    ) -> LiveQuery<[AggregateRow]> {
        let name = self.name
        return database.observe { r in
            try r.documents(name).aggregate(
                aggregates, groupBy: groupBy, where: filter, over: search)
        }
    }

    /// Observes the ranked results of a query with vector and/or text legs.
    ///
    /// ```swift
    /// for try await hits in notes.observeSearch(Query().matching("dentist").limit(5)) { show(hits) }
    /// ```
    public func observeSearch(_ query: Query) -> LiveQuery<[Hit<Document>]> {
        let name = self.name
        return database.observe { r in try r.documents(name).search(query) }
    }
}
