import Foundation
import TroveSQLite

/// A handle on one document collection: declared fields, documents, queries, aggregates and
/// search. Cheap to copy and Sendable.
///
/// Writes go through the database's single writer; reads and searches run on its reader pool,
/// in parallel with writes and with each other.
///
/// ```swift
/// let items = try await database.documents("items", schema: schema)
/// try await items.insert([Document(id: 1, ["title": "Dune", "year": 1965])])
/// let recent = try await items.fetch(Query(Field("year") >= 1960).sorted(by: .descending("year")).limit(20))
/// let perYear = try await items.aggregate([.count()], groupBy: [Field("year")])
/// ```
public struct DocumentCollection: RecordCollection {
    /// The database it belongs to.
    public let database: Database
    let store: DocumentStore

    /// The collection's name.
    public var name: String { store.name }
    /// Its frozen schema.
    public var schema: DocumentSchema { store.schema }

    // MARK: Writing (each call is one transaction; `insert` is ``RecordCollection``'s)

    public func _insert(_ documents: [Document], expiry: Expiry) async throws -> [DocumentID] {
        try await writer { try $0._insert(documents, expiry: expiry) }
    }

    /// Inserts documents, replacing those whose id exists (their version goes up). A replaced
    /// document takes `expiry` (`.never`, the default, clears an expiry it had); an unassigned
    /// id gets a new one, as in ``RecordCollection/insert(_:expiry:)->[Self.RecordID]``.
    ///
    /// - Returns: their ids, in order.
    @discardableResult
    public func upsert(_ documents: [Document], expiry: Expiry = .never) async throws
        -> [DocumentID]
    {
        try await writer { try $0.upsert(documents, expiry: expiry) }
    }

    /// Replaces a document's fields. With `ifVersion`, only when the stored version still equals
    /// it (optimistic concurrency).
    ///
    /// - Returns: the new version.
    /// - Throws: ``TroveError/documentNotFound(_:)``, ``TroveError/versionConflict(id:expected:actual:)``.
    @discardableResult
    public func update(_ document: Document, ifVersion version: Int64? = nil) async throws -> Int64
    {
        try await writer { try $0.update(document, ifVersion: version) }
    }

    /// Changes some fields, or JSON paths inside them, of one document; `.null` clears or removes.
    ///
    /// ```swift
    /// try await items.patch(1, [Field("score"): 0.95, Field("meta", path: "$.reviewed"): true])
    /// ```
    /// - Returns: the document as stored afterwards.
    @discardableResult
    public func patch(_ id: DocumentID, _ changes: [Field: Value], ifVersion version: Int64? = nil)
        async throws
        -> Document
    {
        try await writer { try $0.patch(id, changes, ifVersion: version) }
    }

    /// Deletes one document. - Returns: whether it existed.
    @discardableResult
    public func delete(id: DocumentID) async throws -> Bool {
        try await writer { try $0.delete(id: id) }
    }

    /// Deletes documents by id. - Returns: how many existed.
    @discardableResult
    public func delete(ids: [DocumentID]) async throws -> Int {
        try await writer { try $0.delete(ids: ids) }
    }

    /// Deletes every document passing `filter`. - Returns: how many.
    @discardableResult
    public func delete(where filter: Filter) async throws -> Int {
        try await writer { try $0.delete(where: filter) }
    }

    // MARK: Reading (on a reader connection)

    /// The document with this id, or nil.
    public func fetch(id: DocumentID) async throws -> Document? {
        try await reader(transaction: false) { try $0.fetch(id: id) }
    }

    /// The documents of an unranked query, in its order.
    public func fetch(_ query: Query = Query()) async throws -> [Document] {
        try await reader(transaction: false) { try $0.fetch(query) }
    }

    /// One page of an unranked query and the cursor for the next.
    ///
    /// ```swift
    /// var page = try await items.page(Query().sorted(by: .ascending("title")).limit(100))
    /// while let next = page.next { page = try await items.page(query.after(next)) }
    /// ```
    public func page(_ query: Query) async throws -> Page {
        try await reader(transaction: false) { try $0.page(query) }
    }

    /// The ranked results of a query with vector and/or text legs.
    public func search(_ query: Query) async throws -> [Hit<Document>] {
        try await reader { try $0.search(query) }
    }

