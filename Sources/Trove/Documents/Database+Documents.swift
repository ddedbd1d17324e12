import Foundation
import TroveSQLite

extension Database {
    /// Opens the document collection `name`, creating it with `schema` when it does not exist.
    ///
    /// ```swift
    /// let items = try await database.documents("items", schema: DocumentSchema(
    ///     fields: [.text("title"), .integer("year", indexed: true), .real("score")]))
    /// try await items.insert(Document(id: 1, ["title": "Dune", "year": 1965, "score": 0.9]))
    /// ```
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` when it exists with another
    ///   schema (nothing is changed), ``TroveError/invalidName(_:reason:)``,
    ///   ``TroveError/invalidConfiguration(_:)``.
    public func documents(_ name: String, schema: DocumentSchema) throws -> DocumentCollection {
        DocumentCollection(database: self, store: try documentStore(name, requested: schema))
    }

    /// Opens an existing document collection with its stored schema.
    ///
    /// - Throws: ``TroveError/collectionNotFound(_:)``.
    public func documents(named name: String) throws -> DocumentCollection {
        DocumentCollection(database: self, store: try documentStore(name, requested: nil))
    }

    func documentStore(_ name: String, requested: DocumentSchema?) throws -> DocumentStore {
        if let store = documentStores[name] {
            if store.layout.preset != nil {
                throw TroveError.invalidName(
                    name,
                    reason: requested == nil
                        ? "it is a search collection: open it with SearchCollection(named:in:), which takes the same Query, fetch, aggregate and patch"
                        : "a search collection of that name exists; document collections need their own name"
                )
            }
            if let requested {
                try requested.validate()
                let differences = store.schema.differences(from: requested)
                guard differences.isEmpty else {
                    throw TroveError.schemaMismatch(
                        collection: name, details: differences.joined(separator: "; "))
                }
            }
            return store
        }
        if try connection.scalar(
            "SELECT 1 FROM \(CollectionSchema.metaTable) WHERE key = ?",
            [.text("collection.\(name)")]) != nil
        {
            throw TroveError.invalidName(
                name,
                reason: requested == nil
                    ? "it is a search collection: open it with SearchCollection(named:in:), which takes the same Query, fetch, aggregate and patch"
                    : "a search collection of that name exists; document collections need their own name"
            )
        }
        let store = try DocumentStore.open(
            connection: connection, name: name, requested: requested, graph: documentStores.graph,
            clock: clock)
        documentStores[name] = store
        return store
    }

    // MARK: Transactions and reads

    /// Runs `body` in one write transaction: everything it does through `tx` (any document
    /// collection, raw SQL) commits together when it returns, or not at all when it throws.
    ///
    /// The in-memory indexes only ever reflect committed state: after a rollback they are
    /// exactly as before. Searches inside the transaction see its own writes (their vector legs
    /// scan the table, since the shared indexes must not see uncommitted rows).
    ///
    /// ```swift
    /// try await database.write { tx in
    ///     let accounts = try tx.documents("accounts")
    ///     try accounts.patch(1, [Field("balance"): 70])
    ///     try accounts.patch(2, [Field("balance"): 130])
    ///     try tx.execute("INSERT INTO audit(note) VALUES (?)", ["transfer 30"])
    /// }
    /// ```
    public func write<T: Sendable>(_ body: @Sendable (Transaction) throws -> T) throws -> T {
        let result = try connection.transaction(.immediate) {
            try body(
                Transaction(
                    connection: connection, lookup: { name in try self.anyDocumentStore(name) },
                    graph: documentStores.graph))
        }
        documentStores.catchUpAfterCommit(connection)
        return result
    }

    /// The document collection `name`, or the document view of the search collection `name`
    /// (its preset schema), for transactions and snapshot reads.
    func anyDocumentStore(_ name: String) throws -> DocumentStore {
        if let store = documentStores[name] { return store }
        if try SearchCollectionTable.exists(name, on: connection) {
            return try searchStore(name, requested: nil)
        }
        return try documentStore(name, requested: nil)
    }

