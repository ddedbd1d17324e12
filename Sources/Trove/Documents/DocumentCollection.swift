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
public struct DocumentCollection: Sendable {
    /// The database it belongs to.
    public let database: Database
    let store: DocumentStore

    /// The collection's name.
    public var name: String { store.name }
    /// Its frozen schema.
    public var schema: DocumentSchema { store.schema }

    // MARK: Writing (each call is one transaction)

    /// Inserts one document. - Throws: ``TroveError/duplicateDocumentID(_:)`` when the id exists,
    /// and the validation errors of ``insert(_:)-([Document])``.
    public func insert(_ document: Document) async throws {
        try await insert([document])
    }

    /// Inserts documents, all or nothing: each is validated before the first is written.
    ///
    /// - Throws: ``TroveError/unknownField(field:known:)``, ``TroveError/typeMismatch(field:expected:value:)``,
    ///   ``TroveError/missingField(field:)``, ``TroveError/duplicateDocumentID(_:)``,
    ///   ``TroveError/uniqueViolation(field:value:)``; nothing is written.
    /// - Complexity: O(n) statements in one transaction.
    public func insert(_ documents: [Document]) async throws {
        let store = self.store
        try await database.writing { try store.write(documents, mode: .insert, on: $0) }
    }

    /// Inserts a document made of `fields` under a new id, and returns it: a time-ordered UUIDv7
    /// for `.uuid` and `.string` collections (as lowercase text for strings), unique across
    /// devices; what SQLite assigns a new rowid (one above the largest) for `.int64` ones.
    ///
    /// ```swift
    /// let id = try await notes.insert(["title": "Dentist", "year": 2026])
    /// let note = try await notes.fetch(id: id)
    /// ```
    /// - Returns: the new id.
    /// - Throws: the validation errors of ``insert(_:)-([Document])``; nothing is written.
    @discardableResult
    public func insert(_ fields: [String: Value]) async throws -> DocumentID {
        try await insert([fields])[0]
    }

    /// Inserts documents made of each of `fieldSets`, all or nothing, each under a new id
    /// (see ``insert(_:)-([String:Value])``).
    ///
    /// - Returns: the new ids, in order (increasing).
    /// - Complexity: O(n) rows in one transaction.
    @discardableResult
    public func insert(_ fieldSets: [[String: Value]]) async throws -> [DocumentID] {
        let store = self.store
        return try await database.writing { try store.insert(generatingIDs: fieldSets, on: $0) }
    }

    /// Inserts documents, replacing those whose id exists (their version goes up).
    public func upsert(_ documents: [Document]) async throws {
        let store = self.store
        try await database.writing { try store.write(documents, mode: .upsert, on: $0) }
    }

    /// Replaces a document's fields. With `ifVersion`, only when the stored version still equals
    /// it (optimistic concurrency).
    ///
    /// - Returns: the new version.
    /// - Throws: ``TroveError/documentNotFound(_:)``, ``TroveError/versionConflict(id:expected:actual:)``.
    @discardableResult
    public func update(_ document: Document, ifVersion version: Int64? = nil) async throws -> Int64 {
        let store = self.store
        return try await database.writing { try store.update(document, ifVersion: version, on: $0) }
    }

    /// Changes some fields, or JSON paths inside them, of one document; `.null` clears or removes.
    ///
    /// ```swift
    /// try await items.patch(1, [Field("score"): 0.95, Field("meta", path: "$.reviewed"): true])
    /// ```
    /// - Returns: the document as stored afterwards.
    @discardableResult
    public func patch(_ id: DocumentID, _ changes: [Field: Value], ifVersion version: Int64? = nil) async throws -> Document {
        let store = self.store
        return try await database.writing { try store.patch(id, changes, ifVersion: version, on: $0) }
    }

    /// Deletes one document. - Returns: whether it existed.
    @discardableResult
    public func delete(id: DocumentID) async throws -> Bool {
        try await delete(ids: [id]) == 1
    }

    /// Deletes documents by id. - Returns: how many existed.
    @discardableResult
    public func delete(ids: [DocumentID]) async throws -> Int {
        let store = self.store
        return try await database.writing { try store.delete(ids: ids, on: $0) }
    }

