import Foundation
import TroveSQLite

/// A search collection through the document engine: its rows are documents of a preset schema
/// (`content`, `source`, `metadata`, `embedding`, `created_at`, `updated_at`, and a version;
/// DocumentLayout+Preset.swift), so unranked queries with order, cursors and projection,
/// aggregates, patches, compare-and-set and deletes by filter work here exactly as they do on a
/// ``DocumentCollection``, over the same table and the same in-memory search indexes.
///
/// ```swift
/// let recent = try await notes.fetch(Query(Field("source") == "inbox")
///     .sorted(by: .descending("updated_at")).select(["content"]).limit(20))
/// let perSource = try await notes.aggregate([.count(), .maximum("updated_at")], groupBy: [Field("source")])
/// try await notes.patch(3, [Field("metadata", path: "$.done"): true])
/// ```
extension Collection {
    // MARK: Reading (on a reader connection)

    /// The rows of an unranked query as documents, in its order (ties by id).
    ///
    /// - Throws: ``TroveError/unknownField(field:known:)``, ``TroveError/invalidPath(field:path:reason:)``,
    ///   ``TroveError/invalidQuery(_:)`` for a ranked query (use ``search(_:)``).
    public func fetch(_ query: Query) async throws -> [Document] {
        try await reading { store, connection in try store.fetch(query, on: connection, wantsCursor: false).documents }
    }

    /// One page of an unranked query and the cursor for the next.
    ///
    /// ```swift
    /// let query = Query().sorted(by: .ascending("created_at")).limit(100)
    /// var page = try await notes.page(query)
    /// while let next = page.next { page = try await notes.page(query.after(next)) }
    /// ```
    /// - Throws: ``TroveError/invalidCursor(reason:)`` for a cursor of another query.
    public func page(_ query: Query) async throws -> Page {
        try await reading { store, connection in try store.fetch(query, on: connection) }
    }

    /// How many rows pass `filter`.
    public func count(_ filter: Filter) async throws -> Int {
        try await reading { store, connection in try store.count(filter, on: connection) }
    }

    /// Aggregates over the rows passing `filter`, or over the results of a ranked query
    /// (searched with the collection's in-memory indexes, in the same snapshot).
    ///
    /// - Throws: ``TroveError/notNumeric(field:aggregate:)`` for sum/avg of a non-numeric field.
    public func aggregate(_ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
                          over search: Query? = nil) async throws -> [AggregateRow] {
        try await database.withReadingEngine(name) { engine in
            let store = try engine.state.documentStore()
            guard let search else {
                return try store.aggregate(aggregates, groupBy: groupBy, filter: filter, within: nil, on: engine.connection)
            }
            // One scope: the search and the aggregate read one snapshot.
            return try engine.inSearchScope(loading: []) {
                let ids = try engine.search(search).map(\.id)
                return try store.aggregate(aggregates, groupBy: groupBy, filter: filter, within: ids, on: engine.connection)
            }
        }
    }

    /// How a query runs: an unranked one as SQLite runs it (with SQLite's plan); a ranked one as
    /// ``search(_:)`` runs it (the filter in SQLite before ranking, the vector leg's plan on the
    /// collection's flat or HNSW index, the text leg in memory or in FTS5, the fusion).
    ///
    /// ```swift
    /// for line in try await notes.explain(Query(Field("source") == "inbox").nearest(to: q, in: "embedding")) { print(line) }
    /// ```
    public func explain(_ query: Query) async throws -> [String] {
        try await database.withReadingEngine(name) { engine in
            let store = try engine.state.documentStore()
            guard query.isRanked else { return try store.explain(query, on: engine.connection) }
            return try engine.explain(query, documents: store)
        }
    }

    // MARK: Writing (each call is one transaction)

    /// Changes some fields, or JSON paths inside `metadata`, of one row; `.null` clears an
    /// optional field or removes a path. `updated_at` moves; the text and vector indexes follow.
    /// With `ifVersion`, only when the stored version still equals it (optimistic concurrency).
    ///
    /// ```swift
    /// try await notes.patch(7, [Field("source"): "archive", Field("metadata", path: "$.pinned"): .null])
    /// ```
    /// - Returns: the row as stored afterwards.
    /// - Throws: ``TroveError/documentNotFound(_:)``, ``TroveError/versionConflict(id:expected:actual:)``,
    ///   ``TroveError/invalidMetadata(reason:)``, ``TroveError/metadataTooLarge(limit:actual:)``,
    ///   ``TroveError/invalidValue(field:reason:)`` for `created_at` and `updated_at`; nothing is written.
    @discardableResult
    public func patch(_ id: Int64, _ changes: [Field: Value], ifVersion version: Int64? = nil) async throws -> Document {
        try await writing { store, engine in try store.patch(.int(id), changes, ifVersion: version, on: engine.connection) }
    }

    /// Deletes every row passing `filter`. - Returns: how many.
    @discardableResult
    public func delete(where filter: Filter) async throws -> Int {
        try await writing { store, engine in try store.delete(where: filter, on: engine.connection) }
    }

    /// Runs `body` with the document view on a reader connection.
    private func reading<T: Sendable>(_ body: @escaping @Sendable (DocumentStore, Connection) throws -> T) async throws -> T {
        try await database.withReadingEngine(name) { engine in try body(try engine.state.documentStore(), engine.connection) }
    }

    /// Runs `body` with the document view in one write of the collection's engine (which then
    /// catches its in-memory indexes up and schedules the text index's merge).
    private func writing<T: Sendable>(_ body: @escaping @Sendable (DocumentStore, CollectionEngine) throws -> T) async throws -> T {
        try await database.withWritingEngine(name) { engine in
            let store = try engine.state.documentStore()
            return try engine.write { try body(store, engine) }
        }
    }
}

extension CollectionEngine {
    /// The plan of a ranked query (``Collection/explain(_:)``), from the same decisions
    /// ``search(_:)`` makes.
    func explain(_ query: Query, documents store: DocumentStore) throws -> [String] {
        let k = (query.limit ?? 10) + max(0, query.offset)
        var lines: [String] = []
        var filter = SearchFilter()
        if case .all = query.filter {
            lines.append("candidates: every row")
        } else {
            let condition = try store.condition(query.filter, on: connection)
            filter = SearchFilter(sql: condition.sql, bindings: condition.bindings)
            lines.append("candidates: filter in SQLite, before ranking")
            var sql = SQLFragment(sql: "SELECT id FROM \(schema.table) WHERE ")
            sql.append(condition)
            lines += try store.sqlitePlan(sql, on: connection).map { "  sqlite: \($0)" }
        }
        if !query.vectorLegs.isEmpty {
            let plan = try explainSearch(topK: min(k, Self.maxTopK), filter: filter, exact: false)
            lines.append("vector leg embedding: in memory, \(plan.reason)")
        }
        if let leg = query.textLeg {
            let memory = leg.query.kind == .typed && typedQuery(leg.query.text) != nil && state.text != nil
            lines.append(memory
                ? "text leg: in-memory BM25 over content, ranked as FTS5's bm25"
                : "text leg: FTS5 MATCH over content")
        }
        if !query.vectorLegs.isEmpty, query.textLeg != nil, case .reciprocalRank(let k) = query.fusion {
            lines.append("fusion: reciprocal rank, k = \(k)")
        }
        if let lambda = query.mmrLambda { lines.append("rerank: MMR, λ = \(lambda)") }
        lines.append("rows: fetched by id from SQLite for the top \(query.limit ?? 10)")
        return lines
    }
}
