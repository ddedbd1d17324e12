import Foundation
import Trove
import TroveSQLite

/// `trove repair --retokenize`: moves a database's notes to a new text tokenizer.
///
/// A collection's tokenizer is frozen when it is created (the text index and every query must
/// cut words the same way), so a database made by an older `trove` keeps its tokenizer. This
/// copies the notes into a new file created with the wanted tokenizer (the store rebuilds the
/// text index from the copied rows through its triggers), then replaces the old file with it.
/// Records keep their ids, content, source, metadata, vectors and timestamps; the file hashes
/// of `trove index` are kept, so nothing is embedded again.
enum Retokenizer {
    /// What changed.
    struct Change {
        var from: String
        var to: String
        var records: Int
    }

    /// Rebuilds the notes of the database at `path` with `tokenizer`.
    ///
    /// - Returns: the change, or `nil` when the notes already use `tokenizer` (nothing written).
    /// - Throws: ``CLIError/notFound(_:)`` without notes; ``CLIError/failure(_:)`` when the file
    ///   holds collections other than the notes (they would be lost); store errors. On any
    ///   error the old file is left as it was.
    static func rebuild(path: String, tokenizer: String) async throws -> Change? {
        let staged = path + ".retokenize"
        removeDatabaseFiles(staged)
        let change: Change
        do {
            guard let change0 = try await copy(from: path, to: staged, tokenizer: tokenizer) else {
                return nil
            }
            change = change0
        } catch {
            removeDatabaseFiles(staged)
            throw error
        }
        // Both databases are closed here (their values went out of scope in `copy`), so the
        // files can be swapped: the new one's WAL was checkpointed into it.
        removeDatabaseFiles(path)
        do {
            try FileManager.default.moveItem(atPath: staged, toPath: path)
        } catch {
            throw CLIError.failure(
                "the rebuilt database is at \(staged) but could not replace \(path): \(error.localizedDescription)"
            )
        }
        removeDatabaseFiles(staged)
        return change
    }

    private static func copy(from path: String, to staged: String, tokenizer: String) async throws
        -> Change?
    {
        let old = try Database(path: path)
        // An older database moves to today's layout first, as any command would move it.
        try await NotebookMigration.migrateToUUIDs(old)
        try await NotebookMigration.mergeModelCollections(old)
        guard var configuration = try await old.configuration(of: Notebook.collectionName) else {
            throw CLIError.notFound("\(path) holds no notes indexed by trove")
        }
        let oldNames = try await old.collectionNames()
        let others = oldNames.filter {
            $0 != Notebook.collectionName && $0 != Notebook.definitionsName
        }
        guard others.isEmpty else {
            throw CLIError.failure(
                "\(path) also holds the collections \(others.joined(separator: ", ")); "
                    + "--retokenize rebuilds files made by 'trove index' only")
        }
        let from = configuration.tokenizer
        guard from != tokenizer else { return nil }
        // Bring the old file's WAL into the file, so the attached copy below reads everything.
        try await old.checkpoint()

        configuration.tokenizer = tokenizer
        let new = try Database(path: staged)
        let notes = try await SearchCollection(
            Notebook.collectionName, in: new, configuration: configuration)
        let table = Notebook.collectionName
        // The collections' definitions, made before the tool's tables are copied so that they
        // are not made again from them (a database without definitions gets them when next
        // opened, from its own table).
        let definitions =
            oldNames.contains(Notebook.definitionsName)
            ? try await (
                Notebook.prepareDefinitions(new),
                old.documents(named: Notebook.definitionsName).fetch()
            ) : nil
        try await new.execute("ATTACH DATABASE ? AS old", bindings: [.text(path)])
        try await new.execute("BEGIN IMMEDIATE")
        do {
            // The collections' insert triggers fill the new text index and the change logs.
            let columns =
                (["id", "content", "source", "metadata"] + configuration.vectorFields
                + ["created_at", "updated_at", "_version"]).map { "\"\($0)\"" }.joined(
                    separator: ", ")
            try await new.execute(
                """
                INSERT INTO main.\(table)(\(columns))
                SELECT \(columns) FROM old.\(table) ORDER BY id
                """)
            // The tool's own tables (file hashes, collections) as they are, whatever their
            // version: `Notebook.prepareTables()` moves them on when the database is next opened.
            for name in [Notebook.filesTable, Notebook.collectionsTable] {
                let rows = try await new.query(
                    "SELECT sql FROM old.sqlite_master WHERE type = 'table' AND name = ?",
                    bindings: [.text(name)])
                guard let sql = rows.first?.string("sql") else { continue }
                try await new.execute(sql)
                try await new.execute("INSERT INTO main.\(name) SELECT * FROM old.\(name)")
            }
            try await new.execute("COMMIT")
        } catch {
            _ = try? await new.execute("ROLLBACK")
            throw error
        }
        try await new.execute("DETACH DATABASE old")
        if let (collection, documents) = definitions, !documents.isEmpty {
            try await collection.insert(documents)
        }
        let copied = try await notes.count()
        let original =
            try await old.query("SELECT count(*) AS n FROM \(table)").first?.int("n") ?? -1
        guard copied == original else {
            throw CLIError.failure(
                "copied \(copied) of \(original) records; \(path) left unchanged")
        }
        try await new.mergeTextIndexes()
        try await new.checkpoint()
        return Change(from: from, to: tokenizer, records: copied)
    }

    /// Deletes a database file and its WAL and shared-memory files, when present.
    private static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}