    /// Deletes every document passing `filter`. - Returns: how many.
    @discardableResult
    public func delete(where filter: Filter) async throws -> Int {
        let store = self.store
        return try await database.writing { try store.delete(where: filter, on: $0) }
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
    public func search(_ query: Query) async throws -> [DocumentHit] {
        try await reader { try $0.search(query) }
    }

    /// How many documents pass `filter`.
    public func count(_ filter: Filter = .all) async throws -> Int {
        try await reader(transaction: false) { try $0.count(filter) }
    }

    /// Aggregates over the documents passing `filter`, or over the results of a ranked query.
    ///
    /// - Throws: ``TroveError/notNumeric(field:aggregate:)`` for sum/avg of a non-numeric field.
    public func aggregate(_ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
                          over search: Query? = nil) async throws -> [AggregateRow] {
        try await reader { try $0.aggregate(aggregates, groupBy: groupBy, where: filter, over: search) }
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
    private func reader<T: Sendable>(
        transaction: Bool = true, _ body: @Sendable (DocumentReader) throws -> T
    ) async throws -> T {
        let name = self.name
        return try await database.reading(transaction: transaction) { connection, lookup in
            try body(DocumentReader(store: try lookup(name), connection: connection, source: .indexes))
        }
    }
}

/// Reads on one connection's snapshot (inside `database.read { }` or a write transaction).
public struct DocumentReader {
    let store: DocumentStore
    let connection: Connection
    let source: DocumentStore.VectorSource

    /// The document with this id, or nil.
    public func fetch(id: DocumentID) throws -> Document? { try store.fetch(id: id, on: connection) }
    /// The documents of an unranked query.
    public func fetch(_ query: Query = Query()) throws -> [Document] {
        try store.fetch(query, on: connection, wantsCursor: false).documents
    }
    /// One page and the next cursor.
    public func page(_ query: Query) throws -> Page { try store.fetch(query, on: connection) }
    /// Ranked results.
    public func search(_ query: Query) throws -> [DocumentHit] { try store.search(query, source: source, on: connection) }
    /// How many documents pass the filter.
    public func count(_ filter: Filter = .all) throws -> Int { try store.count(filter, on: connection) }
    /// Each document passing the filter, in id order, until `body` returns false.
    public func scan(_ filter: Filter = .all, _ body: (Document) throws -> Bool) throws {
        try store.scan(filter, on: connection, body)
    }
    /// Aggregates, optionally over a ranked query's results.
    public func aggregate(_ aggregates: [Aggregate], groupBy: [Field] = [], where filter: Filter = .all,
                          over search: Query? = nil) throws -> [AggregateRow] {
        try connection.transaction(.deferred) {
            let rids = try search.map { try store.ranked($0, source: source, on: connection).page.map(\.id) }
            return try store.aggregate(aggregates, groupBy: groupBy, filter: filter, within: rids, on: connection)
        }
    }
    /// The plan.
    public func explain(_ query: Query) throws -> [String] { try store.explain(query, on: connection) }
}

/// Reads and writes inside `database.write { tx in ... }`.
public struct DocumentWriter {
    let store: DocumentStore
    let connection: Connection

    /// Reads that see this transaction's own writes.
    public var reader: DocumentReader { DocumentReader(store: store, connection: connection, source: .table) }

    // Each write is a savepoint: one that throws leaves nothing behind, even when the
    // transaction catches the error and goes on. Except `update`, which is one statement
    // (SQLite undoes a failed statement by itself): a savepoint there made SQLite copy every
    // page the update touched to its sub-journal and cost two more statements per document.

    /// Inserts documents (validated first).
    public func insert(_ documents: [Document]) throws { try atomically { try store.write(documents, mode: .insert, on: connection) } }
    /// Inserts one document.
    public func insert(_ document: Document) throws { try insert([document]) }
    /// Inserts a document made of `fields` under a new id. - Returns: the id.
    @discardableResult
    public func insert(_ fields: [String: Value]) throws -> DocumentID { try insert([fields])[0] }
    /// Inserts documents made of each of `fieldSets`, each under a new id. - Returns: the ids.
    @discardableResult
    public func insert(_ fieldSets: [[String: Value]]) throws -> [DocumentID] {
        try atomically { try store.insert(generatingIDs: fieldSets, on: connection) }
    }
    /// Inserts or replaces documents.
    public func upsert(_ documents: [Document]) throws { try atomically { try store.write(documents, mode: .upsert, on: connection) } }
    /// Replaces a document's fields, optionally only at a given version. - Returns: the new version.
    @discardableResult
    public func update(_ document: Document, ifVersion version: Int64? = nil) throws -> Int64 {
        try store.update(document, ifVersion: version, on: connection)
    }
    /// Changes some fields or JSON paths. - Returns: the stored document.
    @discardableResult
    public func patch(_ id: DocumentID, _ changes: [Field: Value], ifVersion version: Int64? = nil) throws -> Document {
        try atomically { try store.patch(id, changes, ifVersion: version, on: connection) }
    }
    /// Deletes by id. - Returns: how many existed.
    @discardableResult
    public func delete(ids: [DocumentID]) throws -> Int { try atomically { try store.delete(ids: ids, on: connection) } }
    /// Deletes by filter. - Returns: how many.
    @discardableResult
    public func delete(where filter: Filter) throws -> Int { try atomically { try store.delete(where: filter, on: connection) } }

    func atomically<T>(_ body: () throws -> T) throws -> T { try connection.savepoint(body) }

    /// The document with this id, or nil.
    public func fetch(id: DocumentID) throws -> Document? { try reader.fetch(id: id) }
    /// The documents of an unranked query.
    public func fetch(_ query: Query = Query()) throws -> [Document] { try reader.fetch(query) }
    /// Ranked results (vector legs scan the table).
    public func search(_ query: Query) throws -> [DocumentHit] { try reader.search(query) }
    /// How many documents pass the filter.
    public func count(_ filter: Filter = .all) throws -> Int { try reader.count(filter) }
}