    /// How many documents pass `filter`.
    public func count(where filter: Filter = .all) async throws -> Int {
        try await reader(transaction: false) { try $0.count(where: filter) }
    }

    /// Aggregates over the documents passing `filter`, or over the results of a ranked query.
    ///
    /// - Throws: ``TroveError/notNumeric(field:aggregate:)`` for sum/avg of a non-numeric field.
    public func aggregate(
        _ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
        over search: Query? = nil
    ) async throws -> [AggregateRow] {
        try await reader {
            try $0.aggregate(aggregates, groupBy: groupBy, where: filter, over: search)
        }
    }

    /// How the query runs: SQLite's plan for the parts pushed down, and the in-memory legs.
    public func explain(_ query: Query) async throws -> [String] {
        try await reader { try $0.explain(query) }
    }

    /// Compares every derived index with the table. - Returns: the problems (empty when healthy).
    public func verify() async throws -> [String] {
        let store = self.store
        return try await database.writing { try store.indexes.verify($0) }
    }

    /// Rebuilds every derived index from the table.
    public func repair() async throws {
        let store = self.store
        try await database.writing { try store.indexes.repair($0) }
    }

    /// Runs `body` on a reader; `transaction: false` for bodies that run one statement.
    func reader<T: Sendable>(
        transaction: Bool = true, _ body: @Sendable (DocumentReader) throws -> T
    ) async throws -> T {
        let name = self.name
        return try await database.reading(transaction: transaction) { connection, lookup in
            try body(
                DocumentReader(store: try lookup(name), connection: connection, source: .indexes))
        }
    }

    /// Runs `body` on the writer, in a transaction of its own: the transaction is the write's,
    /// so no savepoint is added around it (one that throws rolls the transaction back).
    func writer<T: Sendable>(_ body: @Sendable (DocumentWriter) throws -> T) async throws -> T {
        let store = self.store
        return try await database.writing {
            try body(DocumentWriter(store: store, connection: $0, savepoints: false))
        }
    }
}

/// What a collection's reads and writes run on: its store, one connection, and where ranked
/// queries find vectors. Trove's own; ``DocumentReading`` and ``DocumentWriting`` are built on it.
public struct DocumentAccess {
    let store: DocumentStore
    let connection: Connection
    let source: DocumentStore.VectorSource
    /// Whether each write is a savepoint of its own (inside `database.write { }`, so one that
    /// throws leaves nothing behind when the body catches the error and goes on), or runs in a
    /// transaction that is the write's alone (a collection's own call).
    let savepoints: Bool
}

/// Reads of one collection on one connection's snapshot, written once for every reader: a
/// ``DocumentReader`` (`database.read { }`, a collection's reader pool) and a
/// ``DocumentWriter`` (`database.write { }`, seeing its transaction's writes), as GRDB's
/// `DatabaseWriter` refines `DatabaseReader`. ``DocumentCollection``'s async reads are one-line
/// calls through it.
public protocol DocumentReading {
    /// The store and connection the reads run on (Trove's own).
    var _access: DocumentAccess { get }
}

extension DocumentReading {
    /// The document with this id, or nil.
    public func fetch(id: DocumentID) throws -> Document? {
        try _access.store.fetch(id: id, on: _access.connection)
    }
    /// The documents of an unranked query, in its order.
    public func fetch(_ query: Query = Query()) throws -> [Document] {
        try _access.store.fetch(query, on: _access.connection, wantsCursor: false).documents
    }
    /// One page of an unranked query and the cursor for the next.
    public func page(_ query: Query) throws -> Page {
        try _access.store.fetch(query, on: _access.connection)
    }
    /// The ranked results of a query with vector and/or text legs.
    public func search(_ query: Query) throws -> [Hit<Document>] {
        try _access.store.search(query, source: _access.source, on: _access.connection)
    }
    /// How many documents pass the filter.
    public func count(where filter: Filter = .all) throws -> Int {
        try _access.store.count(filter, on: _access.connection)
    }
    /// Each document passing the filter, in id order, until `body` returns false.
    public func scan(where filter: Filter = .all, _ body: (Document) throws -> Bool) throws {
        try _access.store.scan(filter, on: _access.connection, body)
    }
    /// Aggregates over the documents passing `filter`, or over the results of a ranked query.
    ///
    /// - Throws: ``TroveError/notNumeric(field:aggregate:)`` for sum/avg of a non-numeric field.
    public func aggregate(
        _ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
        over search: Query? = nil
    ) throws -> [AggregateRow] {
        let (store, connection, source) = (_access.store, _access.connection, _access.source)
        return try connection.transaction(.deferred) {
            let rids = try search.map {
                try store.ranked($0, source: source, on: connection).page.map(\.id)
            }
            return try store.aggregate(
                aggregates, groupBy: groupBy, filter: filter, within: rids, on: connection)
        }
    }
    /// How the query runs: SQLite's plan for the parts pushed down, and the in-memory legs.
    public func explain(_ query: Query) throws -> [String] {
        try _access.store.explain(query, on: _access.connection)
    }
}

