import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite
import TroveText

/// The `trove` tool's view of a database file: one Trove collection, `notes`, holding a record
/// per chunk, a table `trove_files` remembering each indexed file's SHA-256 per named collection
/// so re-indexing skips what did not change, and the named collections themselves
/// (`trove_collections`, see ``NoteCollection``).
///
/// A database indexed with more than one model keeps a vector per model in each record: the
/// first model's in `embedding`, the others' in `embedding_2`, `embedding_3`, …
/// (``CollectionConfiguration/additionalEmbeddings``), so every filter and the text leg apply to
/// every model's leg, and a search is one query with a leg per model (see ``MultiModelSearch``).
/// Databases of older versions, which kept each further model's vectors in a collection of its
/// own, are moved on open (``NotebookMigration``).
///
/// Every record the tool writes carries `file` (the absolute path it came from), `chunk`,
/// `chunks` and `collection` in its metadata, and .jsonl records also `doc_id`; a file's records are found again
/// by `json_extract(metadata, '$.file')`, whatever their source, and by their ids, which are
/// derived from the collection, the file's path below the collection's folder and the chunk's
/// position (``NoteRecordID``): a note that two synced machines both index is one set of
/// records, whose metadata is the later writer's (its path may be the other machine's).
struct Notebook: Sendable {
    static let collectionName = "notes"
    static let filesTable = "trove_files"
    /// The text tokenizer of notes collections created by this version: CJK, Thai, Lao, Khmer
    /// and Myanmar by character bigrams, everything else as `porter unicode61` (English keeps
    /// its stemming). Databases created earlier keep the tokenizer they were created with until
    /// `trove repair --retokenize`.
    static let defaultTokenizer = TokenizerConfiguration.multilingual.fts5TokenizeArgument

    let database: Database
    let collection: SearchCollection
    let path: String

    /// The manifests of the models a database was indexed with, in order (empty when it has
    /// no notes yet).
    static func manifests(of database: Database) async throws -> [EmbeddingManifest] {
        guard let configuration = try await database.configuration(of: collectionName),
            let first = configuration.embedding
        else { return [] }
        return [first] + configuration.additionalEmbeddings
    }

    /// Each model's vector field as a configuration of its own (its model, dimension and the
    /// collection's index), in model order: what `trove stats` lists.
    static func vectorFields(_ configuration: CollectionConfiguration) -> [CollectionConfiguration]
    {
        [configuration]
            + configuration.additionalEmbeddings.map { model in
                var field = configuration
                field.dimension = model.dimension
                field.embedding = model
                field.additionalEmbeddings = []
                return field
            }
    }

    /// Refuses a list of models other than the one the database was indexed with.
    private static func checkModels(
        _ database: Database, embedders: [any Embedder], path: String
    ) async throws {
        let stored = try await manifests(of: database)
        let requested = embedders.map(\.manifest)
        if stored.count > 1 || requested.count > 1, stored != requested {
            throw CLIError.failure(
                "\(path) was indexed with \(stored.map(\.modelID).joined(separator: " + ")); "
                    + "this command asked for \(requested.map(\.modelID).joined(separator: " + ")). "
                    + "Pass the same --model list, or index into another database (--db).")
        }
    }

