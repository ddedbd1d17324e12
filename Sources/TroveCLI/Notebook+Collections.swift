import Foundation
import Trove
import TroveSQLite

/// The named collections of a notebook, kept in the table `trove_collections` (name, paths as a
/// JSON array, mask, context). Their files' hashes are in `trove_files`, keyed by collection
/// and path; their records carry `collection` in their metadata.
///
/// What a collection means travels with the space: its name, context and mask are also a
/// document of the synced collection ``definitionsName`` (id: the name), so another device
/// shows the context with the notes it receives and both converge field by field, as notes
/// do. Its paths name folders of this machine and stay in `trove_collections` alone.
extension Notebook {
    static let collectionsTable = "trove_collections"
    /// The synced document collection of collection definitions (`trove_` names are reserved
    /// for the store itself).
    static let definitionsName = "note_collections"
    static let definitionsSchema = DocumentSchema(
        id: .string, fields: [.text("context", optional: true), .text("mask")])

    /// Opens the synced collection definitions, creating them (the first time: one definition
    /// per collection of `trove_collections`, so a database of an older version loses nothing
    /// and sends its contexts at its next sync). A definition removed by another device is not
    /// made again from the local table: that happens only when the definitions are created.
    @discardableResult
    static func prepareDefinitions(_ database: Database) async throws -> DocumentCollection {
        let existed =
            try await database.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                bindings: [.text(definitionsName)]
            ).first != nil
        let definitions = try await database.documents(definitionsName, schema: definitionsSchema)
        guard !existed else { return definitions }
        let local =
            try await database.query(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                bindings: [.text(collectionsTable)]
            ).first != nil
        guard local else { return definitions }
        let rows = try await database.query(
            "SELECT name, mask, context FROM \(collectionsTable) ORDER BY name")
        let documents = rows.compactMap { row -> Document? in
            guard let name = row.string("name") else { return nil }
            return Document(
                id: .string(name),
                [
                    "mask": .string(row.string("mask") ?? Glob.defaultPattern),
                    "context": row.string("context").map(Value.string) ?? .null,
                ])
        }
        if !documents.isEmpty { try await definitions.insert(documents) }
        return definitions
    }

    /// Creates the tool's own tables, and moves a database indexed before collections existed
    /// to them: its files become the implicit collection's (each file one of its paths, so
    /// nothing new is picked up and nothing is removed until `trove index FOLDER` adds the
    /// folder) and their records are labelled with it.
    func prepareTables() async throws {
        try await database.execute(
            """
            CREATE TABLE IF NOT EXISTS \(Self.collectionsTable)(
                name TEXT PRIMARY KEY, paths TEXT NOT NULL, mask TEXT NOT NULL, context TEXT,
                created_at REAL NOT NULL)
            """)
        try await Self.prepareDefinitions(database)
        let columns = try await database.query("PRAGMA table_info(\(Self.filesTable))").compactMap {
            $0.string("name")
        }
        if !columns.isEmpty, !columns.contains("collection") {
            try await inTransaction {
                let files = try await database.query(
                    "SELECT path FROM \(Self.filesTable) ORDER BY path"
                )
                .compactMap { $0.string("path") }
                try await database.execute(
                    "ALTER TABLE \(Self.filesTable) RENAME TO trove_files_v1")
                try await createFilesTable()
                try await database.execute(
                    """
                    INSERT INTO \(Self.filesTable)(collection, path, sha256, bytes, records, indexed_at)
                    SELECT ?, path, sha256, bytes, records, indexed_at FROM trove_files_v1
                    """, bindings: [.text(NoteCollection.implicitName)])
                try await database.execute("DROP TABLE trove_files_v1")
                try await database.execute(
                    """
                    UPDATE \(Self.collectionName) SET metadata = json_set(metadata, '$.collection', ?)
                    WHERE json_extract(metadata, '$.file') IS NOT NULL
                    """, bindings: [.text(NoteCollection.implicitName)])
                if !files.isEmpty {
                    try await save(
                        NoteCollection(
                            name: NoteCollection.implicitName, paths: files,
                            mask: .standard, context: nil))
                }
            }
        } else {
            try await createFilesTable()
        }
    }

    private func createFilesTable() async throws {
        try await database.execute(
            """
            CREATE TABLE IF NOT EXISTS \(Self.filesTable)(
                collection TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
                bytes INTEGER NOT NULL, records INTEGER NOT NULL, indexed_at REAL NOT NULL,
                PRIMARY KEY (collection, path))
            """)
    }

    /// Every collection, by name: those defined here (with their paths) and those whose
    /// definitions came from other devices (no paths here). Context and mask are the synced
    /// definition's when there is one.
    func collections() async throws -> [NoteCollection] {
        var collections: [String: NoteCollection] = [:]
        for row in try await database.query(
            "SELECT name, paths, mask, context FROM \(Self.collectionsTable)")
        {
            let paths =
                (try? JSONValue.parse(row.string("paths") ?? "[]")).flatMap { value -> [String]? in
                    if case .array(let items) = value { return items.compactMap(\.string) }
                    return nil
                } ?? []
            let name = row.string("name") ?? ""
            collections[name] = NoteCollection(
                name: name, paths: paths,
                mask: try Glob(row.string("mask") ?? Glob.defaultPattern),
                context: row.string("context"))
        }
        for definition in try await Self.prepareDefinitions(database).fetch() {
            let name = definition.id.description
            var collection =
                collections[name]
                ?? NoteCollection(name: name, paths: [], mask: .standard, context: nil)
            if case .string(let pattern) = definition["mask"] {
                collection.mask = try Glob(pattern)
            }
            if case .string(let text) = definition["context"] {
                collection.context = text
            } else {
                collection.context = nil
            }
            collections[name] = collection
        }
        return collections.values.sorted { $0.name < $1.name }
    }

    /// The collection named `name`, if there is one.
    func collection(named name: String) async throws -> NoteCollection? {
        try await collections().first { $0.name == name }
    }

    /// Writes a collection (a new one, or new paths, mask or context for an existing one).
    func save(_ collection: NoteCollection) async throws {
        let paths = JSONValue.array(collection.paths.map(JSONValue.string)).serialized()
        try await database.execute(
            """
            INSERT INTO \(Self.collectionsTable)(name, paths, mask, context, created_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET paths = excluded.paths, mask = excluded.mask,
                context = excluded.context
            """,
            bindings: [
                .text(collection.name), .text(paths), .text(collection.mask.pattern),
                collection.context.map(SQLValue.text) ?? .null, .real(Date().timeIntervalSince1970),
            ])
        try await Self.saveDefinition(collection, in: database)
    }

    /// Writes a collection's definition, changing only the fields that differ, so a concurrent
    /// edit of the other field on another device is kept (sync merges field by field).
    static func saveDefinition(_ collection: NoteCollection, in database: Database) async throws {
        let definitions = try await prepareDefinitions(database)
        let id = DocumentID.string(collection.name)
        let mask = Value.string(collection.mask.pattern)
        let context = collection.context.map(Value.string) ?? .null
        guard let stored = try await definitions.fetch(id: id) else {
            try await definitions.insert(Document(id: id, ["mask": mask, "context": context]))
            return
        }
        var changes: [Field: Value] = [:]
        if (stored["mask"] ?? .null) != mask { changes[Field("mask")] = mask }
        if (stored["context"] ?? .null) != context { changes[Field("context")] = context }
        if !changes.isEmpty { try await definitions.patch(id, changes) }
    }

    /// Removes a collection, its records and its files' hashes in one transaction; the other
    /// collections' records stay. Returns how many records went.
    func removeCollection(named name: String) async throws -> Int {
        try await inTransaction {
            let removed = try await database.execute(
                "DELETE FROM \(Self.collectionName) WHERE json_extract(metadata, '$.collection') = ?",
                bindings: [.text(name)])
            try await database.execute(
                "DELETE FROM \(Self.filesTable) WHERE collection = ?", bindings: [.text(name)])
            try await database.execute(
                "DELETE FROM \(Self.collectionsTable) WHERE name = ?", bindings: [.text(name)])
            try await Self.prepareDefinitions(database).delete(id: .string(name))
            return removed
        }
    }

    /// Renames a collection in one transaction: its row, its files and its records' labels.
    func renameCollection(_ old: String, to new: String) async throws {
        let definitions = try await Self.prepareDefinitions(database)
        try await inTransaction {
            // A definition's id is its name: the renamed one is a new record everywhere.
            if let stored = try await definitions.fetch(id: .string(old)) {
                try await definitions.delete(id: .string(old))
                try await definitions.insert(Document(id: .string(new), stored.fields))
            }
            try await database.execute(
                "UPDATE \(Self.collectionsTable) SET name = ? WHERE name = ?",
                bindings: [.text(new), .text(old)])
            try await database.execute(
                "UPDATE \(Self.filesTable) SET collection = ? WHERE collection = ?",
                bindings: [.text(new), .text(old)])
            try await database.execute(
                """
                UPDATE \(Self.collectionName) SET metadata = json_set(metadata, '$.collection', ?)
                WHERE json_extract(metadata, '$.collection') = ?
                """, bindings: [.text(new), .text(old)])
        }
    }

    /// The number of records and files of each collection, by name.
    func collectionCounts() async throws -> [String: (records: Int, files: Int)] {
        var counts: [String: (records: Int, files: Int)] = [:]
        for row in try await database.query(
            """
            SELECT json_extract(metadata, '$.collection') AS name, count(*) AS n
            FROM \(Self.collectionName) GROUP BY 1
            """)
        {
            if let name = row.string("name") {
                counts[name, default: (0, 0)].records = row.int("n") ?? 0
            }
        }
        for row in try await database.query(
            "SELECT collection, count(*) AS n FROM \(Self.filesTable) GROUP BY collection")
        {
            if let name = row.string("collection") {
                counts[name, default: (0, 0)].files = row.int("n") ?? 0
            }
        }
        return counts
    }
}
