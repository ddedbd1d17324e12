import CSQLite
import CTroveCipher
import Foundation

/// One connection to a SQLite database: a file or a private in-memory database.
///
/// Not `Sendable`: it wraps a `sqlite3*` handle that must be used from one thread or actor at a
/// time. Owners (for example Trove's `Database` actor) keep it isolated.
///
/// ```swift
/// let connection = try Connection(path: "/tmp/notes.sqlite")
/// try connection.execute(script: "CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, name TEXT)")
/// try connection.execute("INSERT INTO t(name) VALUES (?)", ["groceries"])
/// let names = try connection.query("SELECT name FROM t").compactMap { $0.string("name") }
/// ```
public final class Connection {
    /// Where the database lives.
    public enum Location: Hashable, Sendable {
        /// A private, temporary in-memory database.
        case inMemory
        /// A file, created when missing (unless the connection is read-only).
        case file(String)
    }

    /// How to open the connection.
    public struct Options: Hashable, Sendable {
        /// Open read-only: writes fail with `SQLITE_READONLY`; a missing file is an error.
        public var readOnly: Bool
        /// Create the file when it does not exist (ignored when read-only).
        public var create: Bool
        /// Switch a file database to write-ahead logging, so readers and one writer don't block.
        public var walMode: Bool
        /// How long to wait for a lock held by another connection before failing with `busy`.
        public var busyTimeout: Duration
        /// Enforce foreign keys (`PRAGMA foreign_keys = ON`).
        public var foreignKeys: Bool
        /// Page size in bytes for a database this connection creates (a power of two from 512 to
        /// 65,536); nil keeps SQLite's default (4,096). SQLite fixes the page size when it writes
        /// the first page, so this has no effect on an existing file.
        public var newFilePageSize: Int?
        /// The unlocked key of an encrypted file (see ``EncryptionKey``); nil for plaintext.
        /// Connections opened by others from these options (a background checkpointer's) share it.
        public var encryption: EncryptionKey?

        /// Options; the defaults suit an app's own database file.
        public init(
            readOnly: Bool = false, create: Bool = true, walMode: Bool = true,
            busyTimeout: Duration = .seconds(5), foreignKeys: Bool = true,
            newFilePageSize: Int? = nil,
            encryption: EncryptionKey? = nil
        ) {
            self.encryption = encryption
            self.readOnly = readOnly
            self.create = create
            self.walMode = walMode
            self.busyTimeout = busyTimeout
            self.foreignKeys = foreignKeys
            self.newFilePageSize = newFilePageSize
        }
    }

    /// The underlying handle. Owned: closed in ``close()`` or deinit. `package`: CSQLite's types
    /// stay out of the public API (only this package's modules and tests see it).
    package private(set) var handle: OpaquePointer?
    /// Where this connection points.
    public let location: Location
    /// The options it was opened with.
    public let options: Options

