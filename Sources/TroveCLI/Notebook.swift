import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite
import TroveText

/// The `trove` tool's view of a database file: one Trove collection, `notes`, holding a record
/// per chunk, and a table `trove_files` remembering each indexed file's SHA-256 so re-indexing
/// skips what did not change.
///
/// Every record the tool writes carries `file` (the absolute path it came from), `chunk` and
/// `chunks` in its metadata, and .jsonl records also `doc_id`; a file's records are found again
/// by `json_extract(metadata, '$.file')`, whatever their source.
struct Notebook: Sendable {
    static let collectionName = "notes"
    static let filesTable = "trove_files"
    /// The text tokenizer of notes collections created by this version: CJK, Thai, Lao, Khmer
    /// and Myanmar by character bigrams, everything else as `porter unicode61` (English keeps
    /// its stemming). Databases created earlier keep the tokenizer they were created with until
    /// `trove repair --retokenize`.
    static let defaultTokenizer = TokenizerConfiguration.multilingual.fts5TokenizeArgument

    let database: Database
    let collection: Trove.Collection
    let path: String

    /// Opens the database for writing, creating the file, its folder and the collection when
    /// missing.
    /// - Throws: ``CLIError/failure(_:)`` when the folder cannot be created; store errors (for
    ///   example an `embeddingMismatch` when the file was indexed with another model).
    static func openForWriting(path: String, embedder: any Embedder) async throws -> Notebook {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CLIError.failure("cannot create the folder \(folder): \(error.localizedDescription)")
        }
        let database = try Database(path: path)
        // An existing collection opens with its stored configuration (so a newer default, such
        // as another text tokenizer, never refuses a database made by an older trove); only the
        // model must match.
        let collection =
            try await database.configuration(of: collectionName) != nil
            ? try await database.collection(named: collectionName, embedder: embedder)
            : try await database.collection(
                collectionName, embedder: embedder, tokenizer: defaultTokenizer)
        try await database.execute(
            """
            CREATE TABLE IF NOT EXISTS \(filesTable)(
                path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL,
                records INTEGER NOT NULL, indexed_at REAL NOT NULL)
            """)
        return Notebook(database: database, collection: collection, path: path)
    }

    /// Opens an existing database; never creates one.
    /// - Parameter embedder: attach the model for vector and hybrid search (nil: text only).
    /// - Throws: ``CLIError/notFound(_:)`` when there is no database or no indexed notes yet.
    static func openExisting(path: String, embedder: (any Embedder)?) async throws -> Notebook {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError.notFound(
                "no database at \(path); create it with 'trove index PATH...' "
                    + "(or pass --db / set TROVE_DB)")
        }
        let database = try Database(path: path)
        guard try await database.configuration(of: collectionName) != nil else {
            throw CLIError.notFound(
                "\(path) holds no notes indexed by trove; add some with 'trove index PATH...'")
        }
        let collection = try await database.collection(named: collectionName, embedder: embedder)
        try await database.execute(
            """
            CREATE TABLE IF NOT EXISTS \(filesTable)(
                path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, bytes INTEGER NOT NULL,
                records INTEGER NOT NULL, indexed_at REAL NOT NULL)
            """)
        return Notebook(database: database, collection: collection, path: path)
    }

    /// The content hash of every indexed file, by path.
    func indexedFiles() async throws -> [String: String] {
        var files: [String: String] = [:]
        for row in try await database.query("SELECT path, sha256 FROM \(Self.filesTable)") {
            if let path = row.string("path"), let hash = row.string("sha256") { files[path] = hash }
        }
        return files
    }

    /// One chunk ready to write.
    struct PendingRecord: Sendable {
        var content: String
        var source: String
        var metadata: String
        var vector: [Float]
    }

    /// Replaces everything indexed from `file` with `records`: the old records are deleted, the
    /// new ones inserted and the file's hash recorded. Call it inside ``inTransaction(_:)`` so
    /// that all of it happens, or none.
    func replace(file: String, sha256: String, bytes: Int, records: [PendingRecord]) async throws {
        _ = try await deleteRecords(ofFile: file)
        for record in records {
            try await collection.insert(
                content: record.content, source: record.source, metadata: record.metadata,
                vector: record.vector)
        }
        try await database.execute(
            """
            INSERT OR REPLACE INTO \(Self.filesTable)(path, sha256, bytes, records, indexed_at)
            VALUES (?, ?, ?, ?, ?)
            """,
            bindings: [
                .text(file), .text(sha256), .integer(Int64(bytes)),
                .integer(Int64(records.count)), .real(Date().timeIntervalSince1970),
            ])
    }

    /// Removes a file's records and its hash (inside ``inTransaction(_:)``). Returns how many
    /// records went.
    @discardableResult
    func remove(file: String) async throws -> Int {
        let removed = try await deleteRecords(ofFile: file)
        try await database.execute(
            "DELETE FROM \(Self.filesTable) WHERE path = ?", bindings: [.text(file)])
        return removed
    }

    private func deleteRecords(ofFile file: String) async throws -> Int {
        // Raw SQL on the collection's table: its triggers keep the text index and the change
        // log in step, so the vector index drops these rows before the next query.
        try await database.execute(
            "DELETE FROM \(Self.collectionName) WHERE json_extract(metadata, '$.file') = ?",
            bindings: [.text(file)])
    }

    /// Forgets the hashes of `files`, so the next `trove index` writes them again.
    func forget(files: Set<String>) async throws {
        for file in files {
            try await database.execute(
                "DELETE FROM \(Self.filesTable) WHERE path = ?", bindings: [.text(file)])
        }
    }

    /// The files the records with these ids came from.
    func files(ofRecords ids: [Int64]) async throws -> Set<String> {
        var files = Set<String>()
        for id in ids {
            let rows = try await database.query(
                "SELECT json_extract(metadata, '$.file') AS file FROM \(Self.collectionName) WHERE id = ?",
                bindings: [.integer(id)])
            if let file = rows.first?.string("file") { files.insert(file) }
        }
        return files
    }

    /// The files the records of a source came from.
    func files(ofSource source: String) async throws -> Set<String> {
        let rows = try await database.query(
            """
            SELECT DISTINCT json_extract(metadata, '$.file') AS file FROM \(Self.collectionName)
            WHERE source = ?
            """, bindings: [.text(source)])
        return Set(rows.compactMap { $0.string("file") })
    }

    /// Runs `body` inside one IMMEDIATE transaction, rolled back when it throws.
    func inTransaction<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        // The store turns its own writes inside an open transaction into savepoints, and its
        // vector index catches up from the change log after the commit.
        try await database.execute("BEGIN IMMEDIATE")
        do {
            let result = try await body()
            try await database.execute("COMMIT")
            return result
        } catch {
            _ = try? await database.execute("ROLLBACK")
            throw error
        }
    }

    /// The number of files with a recorded hash.
    func fileCount() async throws -> Int {
        let rows = try await database.query("SELECT count(*) AS n FROM \(Self.filesTable)")
        return rows.first?.int("n") ?? 0
    }
}
