import Foundation
import TroveSQLite

/// What one run of an observed read depended on: the tables it read, and the change logs that
/// say cheaply whether any of them changed since.
///
/// A collection's rows, text index and derived indexes all change only through its table, and
/// every change to the table appends to its trigger-fed `<name>_log`; so the newest seq of each
/// log (the region's ``Tokens``) is a complete "did it change" signal for collections. Tables of
/// your own (raw SQL) have no log: a region holding one is not ``isFullyLogged`` and is refetched
/// whenever a change might concern it.
struct ObservedRegion: Hashable, Sendable {
    /// Lowercased names of the tables read; commits are matched against them.
    var tables: Set<String>
    /// The quoted change-log tables covering them, sorted.
    var logs: [String]
    /// Whether every table read is covered by a log (then equal tokens mean an equal result).
    var isFullyLogged: Bool

    /// The newest seq of each of ``logs``, in order.
    typealias Tokens = [Int64]

    /// Reads the tokens on `connection`'s snapshot.
    func tokens(_ connection: Connection) throws -> Tokens {
        try logs.map { log in
            // max over the INTEGER PRIMARY KEY: one step down the table's B-tree.
            try connection.scalar("SELECT coalesce(max(seq), 0) FROM \(log)")?.int64Value ?? 0
        }
    }

    /// The region of what `recorder` saw, resolving raw tables to the collections they belong to.
    static func resolve(_ recorder: RegionRecorder, on connection: Connection) throws
        -> ObservedRegion
    {
        let seen = recorder.snapshot()
        var tables = Set(seen.collections.keys)
        var logs = Set(seen.collections.values)
        var fullyLogged = true
        for table in seen.tables where seen.collections[table] == nil {
            tables.insert(table)
            if let owner = try owningCollection(of: table, on: connection) {
                tables.insert(owner.name)
                logs.insert(owner.log)
            } else {
                fullyLogged = false
            }
        }
        return ObservedRegion(tables: tables, logs: logs.sorted(), isFullyLogged: fullyLogged)
    }

    /// The collection whose table, log or text index `table` is, or nil for a table of the app's
    /// own. Collections are recognised by the trigger that feeds their log (`<name>_log_ai`).
    private static func owningCollection(of table: String, on connection: Connection) throws -> (
        name: String, log: String
    )? {
        var candidates = [table]
        for suffix in ["_fts", "_log"] {
            if let range = table.range(of: suffix, options: .backwards) {
                candidates.append(String(table[..<range.lowerBound]))
            }
        }
        for name in candidates where !name.isEmpty {
            let exists =
                try connection.scalar(
                    "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ? COLLATE NOCASE",
                    [.text(name + "_log_ai")]) != nil
            if exists {
                return (name, "\"\(name.replacingOccurrences(of: "\"", with: "\"\""))_log\"")
            }
        }
        return nil
    }
}

/// Collects, during one observed read, the collections it opened and the tables its raw SQL read.
final class RegionRecorder: @unchecked Sendable {
    // @unchecked Sendable: both sets are only touched under `lock` (the read runs on one thread,
    // but the closures that feed the recorder must be @Sendable).
    private let lock = NSLock()
    private var collections: [String: String] = [:]
    private var tables: Set<String> = []

    /// A collection opened by name, with its quoted log table.
    func collection(_ name: String, log: String) {
        lock.withLock { collections[name.lowercased()] = log }
    }

    /// Tables a raw SQL statement read (lowercased).
    func read(_ names: Set<String>) {
        lock.withLock { tables.formUnion(names) }
    }

    func snapshot() -> (collections: [String: String], tables: Set<String>) {
        lock.withLock { (collections, tables) }
    }
}