    // Prepared statements reused by `cachedStatement(_:)`, keyed by SQL text. Memory: one compiled
    // program per distinct SQL string, usually a few KB each; cleared by `clearStatementCache()`.
    private var statementCache: [String: Statement] = [:]
    // Makes savepoint names unique while they nest.
    var savepointCounter = 0
    // What the busy handler set by `onBusyWait(_:)` calls (SQLite holds it unretained).
    var busyWaiter: BusyWaiter?
    // The WAL-hook listeners and commit tracking (Connection+ChangeHooks.swift); nil until used.
    var hooks: ConnectionHooks?

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - location: a file path or `.inMemory`.
    ///   - options: read-only, WAL, busy timeout, foreign keys.
    /// - Throws: ``SQLiteError`` when the file can't be opened or configured; the handle is
    ///   always closed before throwing.
    public init(_ location: Location, options: Options = Options()) throws {
        _ = Self.configureSQLite
        self.location = location
        self.options = options
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if options.create { flags |= SQLITE_OPEN_CREATE }
        }
        let path: String
        switch location {
        case .inMemory: path = ":memory:"
        case .file(let p): path = p
        }
        var db: OpaquePointer?
        // Encrypted: through Trove's VFS, with the key slot's number as a URI parameter.
        let encrypted = options.encryption != nil && location != .inMemory
        let openPath = encrypted ? options.encryption!.uri(for: path) : path
        let rc = sqlite3_open_v2(openPath, &db, flags, encrypted ? TROVE_CIPHER_VFS_NAME : nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteError.from(rc, db: db)
            sqlite3_close_v2(db)  // sqlite3_open_v2 may allocate a handle even on failure.
            var described = SQLiteError(
                extendedCode: error.extendedCode, message: "\(error.message) (path: \(path))")
            described.encryptionFailure = error.encryptionFailure
            throw described
        }
        handle = db
        do {
            sqlite3_extended_result_codes(db, 1)
            let ms = options.busyTimeout.components
            let millis = ms.seconds * 1000 + ms.attoseconds / 1_000_000_000_000_000
            sqlite3_busy_timeout(db, Int32(clamping: millis))
            if encrypted { try prepareEncryption() }
            // Reading the schema here turns "file is not a database" into an error at open time
            // instead of at the first query.
            _ = try query("SELECT count(*) FROM sqlite_master")
            if options.foreignKeys { try execute(script: "PRAGMA foreign_keys = ON") }
            // Before the WAL switch, which writes the first page of a new file.
            if let pageSize = options.newFilePageSize, !options.readOnly {
                try execute(script: "PRAGMA page_size = \(pageSize)")
                if encrypted { try prepareEncryption() }
            }
            if case .file = location, !options.readOnly, options.walMode {
                try switchToWAL(waitingUpTo: options.busyTimeout)
            }
        } catch {
            statementCache.removeAll()
            sqlite3_close_v2(db)
            handle = nil
            throw Self.explainEncryption(error, location: location, options: options)
        }
    }

    /// Switches the file to write-ahead logging. When two processes create the same file at
    /// once, the one that switches second can get `SQLITE_BUSY` without SQLite calling the busy
    /// handler (changing the journal mode takes an exclusive lock), so this retries for up to the
    /// busy timeout like any other lock wait.
    private func switchToWAL(waitingUpTo timeout: Duration) throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            do {
                try execute(script: "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
                return
            } catch let error as SQLiteError where error.code == .busy && clock.now < deadline {
                Thread.sleep(forTimeInterval: 0.005)
            }
        }
    }

    /// Opens a file connection.
    public convenience init(path: String, options: Options = Options()) throws {
        try self.init(.file(path), options: options)
    }

    deinit { close() }

    /// Closes the connection. Statements still alive keep the handle until they are released
    /// (`sqlite3_close_v2`). Calling twice is harmless.
    public func close() {
        statementCache.removeAll()
        if let handle {
            if hooks != nil { detachHooks(handle) }
            if busyWaiter != nil { sqlite3_busy_handler(handle, nil, nil) }
            sqlite3_close_v2(handle)
        }
        handle = nil
        hooks = nil
        busyWaiter = nil
    }

    var db: OpaquePointer {
        guard let handle else { preconditionFailure("use of a closed Connection") }
        return handle
    }

    // MARK: Statements

    /// Compiles one SQL statement.
    ///
    /// - Throws: ``SQLiteError`` on a syntax error, unknown table/column, or several statements.
    public func prepare(_ sql: String) throws -> Statement {
        try Statement(db: db, sql: sql)
    }

    /// A compiled statement for `sql`, reused across calls (the per-connection statement cache).
    ///
    /// - Complexity: O(1) amortised after the first call for a given SQL string.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Drops every cached statement (needed after schema changes that the cache may not survive,
    /// such as dropping a table a cached statement reads).
    public func clearStatementCache() { statementCache.removeAll() }

    /// Runs one statement with bindings (through the statement cache).
    ///
    /// ```swift
    /// try connection.execute("DELETE FROM t WHERE id = ?", [.integer(3)])
    /// ```
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws {
        try cachedStatement(sql).execute(bindings)
    }

    /// Runs a script of one or more statements without bindings (`sqlite3_exec`).
    public func execute(script sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) }
            sqlite3_free(errorMessage)
            var error = SQLiteError.from(rc, db: db, sql: sql)
            if let message { error.message = message }
            throw error
        }
    }

    /// Runs one statement and returns every row.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        try cachedStatement(sql).rows(bindings)
    }

    /// The first column of the first row, or nil when there is no row.
    public func scalar(_ sql: String, _ bindings: [SQLValue] = []) throws -> SQLValue? {
        let statement = try cachedStatement(sql)
        try statement.bind(bindings)
        defer { statement.reset() }
        guard try statement.step(), statement.columnCount > 0 else { return nil }
        return statement.value(at: 0)
    }

    // MARK: State

    /// The rowid of the most recent successful INSERT on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(db) }
    /// Rows changed by the most recent INSERT/UPDATE/DELETE.
    public var changes: Int { Int(sqlite3_changes64(db)) }
    /// Rows changed since the connection opened.
    public var totalChanges: Int { Int(sqlite3_total_changes64(db)) }
    /// Whether the open transaction holds foreign-key violations that a deferred check will
    /// refuse at commit (`SQLITE_DBSTATUS_DEFERRED_FKS`): a cheap test before the costly
    /// `PRAGMA foreign_key_check`.
    package var hasDeferredForeignKeyViolations: Bool {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(db, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highest, 0)
        return current > 0
    }
    /// Whether a transaction is open (autocommit is off).
    public var isInTransaction: Bool { sqlite3_get_autocommit(db) == 0 }
    /// Whether the main database is read-only.
    public var isReadOnly: Bool { sqlite3_db_readonly(db, "main") == 1 }
    /// The FTS5 extension API of this connection (to register tokenizers written in Swift), or
    /// nil when SQLite was built without FTS5. Valid while the connection is open.
    package var fts5API: UnsafeMutablePointer<fts5_api>? { trove_fts5_api(db) }

    /// The process-wide SQLite settings, made once before the first connection (or the
    /// encryption VFS) initialises SQLite: memory statistics off
    /// (`trove_sqlite_disable_memory_statistics`). When something else in the process
    /// initialised SQLite first, its settings stay. A Swift global is initialised once,
    /// thread-safely.
    static let configureSQLite: Void = { _ = trove_sqlite_disable_memory_statistics() }()

    /// The SQLite library version, e.g. "3.40.1".
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }
}