    /// Runs `body` on one consistent snapshot, on a reader connection (in parallel with writes
    /// and other reads). In-memory databases read on the writer's connection.
    ///
    /// ```swift
    /// let (count, newest) = try await database.read { r in
    ///     let items = try r.documents("items")
    ///     return (try items.count(), try items.fetch(Query().sorted(by: .descending("year")).limit(1)))
    /// }
    /// ```
    public nonisolated func read<T: Sendable>(_ body: @Sendable (ReadTransaction) throws -> T)
        async throws -> T
    {
        try await reading { connection, lookup in
            try withoutActuallyEscaping(lookup) { lookup in
                try body(
                    ReadTransaction(
                        connection: connection, lookup: lookup, graph: documentStores.graph))
            }
        }
    }

    /// Runs `body` on a reader (or, for in-memory databases, on the writer) in a read transaction,
    /// with a way to find document stores from that connection.
    nonisolated func reading<T: Sendable>(
        transaction: Bool = true, yielding: Bool = true,
        _ body: @Sendable (Connection, (String) throws -> DocumentStore) throws -> T
    ) async throws -> T {
        guard let readers else { return try await readOnWriter(body) }
        let stores = documentStores
        return try await readers.withReader(transaction: transaction, yielding: yielding) {
            connection in
            try body(connection) { name in
                if let store = stores[name] { return store }
                // A search collection this database has not opened yet (made by an earlier run or
                // another process): opened here, on the reader, and shared from now on.
                if try SearchCollectionTable.exists(name, on: connection) {
                    let store = try SearchCollectionTable.open(
                        connection: connection, name: name, requested: nil, graph: stores.graph,
                        clock: clock)
                    return stores.insertIfAbsent(name, store)
                }
                // Opened by another handle or process after this database: read its schema here.
                let store = try DocumentStore.open(
                    connection: connection, name: name, requested: nil, graph: stores.graph,
                    clock: clock)
                return stores.insertIfAbsent(name, store)
            }
        }
    }

    private func readOnWriter<T: Sendable>(
        _ body: @Sendable (Connection, (String) throws -> DocumentStore) throws -> T
    )
        throws -> T
    {
        try connection.transaction(.deferred) {
            try body(connection) { name in try self.anyDocumentStore(name) }
        }
    }

    /// Runs `body` with the writer connection in an immediate transaction.
    func writing<T: Sendable>(_ body: @Sendable (Connection) throws -> T) throws -> T {
        let result = try connection.transaction(.immediate) { try body(connection) }
        documentStores.catchUpAfterCommit(connection)
        return result
    }
}

/// What `database.write { tx in ... }` hands its body: document collections and raw SQL on the
/// writer connection, inside the open transaction. Valid only during the call.
public struct Transaction {
    let connection: Connection
    let lookup: (String) throws -> DocumentStore
    /// The file's links.
    var graph: GraphStore

    /// The document collection `name`, for reads and writes inside this transaction.
    public func documents(_ name: String) throws -> DocumentWriter {
        DocumentWriter(store: try lookup(name), connection: connection)
    }

    /// Runs one SQL statement; returns the number of rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int {
        let before = connection.totalChanges
        let statement = try connection.prepare(sql)
        try statement.execute(bindings)
        return statement.isReadOnly ? 0 : min(connection.totalChanges - before, connection.changes)
    }

    /// Runs one SQL query and returns its rows.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        try connection.prepare(sql).rows(bindings)
    }
}

/// What `database.read { r in ... }` hands its body: one consistent snapshot.
public struct ReadTransaction {
    let connection: Connection
    let lookup: (String) throws -> DocumentStore
    /// The file's links.
    var graph: GraphStore
    /// Inside an observed read (``Database/observe(_:)``): what the read touches.
    var recorder: RegionRecorder? = nil

    /// The document collection `name`, for reads on this snapshot.
    /// A search collection reads here through its document view (its preset schema): its
    /// ranked queries scan the table's vectors exactly, on this snapshot (its in-memory indexes
    /// follow the newest commit; `Collection.search` uses them).
    public func documents(_ name: String) throws -> DocumentReader {
        let store = try lookup(name)
        return DocumentReader(
            store: store, connection: connection,
            source: store.layout.preset == nil ? .indexes : .table)
    }

    /// Runs one read-only SQL query on the snapshot.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        guard let recorder else { return try connection.prepare(sql).rows(bindings) }
        // Observed: the tables it reads are what the live query depends on.
        let (statement, tables) = try connection.readTables { try connection.prepare(sql) }
        recorder.read(tables)
        return try statement.rows(bindings)
    }
}
