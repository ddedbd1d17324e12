import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveVectors

/// A Trove file: any number of named collections in one SQLite database.
///
/// An actor owning one read-write connection; every collection handle routes its work through it,
/// so writes are serialised and each search sees one consistent snapshot. Other connections and
/// processes may use the same file: their changes reach this database's vector indexes through
/// each collection's change log before the next query.
///
/// ```swift
/// let database = try Database(path: "notes.trove")
/// let notes = try await SearchCollection("notes", in: database, dimension: 384)
/// try await notes.insert(VectorEntry(id: 1, content: "Buy oat milk", vector: embedding))
/// let hits = try await notes.search(vector: embedding, limit: 5)
/// ```
public actor Database {
    let connection: Connection
    /// Copies the WAL back into the file off the writer's thread (nil for in-memory or read-only).
    let checkpointer: BackgroundCheckpointer?
    /// Merges text-index segments while nobody writes (nil for in-memory or read-only).
    let merger: BackgroundMerger?
    /// Read-only WAL connections for reads and searches (nil for in-memory databases).
    nonisolated let readers: ReaderPool?
    /// Collections opened so far (document collections and search collections' preset stores),
    /// shared with the readers.
    nonisolated let documentStores = DocumentStoreRegistry()
    /// The file path, or nil for an in-memory database.
    public nonisolated let path: String?
    /// The clock document expiry is measured against (``Expiry``); the system clock by default.
    public nonisolated let clock: any ExpiryClock
    /// The background purge of expired documents, when started
    /// (``startPurgingExpired(every:batchSize:)``).
    var expiryPurge: Task<Void, Never>?
    /// Where commits to this file are announced to live queries (shared by every database of
    /// this process on the same path; see Observation/ChangeHub.swift).
    nonisolated let changeHub: ChangeHub
    /// The writer's connection options, for the connections model contexts open on the file.
    nonisolated let writerOptions: Connection.Options

    /// Opens (or creates) a database file.
    ///
    /// - Parameters:
    ///   - path: the file; created when missing unless `readOnly`.
    ///   - readOnly: open without write access (searches and reads only).
    ///   - busyTimeout: how long to wait when another process holds the write lock.
    ///   - clock: the time document expiry is measured against (a ``ManualClock`` in tests).
    /// - Throws: `SQLiteError` when the file can't be opened or is not a database;
    ///   ``TroveError/unsupportedFormatVersion(found:supported:)`` for files from a newer Trove.
    public init(
        path: String, readOnly: Bool = false, busyTimeout: Duration = .seconds(5),
        clock: any ExpiryClock = SystemClock()
    ) throws {
        try self.init(
            .file(path), options: .init(readOnly: readOnly, busyTimeout: busyTimeout), clock: clock)
    }

    /// Opens a private in-memory database, gone when the value is released.
    ///
    /// - Parameter clock: the time document expiry is measured against.
    public init(clock: any ExpiryClock = SystemClock()) throws {
        try self.init(.inMemory, options: .init(), clock: clock)
    }

    /// Opens the database and, before returning, the given document collections (so a
    /// synchronous initialiser such as TroveVecKit's can report a schema mismatch at once).
    init(
        _ location: Connection.Location, options: Connection.Options,
        preparingDocuments documentCollections: [(name: String, schema: DocumentSchema)] = [],
        clock: any ExpiryClock = SystemClock()
    ) throws {
        self.clock = clock
        documentStores.graph.clock = clock
        var options = options
        // 16 KB pages: a row (text, metadata and a 384-d vector) is about 2 KB, so a 4 KB page held
        // one or two, and a batch commit wrote four times as many page frames; batch inserts are
        // faster with 16 KB (BENCHMARKS.md, "Batch insert"). New files only.
        options.newFilePageSize = options.newFilePageSize ?? Self.newFilePageSize
        writerOptions = options
        let connection = try Self.openWriter(location, options: options)
        try Self.prepareMeta(connection)
        if case .file(let path) = location, options.walMode {
            readers = ReaderPool(
                path: path, capacity: ReaderPool.defaultCapacity, busyTimeout: options.busyTimeout,
                encryption: options.encryption)
        } else {
            readers = nil
        }
        if case .file(let path) = location, !connection.isReadOnly, options.walMode {
            checkpointer = try BackgroundCheckpointer(attachingTo: connection)
            merger = BackgroundMerger(path: path, encryption: options.encryption)
        } else {
            checkpointer = nil
            merger = nil
        }
        for (name, schema) in documentCollections {
            documentStores[name] = try DocumentStore.open(
                connection: connection, name: name, requested: schema, graph: documentStores.graph,
                clock: clock)
        }
        self.connection = connection
        let filePath: String? = if case .file(let p) = location { p } else { nil }
        path = filePath
        let hub = filePath.map(ChangeHub.shared(path:)) ?? ChangeHub.inMemory()
        changeHub = hub
        if !connection.isReadOnly {
            let stores = documentStores
            connection.observeCommits { [weak merger] tables in
                hub.publish(tables)
                // Full-text indexes merge once writes pause, whoever wrote (API, transactions,
                // raw SQL).
                if let merger { stores.noteTextWrites(tables, to: merger) }
            }
            // A merge steps aside for a waiting writer rather than keep it from the lock.
            connection.onBusyWait { [weak merger] in merger?.giveWay() }
        }
    }

    /// Page size of files this type creates.
    static let newFilePageSize = 16384

    /// A read-write connection configured as the database's writer is (page cache, Trove's
    /// tokenizer and SQL functions); used for the writer and for model contexts' connections.
    static func openWriter(_ location: Connection.Location, options: Connection.Options) throws
        -> Connection
    {
        let connection = try Connection(location, options: options)
        // A 16 MB page cache (SQLite's default is 2 MB; it grows only as pages are used). Batch
        // inserts touch the table's, the FTS5 segments' and the indexes' pages in every
        // transaction; with 2 MB they were re-read and dirty pages spilled to the WAL before the
        // commit: more reads and more WAL writes (BENCHMARKS.md, "Batch insert"). And reads
        // mapped in place as the readers' are (ReaderPool): a vector index's snapshot is read on
        // the writer, and a model context fetches on a connection like this one; without the map
        // each page is copied out of the OS cache first. Encrypted files' VFS refuses mappings.
        let mmapSize = options.encryption == nil ? ReaderPool.mmapSize : 0
        try connection.execute(
            script:
                "PRAGMA cache_size = -\(options.encryption == nil ? 16384 : Self.encryptedCacheKB); PRAGMA mmap_size = \(mmapSize)"
        )
        // text search: CJK collections use Trove's tokenizer
        try connection.registerTroveTokenizer()
        try connection.registerTroveFunctions()  // geo queries' exact distance
        return connection
    }

    /// A read-write connection of its own on this file, for a model context: configured as the
    /// writer, its commits announced to the file's live queries and to the text-index merger as
    /// the writer's are. SQLite serializes it with the writer (the busy timeout waits for the
    /// write lock); derived indexes take its commits in from the change log before their next
    /// query, as they take another process's.
    ///
    /// - Throws: ``TroveError/invalidConfiguration(_:)`` for an in-memory or read-only database
    ///   (no second connection can reach its data); `SQLiteError` when the file cannot be opened.
    nonisolated func openContextConnection() throws -> Connection {
        guard let path, !writerOptions.readOnly else {
            throw TroveError.invalidConfiguration(
                "model contexts need a writable database file (ModelConfiguration(isStoredInMemoryOnly: true) makes a temporary one)"
            )
        }
        let connection = try Self.openWriter(.file(path), options: writerOptions)
        // It keeps SQLite's automatic checkpoint (in the commit that grows the log past 1,000
        // pages): a background checkpointer per context would be a queue and a connection more
        // each, for saves that are mostly small.
        let (hub, stores, merger) = (changeHub, documentStores, merger)
        connection.observeCommits { [weak merger] tables in
            hub.publish(tables)
            if let merger { stores.noteTextWrites(tables, to: merger) }
        }
        connection.onBusyWait { [weak merger] in merger?.giveWay() }
        return connection
    }

    private static func prepareMeta(_ connection: Connection) throws {
        let meta = CollectionSchema.metaTable
        if !connection.isReadOnly {
            try connection.transaction(.immediate) {
                try connection.execute(
                    script:
                        "CREATE TABLE IF NOT EXISTS \(meta)(key TEXT PRIMARY KEY, value TEXT NOT NULL)"
                )
                try connection.execute(
                    "INSERT OR IGNORE INTO \(meta)(key, value) VALUES ('format_version', ?)",
                    [.text(String(CollectionSchema.formatVersion))])
            }
        }
        let exists =
            try connection.scalar(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(meta)])
            != nil
        guard exists else { return }
        let version = try connection.scalar(
            "SELECT value FROM \(meta) WHERE key = 'format_version'")?.stringValue
        if let version, let found = Int(version), found > CollectionSchema.formatVersion {
            throw TroveError.unsupportedFormatVersion(
                found: found, supported: CollectionSchema.formatVersion)
        }
        if let version, let found = Int(version), found < CollectionSchema.formatVersion,
            !connection.isReadOnly
        {
            try upgrade(connection, from: found)
        }
    }

    /// A test's fault, called after each search collection's move to format 4 (with its name),
    /// to prove that a failed upgrade leaves the file as it was. Nil outside tests.
    @TaskLocal static var upgradeFault: (@Sendable (String) throws -> Void)?

    /// Upgrades a file written by an earlier format in place, in one transaction: a failure
    /// anywhere leaves the file as it was.
    ///
    /// What the formats changed: 2, the change log's update trigger records updates of every
    /// column (format 1 logged only id, content and embedding); 3, search collections' rows carry
    /// `_version`, raised by raw-SQL updates too; 4, search collections are laid out by
    /// ``DocumentLayout`` like every collection. Files of formats 1-3 go straight to 4: every
    /// search collection's table, change log and snapshots are rebuilt in the document layout
    /// (`SearchCollectionTable.moveToDocumentLayout`), which brings what 2 and 3 added, keeping
    /// every row, log entry and snapshot. Read-only opens of older files search and read them in
    /// place.
    private static func upgrade(_ connection: Connection, from version: Int) throws {
        let meta = CollectionSchema.metaTable
        try connection.transaction(.immediate) {
            // Another connection may have upgraded the file since it was read.
            let current = try connection.scalar(
                "SELECT value FROM \(meta) WHERE key = 'format_version'")?.stringValue
            guard let current, let found = Int(current), found < CollectionSchema.formatVersion
            else { return }
            let names = try connection.query(
                "SELECT substr(key, 12) FROM \(meta) WHERE key LIKE 'collection.%'"
            ).compactMap { $0.string(at: 0) }
            // Formats 1-3 to 4: every search collection moves to the document layout, which
            // also brings what the upgrades to 2 and 3 added (the log's update trigger over every
            // column, row versions).
            for name in names where found < 4 {
                try SearchCollectionTable.moveToDocumentLayout(name, on: connection)
                try upgradeFault?(name)
            }
            try connection.execute(
                "UPDATE \(meta) SET value = ? WHERE key = 'format_version'",
                [.text(String(CollectionSchema.formatVersion))])
        }
    }

    // MARK: Raw SQL

    /// Runs one SQL statement on this database's connection and returns the number of rows it
    /// changed. Your own tables can live in the same file; writes to a collection's table are
    /// picked up by its text and vector indexes (triggers and the change log).
    ///
    /// ```swift
    /// try await database.execute("UPDATE notes SET source = ? WHERE id = ?", bindings: ["inbox", 3])
    /// ```
    @discardableResult
    public func execute(_ sql: String, bindings: [SQLValue] = []) throws -> Int {
        // Counted from total changes so statements that change nothing (DDL) report 0, not the
        // previous statement's count; rows changed by triggers are not counted, as in SQLite.
        let before = connection.totalChanges
        let statement = try connection.prepare(sql)
        try statement.execute(bindings)
        return statement.isReadOnly ? 0 : min(connection.totalChanges - before, connection.changes)
    }

    /// Runs a script of several statements without bindings.
    public func execute(script sql: String) throws {
        try connection.execute(script: sql)
    }

    /// Runs one SQL query and returns its rows.
    ///
    /// ```swift
    /// let rows = try await database.query("SELECT id, content FROM notes WHERE source = ?", bindings: ["inbox"])
    /// let first = rows.first?.string("content")
    /// ```
    public func query(_ sql: String, bindings: [SQLValue] = []) throws -> [Row] {
        try connection.prepare(sql).rows(bindings)
    }

    /// Bytes on disk: the database file plus its write-ahead log (0 for in-memory databases).
    public nonisolated func fileSize() -> Int64 {
        guard let path else { return 0 }
        return [path, path + "-wal"].reduce(0) { total, file in
            let size =
                (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?
                .int64Value
            return total + (size ?? 0)
        }
    }

    /// Merges the text indexes' segments now, instead of at the next pause in writing.
    ///
    /// Trove merges FTS5 segments on a background connection once writes pause (see
    /// `BackgroundMerger`); call this to have it done before returning, e.g. before timing
    /// FTS5-syntax queries or snippets right after a bulk load.
    ///
    /// ```swift
    /// try await notes.insert(entries)
    /// try await database.mergeTextIndexes()
    /// ```
    public func mergeTextIndexes() throws {
        for name in try collectionNames() {
            let layout = try anyDocumentStore(name).layout
            guard layout.schema.fullText != nil else { continue }
            while try BackgroundMerger.mergeStep(on: connection, fts: layout.fts) {}
        }
    }

    /// Writes the WAL back into the main file and truncates it (e.g. before copying the file
    /// elsewhere).
    ///
    /// - Throws: `SQLiteError` with code `busy` when another connection keeps the checkpoint from
    ///   finishing (a reader of an older snapshot, or another process checkpointing) for longer
    ///   than the busy timeout plus a second.
    public func checkpoint() async throws {
        // A background checkpoint in flight holds the checkpoint lock, which SQLite never waits
        // for: wait for it here. (Only this connection's commits start new ones.)
        checkpointer?.flush()
        // Another process's checkpoint makes this one return busy (first column 1) at once:
        // retry for up to a second before reporting it.
        for attempt in 0..<50 {
            let busy =
                try connection.query("PRAGMA wal_checkpoint(TRUNCATE)").first?.int64(at: 0) ?? 0
            if busy == 0 { return }
            // Suspends instead of blocking the actor's thread (other work may run meanwhile).
            if attempt < 49 { try await Task.sleep(for: .milliseconds(20)) }
        }
        throw SQLiteError(
            extendedCode: .busy,
            message:
                "the WAL checkpoint could not finish: another connection is checkpointing or reading"
        )
    }
}
