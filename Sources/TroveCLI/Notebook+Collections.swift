import Foundation
import Trove
import TroveSQLite

/// The named collections of a notebook, kept in the table `trove_collections` (name, paths as a
/// JSON array, mask, context). Their files' hashes are in `trove_files`, keyed by collection
/// and path; their records carry `collection` in their metadata.
extension Notebook {
    static let collectionsTable = "trove_collections"

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
                for table in [Self.collectionName]
                    + companions.indices.map({ Self.companionName($0 + 1) })
                {
                    try await database.execute(
                        """
                        UPDATE \(table) SET metadata = json_set(metadata, '$.collection', ?)
                        WHERE json_extract(metadata, '$.file') IS NOT NULL
                        """, bindings: [.text(NoteCollection.implicitName)])
                }
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

    /// Every collection, by name.
    func collections() async throws -> [NoteCollection] {
        try await database.query(
            "SELECT name, paths, mask, context FROM \(Self.collectionsTable) ORDER BY name"
        ).map { row in
            let paths =
                (try? JSONValue.parse(row.string("paths") ?? "[]")).flatMap { value -> [String]? in
                    if case .array(let items) = value { return items.compactMap(\.string) }
                    return nil
                } ?? []
            return NoteCollection(
                name: row.string("name") ?? "", paths: paths,
                mask: try Glob(row.string("mask") ?? Glob.defaultPattern),
                context: row.string("context"))
        }
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
    }

    /// The record tables: `notes` and its companions.
    private var recordTables: [String] {
        [Self.collectionName] + companions.indices.map { Self.companionName($0 + 1) }
    }

    /// Removes a collection, its records and its files' hashes in one transaction; the other
    /// collections' records stay. Returns how many records went.
    func removeCollection(named name: String) async throws -> Int {
        try await inTransaction {
            var removed = 0
            for table in recordTables {
                let count = try await database.execute(
                    "DELETE FROM \(table) WHERE json_extract(metadata, '$.collection') = ?",
                    bindings: [.text(name)])
                if table == Self.collectionName { removed = count }
            }
            try await database.execute(
                "DELETE FROM \(Self.filesTable) WHERE collection = ?", bindings: [.text(name)])
            try await database.execute(
                "DELETE FROM \(Self.collectionsTable) WHERE name = ?", bindings: [.text(name)])
            return removed
        }
    }

    /// Renames a collection in one transaction: its row, its files and its records' labels.
    func renameCollection(_ old: String, to new: String) async throws {
        try await inTransaction {
            try await database.execute(
                "UPDATE \(Self.collectionsTable) SET name = ? WHERE name = ?",
                bindings: [.text(new), .text(old)])
            try await database.execute(
                "UPDATE \(Self.filesTable) SET collection = ? WHERE collection = ?",
                bindings: [.text(new), .text(old)])
            for table in recordTables {
                try await database.execute(
                    """
                    UPDATE \(table) SET metadata = json_set(metadata, '$.collection', ?)
                    WHERE json_extract(metadata, '$.collection') = ?
                    """, bindings: [.text(new), .text(old)])
            }
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
