import Foundation
import TroveSQLite

/// A relationship to load together with a fetch, one extra statement each (never one per
/// document).
///
/// ```swift
/// // books(author -> authors): each book's author, and each author's books
/// let page = try await books.fetch(Query().limit(20), prefetching: [.referenced("author")])
/// let shelf = try await authors.fetch(Query(), prefetching: [.children("books", via: "author")])
/// ```
public enum Prefetch: Hashable, Sendable {
    /// To-one: the document each fetched document's reference field names.
    case referenced(String)
    /// To-many, through the inverse: the documents of `collection` whose reference field `via`
    /// names a fetched document.
    case children(String, via: String)
}

/// The documents of a fetch and the related documents it prefetched.
///
/// ```swift
/// let result = try await books.fetch(Query(), prefetching: [.referenced("author")])
/// for book in result.documents {
///     print(book["title"]!, "by", result.referenced("author", of: book)?["name"] ?? "nobody")
/// }
/// ```
public struct PrefetchedDocuments: Sendable {
    /// The fetched documents, in the query's order.
    public var documents: [Document]

    struct Targets: Sendable {
        var kind: IDKind
        var byID: [DocumentID: Document]
    }
    var referenced: [String: Targets] = [:]
    var childGroups: [Prefetch: [DocumentID: [Document]]] = [:]

    init(documents: [Document]) { self.documents = documents }

    /// The document that `document`'s reference field `field` names, or nil when the field is
    /// null. Needs `.referenced(field)` in the fetch's prefetches (asking for another is a bug).
    public func referenced(_ field: String, of document: Document) -> Document? {
        guard let targets = referenced[field] else {
            preconditionFailure("\(field) was not prefetched")
        }
        return document[field].flatMap { DocumentID(reference: $0, kind: targets.kind) }.flatMap {
            targets.byID[$0]
        }
    }

    /// The documents of `collection` whose field `via` names `document`, in id order. Needs
    /// `.children(collection, via: field)` in the fetch's prefetches.
    public func children(_ collection: String, via field: String, of document: Document)
        -> [Document]
    {
        guard let groups = childGroups[.children(collection, via: field)] else {
            preconditionFailure("\(collection).\(field) was not prefetched")
        }
        return groups[document.id] ?? []
    }
}

extension DocumentCollection {
    /// Documents by id in one statement, in the order asked, skipping ids that do not exist.
    ///
    /// ```swift
    /// let authors = try await authorsCollection.fetch(ids: [3, 1, 2])
    /// ```
    /// - Complexity: one statement, O(ids) index lookups.
    public func fetch(ids: [DocumentID]) async throws -> [Document] {
        try await reader(transaction: false) { try $0.fetch(ids: ids) }
    }

    /// The documents of this collection whose reference field `field` names one of `parents`,
    /// grouped by parent, in one statement (no query per parent). Every parent asked is a key;
    /// a parent nothing references has an empty list.
    ///
    /// ```swift
    /// let byAuthor = try await books.children(of: [1, 2], via: "author",
    ///                                         Query(Field("year") >= 1960).sorted(by: .ascending("year")).limit(3))
    /// ```
    /// - Parameters:
    ///   - parents: the ids of the referenced documents.
    ///   - field: the reference field that names them.
    ///   - query: a filter, an order within each group (ties by id), a projection, and a limit
    ///     per parent; no ranking, offset or cursor.
    /// - Throws: ``TroveError/invalidQuery(_:)`` when `field` is not a reference field or the
    ///   query ranks or pages; ``TroveError/typeMismatch(field:expected:value:)`` for ids of the
    ///   wrong kind.
    /// - Complexity: one statement: an index lookup per parent, plus a sort of the children.
    public func children(of parents: [DocumentID], via field: String, _ query: Query = Query())
        async throws
        -> [DocumentID: [Document]]
    {
        try await reader(transaction: false) { try $0.children(of: parents, via: field, query) }
    }

    /// An unranked query's documents and their related documents, all from one snapshot: one
    /// statement for the documents and one per prefetch.
    ///
    /// ```swift
    /// let result = try await books.fetch(Query().sorted(by: .ascending("title")), prefetching: [.referenced("author")])
    /// let firstAuthor = result.referenced("author", of: result.documents[0])
    /// ```
    /// - Throws: ``TroveError/invalidQuery(_:)`` when a prefetch names no reference between
    ///   the collections, or a projection leaves out a prefetched reference field.
    public func fetch(_ query: Query, prefetching prefetches: [Prefetch]) async throws
        -> PrefetchedDocuments
    {
        let name = self.name
        return try await database.reading { connection, lookup in
            try lookup(name).fetch(query, prefetching: prefetches, lookup: lookup, on: connection)
        }
    }
}

extension DocumentReading {
    /// Documents by id in one statement; see ``DocumentCollection/fetch(ids:)``.
    public func fetch(ids: [DocumentID]) throws -> [Document] {
        try _access.store.fetch(ids: ids, on: _access.connection)
    }

    /// Children grouped by parent in one statement; see ``DocumentCollection/children(of:via:_:)``.
    public func children(of parents: [DocumentID], via field: String, _ query: Query = Query())
        throws
        -> [DocumentID: [Document]]
    {
        try _access.store.children(of: parents, via: field, query, on: _access.connection)
    }
}
