import Foundation

/// Which models to fetch, in what order, how many: SwiftData's `FetchDescriptor`, built into
/// the engine's ``Query`` (models are a layer over documents, not a second engine).
///
/// ```swift
/// var recent = FetchDescriptor<Note>(
///     predicate: #Predicate { $0.year >= 2020 && $0.tags.contains("work") },
///     sortBy: [SortDescriptor(\.year, order: .reverse), SortDescriptor(\.title)])
/// recent.fetchLimit = 20
/// let notes = try await database.models(Note.self).fetch(recent)
/// ```
///
/// Strings sort and compare by Unicode code points (SQLite's binary collation), not by a
/// localized comparator.
public struct FetchDescriptor<M: PersistentModel>: Sendable {
    /// Which models; nil for all. Translated into SQL (see ``TroveError/unsupportedPredicate(node:reason:)``).
    public var predicate: Predicate<M>?
    /// The order; ties are broken by id, so the order is total.
    public var sortBy: [SortDescriptor<M>]
    /// The most models returned.
    public var fetchLimit: Int?
    /// Models skipped before the first returned.
    public var fetchOffset: Int?
    /// Continue after the last model of a previous page (from ``ModelPage/next``): keyset
    /// paging, stable while models are inserted and deleted.
    public var cursor: Cursor?
    /// Reference properties whose targets a context's fetch reads too, one query per key path,
    /// so following them asks the database nothing (``ModelContext/fetch(_:)``; class models).
    ///
    /// (`nonisolated(unsafe)`: key paths are immutable, and a model's stored-property key
    /// paths capture nothing, so sharing them across isolations is safe.)
    public nonisolated(unsafe) var relationshipKeyPathsForPrefetching: [PartialKeyPath<M>] = []
    /// The properties the caller needs. Trove reads every stored property but lazy ones
    /// (``LazyField``) whatever this says: a row is read in one step, and SwiftData too treats
    /// the list as a hint.
    public nonisolated(unsafe) var propertiesToFetch: [PartialKeyPath<M>] = []
    /// Whether a context's fetch includes the models inserted in it and not saved yet (true by
    /// default, as in SwiftData): those the predicate accepts (evaluated in memory) are merged
    /// into the stored rows in the descriptor's order before the offset and limit apply. Not
    /// with a ``cursor`` (a page continues the stored rows), and unsaved edits of stored models
    /// do not move them in or out. Value-model reads (``ModelCollection``) have no pending
    /// changes.
    public var includePendingChanges = true

    /// A descriptor.
    ///
    /// ```swift
    /// let first = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)], fetchLimit: 10)
    /// ```
    /// - Parameters:
    ///   - predicate: which models; nil for all.
    ///   - sortBy: the order (ties by id).
    ///   - fetchLimit: the most models returned.
    ///   - fetchOffset: models skipped first.
    ///   - cursor: the page to continue after.
    public init(
        predicate: Predicate<M>? = nil, sortBy: [SortDescriptor<M>] = [], fetchLimit: Int? = nil,
        fetchOffset: Int? = nil, cursor: Cursor? = nil
    ) {
        self.predicate = predicate
        self.sortBy = sortBy
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.cursor = cursor
    }

    /// The engine query this descriptor stands for: the predicate translated into a ``Filter``,
    /// the sort descriptors into ``SortKey``s. Useful with ``DocumentCollection/explain(_:)``.
    ///
    /// ```swift
    /// let plan = try await notes.documents.explain(FetchDescriptor<Note>(predicate: #Predicate { $0.year > 2020 }).query())
    /// ```
    /// - Throws: ``TroveError/unsupportedPredicate(node:reason:)`` naming a node without SQL.
    public func query() throws -> Query { try query(ModelSchema<M>.shared()) }

    func query(_ schema: ModelSchema<M>) throws -> Query {
        var query = Query(
            try predicate.map { try PredicateTranslator.filter($0, schema: schema) } ?? .all)
        query.order = try sortBy.map { try Self.sortKey($0, schema) }
        query.limit = fetchLimit
        query.offset = fetchOffset ?? 0
        query.cursor = cursor
        return query
    }

    static func sortKey(_ descriptor: SortDescriptor<M>, _ schema: ModelSchema<M>) throws -> SortKey
    {
        guard let keyPath = descriptor.keyPath else {
            throw TroveError.unsupportedPredicate(
                node: "SortDescriptor", reason: "a sort without a key path cannot be run in SQL")
        }
        let field = try schema.field(keyPath)
        // Swift orders nil before any value; SQLite's NULLS FIRST/LAST keeps that in both directions.
        let descending = descriptor.order == .reverse
        return SortKey(field.field, descending: descending, nullsFirst: !descending)
    }
}

/// One page of models and the cursor for the next (nil on the last page).
///
/// ```swift
/// let first = try await notes.page(FetchDescriptor(sortBy: [SortDescriptor(\.due)], fetchLimit: 50))
/// let second = try await notes.page(FetchDescriptor(sortBy: [SortDescriptor(\.due)], fetchLimit: 50, cursor: first.next))
/// ```
public struct ModelPage<M: Model>: Sendable {
    /// The models, in order.
    public var models: [M]
    /// Pass it as ``FetchDescriptor/cursor`` for the next page.
    public var next: Cursor?
}
