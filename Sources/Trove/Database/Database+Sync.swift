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
            "SELECT name, \"notnull\", dflt_value FROM pragma_table_info(?) ORDER BY cid", [.text(name)])
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
            let manifest = store.layout.preset.flatMap { field.name == "embedding" ? $0.embedding : nil }
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

    /// Runs `body` on the writer connection outside any transaction (DDL that must see the
    /// schema as it is, statements that open their own transaction).
    package func syncConnection<T: Sendable>(_ body: @Sendable (Connection) throws -> T) rethrows -> T {
        try body(connection)
    }
}