/// Writes of one collection on the writer connection, written once; refines
/// ``DocumentReading`` (reads see the transaction's own writes).
public protocol DocumentWriting: DocumentReading {}

extension DocumentWriting {
    /// Runs one write: in a savepoint of its own inside `database.write { }`. Except `update`,
    /// which is one statement (SQLite undoes a failed statement by itself): a savepoint there
    /// made SQLite copy every page the update touched to its sub-journal and cost two more
    /// statements per document.
    func atomically<T>(_ body: () throws -> T) throws -> T {
        _access.savepoints ? try _access.connection.savepoint(body) : try body()
    }

    /// Inserts documents, replacing those whose id exists (their version goes up); a replaced
    /// document takes `expiry` (`.never` clears one). - Returns: their ids, in order.
    @discardableResult
    public func upsert(_ documents: [Document], expiry: Expiry = .never) throws -> [DocumentID] {
        try atomically {
            try _access.store.write(
                documents, mode: .upsert, expiry: expiry, on: _access.connection)
        }
    }
    /// Replaces a document's fields, optionally only at a given version. - Returns: the new version.
    @discardableResult
    public func update(_ document: Document, ifVersion version: Int64? = nil) throws -> Int64 {
        try _access.store.update(document, ifVersion: version, on: _access.connection)
    }
    /// Changes some fields, or JSON paths inside them; `.null` clears or removes. - Returns: the stored document.
    @discardableResult
    public func patch(_ id: DocumentID, _ changes: [Field: Value], ifVersion version: Int64? = nil)
        throws -> Document
    {
        try atomically {
            try _access.store.patch(id, changes, ifVersion: version, on: _access.connection)
        }
    }
    /// Deletes one document. - Returns: whether it existed.
    @discardableResult
    public func delete(id: DocumentID) throws -> Bool { try delete(ids: [id]) == 1 }
    /// Deletes documents by id. - Returns: how many existed.
    @discardableResult
    public func delete(ids: [DocumentID]) throws -> Int {
        try atomically { try _access.store.delete(ids: ids, on: _access.connection) }
    }
    /// Deletes every document passing `filter`. - Returns: how many.
    @discardableResult
    public func delete(where filter: Filter) throws -> Int {
        try atomically { try _access.store.delete(where: filter, on: _access.connection) }
    }
}

/// Reads on one connection's snapshot (inside `database.read { }` or a write transaction).
public struct DocumentReader: DocumentReading {
    let store: DocumentStore
    let connection: Connection
    let source: DocumentStore.VectorSource

    public var _access: DocumentAccess {
        DocumentAccess(store: store, connection: connection, source: source, savepoints: false)
    }
}

/// Reads and writes inside `database.write { tx in ... }`.
public struct DocumentWriter: DocumentWriting, RecordWriter {
    let store: DocumentStore
    let connection: Connection
    let savepoints: Bool

    init(store: DocumentStore, connection: Connection, savepoints: Bool = true) {
        self.store = store
        self.connection = connection
        self.savepoints = savepoints
    }

    public var _access: DocumentAccess {
        DocumentAccess(store: store, connection: connection, source: .table, savepoints: savepoints)
    }

    /// Reads that see this transaction's own writes.
    public var reader: DocumentReader {
        DocumentReader(store: store, connection: connection, source: .table)
    }

    public func _insert(_ documents: [Document], expiry: Expiry) throws -> [DocumentID] {
        try atomically {
            try store.write(documents, mode: .insert, expiry: expiry, on: connection)
        }
    }
}
