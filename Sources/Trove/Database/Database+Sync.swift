import Foundation
import TroveSQLite

/// What TroveSync needs to know of one collection it syncs. `package`: TroveSync's, not the API.
package struct SyncedCollectionShape: Sendable, Hashable {
    /// The collection's name (its table).
    package var name: String
    /// The id kind (sync refuses `.int64`: such ids collide across devices).
    package var idKind: IDKind
    /// Whether it is a search collection (the preset schema).
    package var isSearchCollection: Bool
    /// The columns that sync, in table order: declared fields, `_extra`, `_expires` (never the
    /// internal `_rowid`, the id itself or the local `_version`).
    package var columns: [String]
    /// The columns a new row cannot do without (NOT NULL without a default).
    package var requiredColumns: Set<String>
    /// The vector fields, each with the embedding model that made its vectors when the schema
    /// names one.
    package var vectorFields: [String: EmbeddingManifest?]
}

extension Database {
    /// The shape of the collection `name` (a document, model or search collection).
    ///
    /// - Throws: ``TroveError/collectionNotFound(_:)``.
    package func syncedCollectionShape(_ name: String) throws -> SyncedCollectionShape {
        let store = try anyDocumentStore(name)
        let info = try connection.query(
            "SELECT name, \"notnull\", dflt_value FROM pragma_table_info(?) ORDER BY cid",
            [.text(name)])
        let bookkeeping: Set<String> = ["_rowid", "id", "_version"]
        var columns: [String] = []
        var required: Set<String> = []
        for row in info {
            guard let column = row.string(at: 0), !bookkeeping.contains(column) else { continue }
            columns.append(column)
            if row.int64(at: 1) == 1 && row.isNull(at: 2) { required.insert(column) }
        }
        var vectors: [String: EmbeddingManifest?] = [:]
        for field in store.schema.fields {
            guard case .vector = field.type else { continue }
            let manifest =
                store.layout.preset.flatMap { $0.manifest(of: field.name) }
                ?? store.schema.embeddingSources[field.name]?.manifest
            vectors[field.name] = .some(manifest)
        }
        return SyncedCollectionShape(
            name: name, idKind: store.schema.id, isSearchCollection: store.layout.preset != nil,
            columns: columns, requiredColumns: required, vectorFields: vectors)
    }

    /// How many migrations the file's timeline records (0 without a migrator): the schema version
    /// a change set names.
    package func syncSchemaVersion() throws -> Int {
        try MigrationTimeline.applied(connection).count
    }

    /// Runs `body` with the writer connection in one immediate transaction; after the commit the
    /// built in-memory indexes follow the change log, as after any write.
    package func syncWrite<T: Sendable>(_ body: @Sendable (Connection) throws -> T) throws -> T {
        try writing(body)
    }

    /// Runs `body` in one immediate transaction with a ``SyncRowWriter`` for new rows (applying
    /// pulled change sets); the in-memory indexes follow after the commit.
    package func syncApply<T: Sendable>(_ body: @Sendable (SyncRowWriter) throws -> T) throws -> T {
        let result = try connection.transaction(.immediate) {
            try body(
                SyncRowWriter(
                    connection: connection, lookup: { name in try self.anyDocumentStore(name) }))
        }
        documentStores.catchUpAfterCommit(connection)
        return result
    }
}

/// Writes rows new to a collection through its batch insert path (several rows per statement;
/// full text and the change log in bulk for large batches), as a local batch insert does.
package struct SyncRowWriter {
    /// The writer connection, inside the transaction.
    package let connection: Connection
    let lookup: (String) throws -> DocumentStore

    /// The columns ``insert(_:rows:)`` takes, in order: `id`, the written fields, `_extra`
    /// when kept, `_expires` when expiry is allowed. Fields Trove sets itself are not among
    /// them, except in a search collection, whose `created_at` and `updated_at` sync as data
    /// (every device keeps the writer's times).
    package func insertColumns(_ collection: String) throws -> [String] {
        let store = try lookup(collection)
        if store.layout.preset != nil { return ["id"] + store.schema.fields.map(\.name) }
        return
            (store.writeColumns + (store.schema.allowsExpiry ? [DocumentLayout.expiresColumn] : []))
            .map { String($0.dropFirst().dropLast()) }
    }

    /// Search collection rows per multi-row INSERT of ``insert(_:rows:)``.
    static let presetRowsPerStatement = 100

    /// Inserts rows (values already stored forms, in ``insertColumns(_:)`` order) that do not
    /// exist yet. A search collection's rows go in with every column by multi-row INSERTs (its
    /// text index and change log follow by its triggers).
    ///
    /// - Throws: `SQLiteError` or ``TroveError`` for a constraint the rows break (the caller's
    ///   transaction rolls back).
    package func insert(_ collection: String, rows: [[SQLValue]]) throws {
        let store = try lookup(collection)
        if store.layout.preset != nil {
            let columns = try insertColumns(collection).map { "\"\($0)\"" }.joined(separator: ", ")
            let marks =
                "(" + repeatElement("?", count: rows.first?.count ?? 0).joined(separator: ", ")
                + ")"
            var start = 0
            while start < rows.count {
                let end = min(rows.count, start + Self.presetRowsPerStatement)
                try connection.cachedStatement(
                    "INSERT INTO \(store.layout.table)(\(columns)) VALUES "
                        + repeatElement(marks, count: end - start).joined(separator: ", ")
                ).execute(Array(rows[start..<end].joined()))
                start = end
            }
            return
        }
        try store.write(rows: rows, mode: .insert, on: connection) { i in
            Document(
                id: DocumentID.read(rows[i][0], kind: store.schema.id)
                    ?? .string(rows[i][0].description), [:])
        }
    }
}
