import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite

/// Moves a notes database made by an older `trove` to today's layout: Int64 record ids to UUID
/// ids, which sync needs (integer ids chosen on two devices collide, UUIDv7s do not); and the
/// further models' vectors, kept in collections of their own (`notes_vectors_2`, …), into vector
/// fields of the notes (``mergeModelCollections(_:)``).
///
/// It runs by itself whenever the tool opens such a database (``Notebook/openForWriting``,
/// ``Notebook/openExisting``, `trove sync`), before any collection is opened, in one IMMEDIATE
/// transaction: all of it happens or none (a crash, a full disk or an error leaves the old
/// database as it was). Automatic is safe because nothing outside the file names a record id
/// for long: short ids (`#` and 8 hex digits) are hashes of the file path and document id,
/// `trove_files` and `trove_collections` are keyed by path and name, and record ids shown by
/// `search --json` are only meant for an immediate `show` or `rm`.
///
/// What moves to UUIDs: every row of `notes` and of each further model's collection
/// (`notes_vectors_N`, the same ids), with content, source, metadata, vector, `created_at`, `updated_at` and version
/// unchanged, under a new time-ordered UUIDv7 given in the order of the old ids (so ids still
/// sort by age); the text index and change log are rebuilt by the new tables' triggers, the
/// vector indexes catch up from the log. Nothing else in the file names a record id.
enum NotebookMigration {
    /// Migrates `database` when its notes collection has Int64 ids.
    ///
    /// - Returns: how many notes moved to UUID ids, or nil when there was nothing to do.
    /// - Throws: store errors; the transaction is rolled back and the file is unchanged.
    @discardableResult
    static func migrateToUUIDs(_ database: Database) async throws -> Int? {
        // Cheap check first, outside any transaction: nearly every open has nothing to do.
        guard try await storedIDKind(Notebook.collectionName, database) == .int64 else {
            return nil
        }
        try await database.execute("BEGIN IMMEDIATE")
        do {
            // Again under the write lock: another process may have migrated meanwhile.
            guard try await storedIDKind(Notebook.collectionName, database) == .int64 else {
                try await database.execute("COMMIT")
                return nil
            }
            let moved = try await migrate(database)
            try await database.execute("COMMIT")
            return moved
        } catch {
            _ = try? await database.execute("ROLLBACK")
            throw error
        }
    }

    /// The collection in which a database made before the notes held every model's vector kept
    /// model number `index` (0-based; 0 is `notes` itself).
    static func formerModelCollection(_ index: Int) -> String { "notes_vectors_\(index + 1)" }

    /// Moves the further models' vectors of an older database from their collections
    /// (`notes_vectors_2`, …: no text index, the notes' ids) into vector fields of `notes`
    /// (`embedding_2`, …), then drops those collections; in one IMMEDIATE transaction, so a
    /// failure leaves the file as it was. Ids, content, metadata, timestamps and versions stay,
    /// so synced devices keep knowing each note; a note the older database had no vector of a
    /// model for keeps that field empty.
    ///
    /// - Returns: how many models moved, or nil when there was nothing to do.
    @discardableResult
    static func mergeModelCollections(_ database: Database) async throws -> Int? {
        guard try await storedIDKind(formerModelCollection(1), database) != nil else { return nil }
        try await database.execute("BEGIN IMMEDIATE")
        do {
            var names: [String] = []
            var models: [EmbeddingManifest] = []
            while let configuration = try await database.configuration(
                of: formerModelCollection(names.count + 1))
            {
                guard let model = configuration.embedding else {
                    throw CLIError.failure(
                        "\(formerModelCollection(names.count + 1)) has no embedding model; "
                            + "this is not a database trove made")
                }
                names.append(formerModelCollection(names.count + 1))
                models.append(model)
            }
            // Another process may have moved them meanwhile.
            guard !names.isEmpty else {
                try await database.execute("COMMIT")
                return nil
            }
            try await database.addModels(models, toSearchCollection: Notebook.collectionName)
            let fields =
                try await database.configuration(of: Notebook.collectionName)?
                .vectorFields.suffix(names.count) ?? []
            for (name, field) in zip(names, fields) {
                try await database.execute(
                    """
                    UPDATE \(Notebook.collectionName) SET "\(field)" =
                        (SELECT embedding FROM "\(name)" former WHERE former.id = \(Notebook.collectionName).id)
                    """)
                try await database.dropCollection(name)
            }
            try await database.execute("COMMIT")
            return names.count
        } catch {
            _ = try? await database.execute("ROLLBACK")
            throw error
        }
    }

    /// The id kind in the stored configuration of the search collection `name` (nil: none),
    /// read from `trove_meta` itself rather than from the collections this process opened.
    private static func storedIDKind(_ name: String, _ database: Database) async throws -> IDKind? {
        let rows = try await database.query(
            "SELECT value FROM trove_meta WHERE key = ?", bindings: [.text("collection.\(name)")])
        guard let json = rows.first?.string("value") else { return nil }
        return try JSONDecoder().decode(CollectionConfiguration.self, from: Data(json.utf8)).ids
    }

    private static let mapTable = "temp._trove_id_map"
    private static let columns =
        "content, source, metadata, embedding, created_at, updated_at, _version"

    /// The migration proper, inside the caller's transaction.
    private static func migrate(_ database: Database) async throws -> Int {
        var names = [Notebook.collectionName]
        while try await storedIDKind(formerModelCollection(names.count), database) != nil {
            names.append(formerModelCollection(names.count))
        }
        // One new id per old id of any of the collections (they share the notes' ids).
        let union = names.map { "SELECT id FROM \"\($0)\"" }.joined(separator: " UNION ")
        let oldIDs = try await database.query("SELECT id FROM (\(union)) ORDER BY id").compactMap {
            $0.int64("id")
        }
        let newIDs = TimeOrderedIDGenerator.shared.next(oldIDs.count).map {
            $0.uuidString.lowercased()
        }
        try await database.execute("DROP TABLE IF EXISTS \(mapTable)")
        try await database.execute(
            "CREATE TABLE \(mapTable)(old INTEGER PRIMARY KEY, new TEXT NOT NULL)")
        let chunk = 10_000
        for start in stride(from: 0, to: oldIDs.count, by: chunk) {
            let end = min(start + chunk, oldIDs.count)
            let pairs = (start..<end).map { "[\(oldIDs[$0]),\"\(newIDs[$0])\"]" }.joined(
                separator: ",")
            try await database.execute(
                "INSERT INTO \(mapTable)(old, new) SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?)",
                bindings: [.text("[" + pairs + "]")])
        }
        for name in names {
            guard var configuration = try await database.configuration(of: name) else { continue }
            let copy = "temp.\"_trove_copy_\(name)\""
            try await database.execute("DROP TABLE IF EXISTS \(copy)")
            try await database.execute(
                "CREATE TABLE \(copy) AS SELECT id, \(columns) FROM \"\(name)\"")
            try await database.dropCollection(name)
            configuration.ids = .uuid
            _ = try await SearchCollection(name, in: database, configuration: configuration)
            try await database.execute(
                """
                INSERT INTO "\(name)"(id, \(columns))
                SELECT m.new, \(columns.split(separator: ",").map { "c." + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", "))
                FROM \(copy) c JOIN \(mapTable) m ON m.old = c.id ORDER BY c.id
                """)
            try await database.execute("DROP TABLE \(copy)")
        }
        try await database.execute("DROP TABLE \(mapTable)")
        return oldIDs.count
    }
}
