import Foundation
import TroveSQLite

/// A search collection's rows are documents of its preset schema (`content`, `source`,
/// `metadata`, `embedding`, `created_at`, `updated_at`, and a version;
/// DocumentLayout+Preset.swift), so paging with cursors, aggregates, patches with
/// compare-and-set and `explain` work here exactly as on a ``DocumentCollection``, over the same
/// table and the same in-memory indexes.
///
/// ```swift
/// let perSource = try await notes.aggregate([.count(), .maximum("updated_at")], groupBy: [Field("source")])
/// try await notes.patch(3, [Field("metadata", path: "$.done"): true])
/// ```
extension SearchCollection {
    /// One page of an unranked query, as documents, and the cursor for the next.
    ///
    /// ```swift
    /// let query = Query().sorted(by: .ascending("created_at")).limit(100)
    /// var page = try await notes.page(query)
    /// while let next = page.next { page = try await notes.page(query.after(next)) }
    /// ```
    /// - Throws: ``TroveError/invalidCursor(reason:)`` for a cursor of another query.
    public func page(_ query: Query) async throws -> Page {
        try await documents.page(query)
    }

    /// Aggregates over the rows passing `filter`, or over the results of a ranked query (in the
    /// same snapshot).
    ///
    /// - Throws: ``TroveError/notNumeric(field:aggregate:)`` for sum/avg of a non-numeric field.
    public func aggregate(
        _ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
        over search: Query? = nil
    ) async throws -> [AggregateRow] {
        try await documents.aggregate(aggregates, groupBy: groupBy, where: filter, over: search)
    }

    /// How a query runs: an unranked one as SQLite runs it (with SQLite's plan); a ranked one as
    /// ``search(_:)`` runs it (the filter in SQLite before ranking, each leg's index and depth,
    /// the fusion).
    ///
    /// ```swift
    /// for line in try await notes.explain(Query(.source("inbox")).nearest(to: q, in: "embedding")) { print(line) }
    /// ```
    public func explain(_ query: Query) async throws -> [String] {
        try await documents.explain(query)
    }

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
    public func patch(_ id: DocumentID, _ changes: [Field: Value], ifVersion version: Int64? = nil)
        async throws
        -> Document
    {
        try await documents.patch(id, changes, ifVersion: version)
    }
}