    /// Opens the database for writing, creating the file, its folder and the collection when
    /// missing.
    /// - Throws: ``CLIError/failure(_:)`` when the folder cannot be created; store errors (for
    ///   example an `embeddingMismatch` when the file was indexed with another model).
    static func openForWriting(
        path: String, embedders: [any Embedder], context: CommandContext, encrypt: Bool = false
    ) async throws -> Notebook {
        precondition(!embedders.isEmpty, "at least one model")
        let embedder = embedders[0]
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw CLIError.failure(
                "cannot create the folder \(folder): \(error.localizedDescription)")
        }
        let database = try EncryptionPassphrase.openDatabase(
            path: path, context: context, encrypt: encrypt)
        try await migrate(database, context: context)
        let existing = try await database.configuration(of: collectionName) != nil
        if existing { try await checkModels(database, embedders: embedders, path: path) }
        // An existing collection opens with its stored configuration (so a newer default, such
        // as another text tokenizer, never refuses a database made by an older trove); only the
        // models must match.
        let collection =
            existing
            ? try await SearchCollection(
                named: collectionName, in: database, embedder: embedder,
                additionalEmbedders: Array(embedders.dropFirst()))
            : try await SearchCollection(
                collectionName, in: database, embedder: embedder,
                additionalEmbedders: Array(embedders.dropFirst()), tokenizer: defaultTokenizer,
                ids: .uuid)
        let notebook = Notebook(database: database, collection: collection, path: path)
        try await notebook.prepareTables()
        return notebook
    }

    /// Opens an existing database; never creates one.
    /// - Parameter embedders: attach the models for vector and hybrid search, in the order the
    ///   database was indexed with (nil: text only).
    /// - Throws: ``CLIError/notFound(_:)`` when there is no database or no indexed notes yet.
    static func openExisting(path: String, embedders: [any Embedder]?, context: CommandContext)
        async throws -> Notebook
    {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError.notFound(
                "no database at \(path); create it with 'trove index PATH...' "
                    + "(or pass --db / set TROVE_DB)")
        }
        let database = try EncryptionPassphrase.openDatabase(path: path, context: context)
        try await migrate(database, context: context)
        guard try await database.configuration(of: collectionName) != nil else {
            throw CLIError.notFound(
                "\(path) holds no notes indexed by trove; add some with 'trove index PATH...'")
        }
        if let embedders { try await checkModels(database, embedders: embedders, path: path) }
        let collection = try await SearchCollection(
            named: collectionName, in: database, embedder: embedders?.first,
            additionalEmbedders: Array((embedders ?? []).dropFirst()))
        let notebook = Notebook(database: database, collection: collection, path: path)
        try await notebook.prepareTables()
        return notebook
    }

    /// Moves a database of an older `trove` to UUID record ids and to one collection of every
    /// model's vectors (``NotebookMigration``), saying so.
    static func migrate(_ database: Database, context: CommandContext) async throws {
        if let moved = try await NotebookMigration.migrateToUUIDs(database) {
            context.console.err.write(
                "trove: gave the \(moved) notes of this database UUID ids (sync needs ids unique across devices)\n"
            )
        }
        if let models = try await NotebookMigration.mergeModelCollections(database) {
            context.console.err.write(
                "trove: moved the vectors of \(models) further models into the notes themselves\n")
        }
    }

    /// The content hash of every file indexed into `collection`, by path.
    func indexedFiles(collection: String) async throws -> [String: String] {
        var files: [String: String] = [:]
        for row in try await database.query(
            "SELECT path, sha256 FROM \(Self.filesTable) WHERE collection = ?",
            bindings: [.text(collection)])
        {
            if let path = row.string("path"), let hash = row.string("sha256") { files[path] = hash }
        }
        return files
    }

    /// One chunk ready to write.
    struct PendingRecord: Sendable {
        var content: String
        var source: String
        var metadata: String
        /// One vector per model, in model order.
        var vectors: [[Float]]
    }

    /// Replaces everything indexed from `file` into `collection` with `records`, recording the
    /// file's hash. Call it inside ``inTransaction(_:)`` so that all of it happens, or none.
    ///
    /// Chunk `i` gets the id ``NoteRecordID/make(collection:key:chunk:)`` of `key` (the file's
    /// ``NoteCollection/key(of:)``) and is written in place (an upsert: sync sees changed fields
    /// of a record that lives on, not a delete and a new life); only the file's records that
    /// are not among the new ones are deleted, whether they carry this machine's path or (the
    /// chunks past the new end, found by id) came from another machine through sync.
    func replace(
        file: String, collection name: String, key: String, sha256: String, bytes: Int,
        records: [PendingRecord]
    ) async throws {
        let previous = try await recordCount(file: file, collection: name)
        let ids = records.indices.map { NoteRecordID.make(collection: name, key: key, chunk: $0) }
        try await collection.upsert(
            zip(ids, records).map { id, record in
                VectorEntry(
                    id: id, content: record.content, source: record.source,
                    metadata: record.metadata, vector: record.vectors[0],
                    additionalVectors: Array(record.vectors.dropFirst()))
            })
        try await deleteRecords(
            ofFile: file, collection: name, key: key,
            chunks: records.count..<max(previous, records.count),
            keeping: ids)
        try await database.execute(
            """
            INSERT OR REPLACE INTO \(Self.filesTable)(collection, path, sha256, bytes, records, indexed_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """,
            bindings: [
                .text(name), .text(file), .text(sha256), .integer(Int64(bytes)),
                .integer(Int64(records.count)), .real(Date().timeIntervalSince1970),
            ])
    }

    /// Removes a file's records in `collection` and its hash (inside ``inTransaction(_:)``):
    /// those carrying its path, and those with the ids of its chunks (`key`: its
    /// ``NoteCollection/key(of:)``). Returns how many records went.
    @discardableResult
    func remove(file: String, collection name: String, key: String) async throws -> Int {
        let count = try await recordCount(file: file, collection: name)
        let removed = try await deleteRecords(
            ofFile: file, collection: name, key: key, chunks: 0..<count, keeping: [])
        try await database.execute(
            "DELETE FROM \(Self.filesTable) WHERE collection = ? AND path = ?",
            bindings: [.text(name), .text(file)])
        return removed
    }

    /// How many records `file` had in `collection` when it was last indexed here (0: never).
    private func recordCount(file: String, collection name: String) async throws -> Int {
        try await database.query(
            "SELECT records FROM \(Self.filesTable) WHERE collection = ? AND path = ?",
            bindings: [.text(name), .text(file)]
        ).first?.int("records") ?? 0
    }

    /// Deletes the records of `file` in `collection` but those with an id in `keeping`: the ones
    /// whose metadata names the file, and the ids of its chunks `chunks` (which sync may have
    /// labelled with another machine's path). Returns how many went from `notes`.
    @discardableResult
    private func deleteRecords(
        ofFile file: String, collection name: String, key: String, chunks: Range<Int>,
        keeping: [DocumentID]
    ) async throws -> Int {
        func list(_ ids: [DocumentID]) -> SQLValue {
            .text(JSONValue.array(ids.map { JSONValue.string($0.description) }).serialized())
        }
        let stale = chunks.map { NoteRecordID.make(collection: name, key: key, chunk: $0) }
        let condition = """
            ((json_extract(metadata, '$.file') = ? AND json_extract(metadata, '$.collection') = ?)
              OR id IN (SELECT value FROM json_each(?)))
            AND id NOT IN (SELECT value FROM json_each(?))
            """
        let bindings: [SQLValue] = [.text(file), .text(name), list(stale), list(keeping)]
        // Raw SQL on the collection's table: its triggers keep the text index, the change log
        // and sync's capture in step, so the vector index drops these rows before the next query.
        return try await database.execute(
            "DELETE FROM \(Self.collectionName) WHERE \(condition)", bindings: bindings)
    }

    /// Forgets the hashes of `files`, so the next `trove index` writes them again.
    func forget(files: Set<String>) async throws {
        for file in files {
            try await database.execute(
                "DELETE FROM \(Self.filesTable) WHERE path = ?", bindings: [.text(file)])
        }
    }

    /// The files the records with these ids came from.
    func files(ofRecords ids: [DocumentID]) async throws -> Set<String> {
        var files = Set<String>()
        for id in ids {
            let rows = try await database.query(
                "SELECT json_extract(metadata, '$.file') AS file FROM \(Self.collectionName) WHERE id = ?",
                bindings: [SQLValue(id)])
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
