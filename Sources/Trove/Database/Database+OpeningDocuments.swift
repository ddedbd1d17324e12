import TroveSQLite

extension Database {
    /// Opens a database and one document collection in it before returning, for a synchronous
    /// initialiser that must report a schema mismatch at once: TroveVecKit's `VectorStore`, whose
    /// `init(dbPath:...)` throws as SQLiteVecKit's does. Everyone else awaits
    /// ``documents(_:schema:)`` on an open database.
    ///
    /// `package`, not `public`: it exists for that one initialiser in this package.
    ///
    /// - Parameters:
    ///   - path: the file, created when missing; nil for a private in-memory database.
    ///   - name: the collection, created with `schema` when missing.
    ///   - schema: its schema; an existing collection must have exactly this one.
    /// - Returns: the collection (its ``DocumentCollection/database`` is the opened database).
    /// - Throws: what ``init(path:readOnly:busyTimeout:clock:)`` and ``documents(_:schema:)`` throw.
    package static func openingDocuments(
        at path: String?, _ name: String, schema: DocumentSchema
    ) throws -> DocumentCollection {
        let database = try Database(
            path.map { .file($0) } ?? .inMemory, options: .init(),
            preparingDocuments: [(name, schema)])
        // The initialiser registered the store; no one else holds the database yet.
        guard let store = database.documentStores[name] else {
            preconditionFailure("the database opened \(name) but did not register it")
        }
        return DocumentCollection(database: database, store: store)
    }
}
