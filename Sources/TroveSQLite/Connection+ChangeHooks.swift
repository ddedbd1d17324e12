import CSQLite
import Foundation

/// What a connection's SQLite hooks feed: the WAL hook's listeners (several may share SQLite's
/// single WAL hook) and the tables changed by the open transaction.
///
/// Owned by its connection and used only on the connection's thread, like the connection.
final class ConnectionHooks {
    var walListeners: [(id: Int, body: (UnsafePointer<CChar>?, Int32) -> Void)] = []
    var nextListenerID = 0
    /// The names of the tables the open transaction changed, as SQLite spelled them (with their
    /// NUL). The update hook runs for every changed row (shadow tables and logs included), so it
    /// only compares bytes against these few names and copies a name once per transaction.
    var changed: [[CChar]] = []
    /// Tables of a transaction that committed but is not yet visible to other connections
    /// (between the commit hook and the WAL hook).
    var committed: Set<String> = []
    /// Called with the changed tables once a commit is visible to other connections.
    var onCommit: ((Set<String>) -> Void)?
    /// Whether commits become visible in the WAL hook (a WAL file) or at the commit hook (an
    /// in-memory or rollback-journal database, which only this connection reads).
    var deliversInWALHook = false
}

extension Connection {
    private var installedHooks: ConnectionHooks {
        if let hooks { return hooks }
        let hooks = ConnectionHooks()
        self.hooks = hooks
        sqlite3_wal_hook(db, connectionWALHook, Unmanaged.passUnretained(hooks).toOpaque())
        return hooks
    }

    /// Calls `body` after each commit written to the write-ahead log, with the database name and
    /// the log's size in pages (SQLite's WAL hook, shared by every listener).
    ///
    /// - Returns: an id for ``removeWALListener(_:)``.
    package func addWALListener(_ body: @escaping (UnsafePointer<CChar>?, Int32) -> Void) -> Int {
        let hooks = installedHooks
        hooks.nextListenerID += 1
        hooks.walListeners.append((hooks.nextListenerID, body))
        return hooks.nextListenerID
    }

    package func removeWALListener(_ id: Int) {
        hooks?.walListeners.removeAll { $0.id == id }
    }

    /// Calls `handler` after each commit that changed rows, with the lowercased names of the
    /// tables it changed (rows written by triggers included), once the commit is visible to
    /// other connections: from the WAL hook on a WAL file, else at the commit itself.
    ///
    /// Built on SQLite's update hook, so changes it does not report are missed: tables
    /// `WITHOUT ROWID`, and rows deleted by the truncate optimisation (`DELETE FROM t` with no
    /// WHERE clause and no triggers on `t`). Replaces an earlier handler.
    ///
    /// ```swift
    /// writer.observeCommits { tables in print("committed", tables) }
    /// ```
    package func observeCommits(_ handler: @escaping (Set<String>) -> Void) {
        let hooks = installedHooks
        hooks.onCommit = handler
        hooks.deliversInWALHook =
            location != .inMemory
            && (try? scalar("PRAGMA journal_mode")?.stringValue?.lowercased()) == "wal"
        let context = Unmanaged.passUnretained(hooks).toOpaque()
        sqlite3_update_hook(db, connectionUpdateHook, context)
        sqlite3_commit_hook(db, connectionCommitHook, context)
        sqlite3_rollback_hook(db, connectionRollbackHook, context)
    }

    /// Runs `body` and returns the lowercased names of the tables the statements it prepares
    /// read (SQLite's authorizer, `SQLITE_READ`), SQLite's own `sqlite_*` tables left out.
    ///
    /// Only statements compiled during `body` are seen. Setting and clearing the authorizer
    /// expires this connection's prepared statements, so cached ones recompile on their next
    /// use (transparently, at the cost of one prepare each).
    package func readTables<T>(during body: () throws -> T) rethrows -> (T, Set<String>) {
        let recorder = TableRecorder()
        let context = Unmanaged.passRetained(recorder).toOpaque()
        sqlite3_set_authorizer(db, connectionAuthorizer, context)
        defer {
            sqlite3_set_authorizer(db, nil, nil)
            Unmanaged<TableRecorder>.fromOpaque(context).release()
        }
        let result = try body()
        return (result, recorder.tables)
    }

    func detachHooks(_ handle: OpaquePointer) {
        sqlite3_wal_hook(handle, nil, nil)
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
    }
}

private final class TableRecorder {
    var tables: Set<String> = []
}

private func connectionWALHook(
    context: UnsafeMutableRawPointer?, db: OpaquePointer?, database: UnsafePointer<CChar>?,
    pages: Int32
) -> Int32 {
    guard let context else { return SQLITE_OK }
    let hooks = Unmanaged<ConnectionHooks>.fromOpaque(context).takeUnretainedValue()
    if hooks.deliversInWALHook, !hooks.committed.isEmpty {
        let tables = hooks.committed
        hooks.committed = []
        hooks.onCommit?(tables)
    }
    for listener in hooks.walListeners { listener.body(database, pages) }
    return SQLITE_OK
}

private func connectionUpdateHook(
    context: UnsafeMutableRawPointer?, operation: Int32, database: UnsafePointer<CChar>?,
    table: UnsafePointer<CChar>?, rowid: sqlite3_int64
) {
    guard let context, let table else { return }
    let hooks = Unmanaged<ConnectionHooks>.fromOpaque(context).takeUnretainedValue()
    for name in hooks.changed where strcmp(name, table) == 0 { return }
    hooks.changed.append(Array(UnsafeBufferPointer(start: table, count: strlen(table) + 1)))
}

/// The lowercased names of a transaction's changed tables.
private func tableNames(_ raw: [[CChar]]) -> Set<String> {
    Set(
        raw.map {
            String(decoding: $0.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
                .lowercased()
        })
}

private func connectionCommitHook(context: UnsafeMutableRawPointer?) -> Int32 {
    guard let context else { return 0 }
    let hooks = Unmanaged<ConnectionHooks>.fromOpaque(context).takeUnretainedValue()
    guard !hooks.changed.isEmpty else { return 0 }
    let tables = tableNames(hooks.changed)
    hooks.changed = []
    if hooks.deliversInWALHook {
        hooks.committed.formUnion(tables)
    } else {
        hooks.onCommit?(tables)
    }
    return 0  // 0: let the commit proceed
}

private func connectionRollbackHook(context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    Unmanaged<ConnectionHooks>.fromOpaque(context).takeUnretainedValue().changed = []
}

private func connectionAuthorizer(
    context: UnsafeMutableRawPointer?, action: Int32, first: UnsafePointer<CChar>?,
    second: UnsafePointer<CChar>?,
    database: UnsafePointer<CChar>?, trigger: UnsafePointer<CChar>?
) -> Int32 {
    if action == SQLITE_READ, let context, let first {
        let table = String(cString: first).lowercased()
        if !table.hasPrefix("sqlite_") {
            Unmanaged<TableRecorder>.fromOpaque(context).takeUnretainedValue().tables.insert(table)
        }
    }
    return SQLITE_OK
}
