import Foundation
import TroveSQLite

extension DocumentStore {
    /// Replaces a stored document's fields (all of them: missing optional fields become null).
    ///
    /// - Parameter version: when given, the update happens only if the stored version equals it
    ///   (optimistic concurrency); otherwise ``TroveError/versionConflict(id:expected:actual:)``.
    /// - Returns: the new version.
    @discardableResult
    func update(_ document: Document, ifVersion version: Int64?, on connection: Connection) throws
        -> Int64
    {
        try update(row: storedValues(document), id: document.id, ifVersion: version, on: connection)
        { document }
    }

    /// Replaces a stored row with values already in ``writeColumns`` order; `document()` gives
    /// it as a document, only to name what a failed constraint was about.
    ///
    /// One read and one write. The read (``currentRowSQL``) finds the row (a missing, expired or
    /// conflicting document is named before anything is written), its version, its stored
    /// values and the change log's state; the write sets only the columns whose stored value
    /// differs, at that version, so the new version is known without `RETURNING` (which made
    /// SQLite build and drop an ephemeral table for every update). Columns left alone cost
    /// nothing: SQLite skips the indexes, and the full-text triggers (`AFTER UPDATE OF`), of
    /// columns an UPDATE does not set. The log is pruned before the write, never after it, so
    /// the update is the last statement: atomic on its own (SQLite undoes a failed statement
    /// with its triggers), and callers inside a user's transaction need no savepoint around it
    /// (`DocumentWriter.update`).
    ///
    /// `UPDATE OR FAIL`: for one row it fails exactly as `ABORT` does (SQLite checks NOT NULL,
    /// CHECK and UNIQUE before it writes anything; foreign keys, full-text and R*Tree triggers
    /// and `RAISE(ABORT)` keep their statement rollback), but SQLite then needs no statement
    /// journal, which copied every 16 KB page the update and its triggers touched. Together
    /// with function-free CHECKs (``DocumentLayout/columnDefinition(_:)``) this is what brings
    /// an update near the cost of the bare UPDATE (BENCHMARKS.md, documents).
    @discardableResult
    func update(
        row: [SQLValue], id documentID: DocumentID, ifVersion version: Int64?,
        on connection: Connection,
        document: () throws -> Document
    ) throws -> Int64 {
        let read = try connection.cachedStatement(currentRowSQL)
        try read.bind(documentID.sqlValue, at: 1)
        try read.bind(.text(layout.logFloorKey), at: 2)
        if schema.allowsExpiry { try read.bind(.real(clock.now.timeIntervalSince1970), at: 3) }
        guard try read.step() else {
            read.reset()
            throw TroveError.documentNotFound(documentID)
        }
        // Row offsets 1..<row.count are result columns 2..<row.count + 1.
        let rid = read.int64(at: 0)
        let current = read.int64(at: 1)
        var changed: [Int] = []
        for offset in 1..<row.count where !read.holds(row[offset], at: offset + 1) {
            changed.append(offset)
        }
        let (maxSeq, floor) = (read.int64(at: row.count + 1), read.int64(at: row.count + 2))
        read.reset()
        if let version, version != current {
            throw TroveError.versionConflict(id: documentID, expected: version, actual: current)
        }
        try layout.changeLog.pruneIfNeeded(connection, maxSeq: maxSeq, floor: floor)
        let statement = try connection.cachedStatement(
            partialUpdates.sql(changing: changed) { updateSQL(changing: $0) })
        do {
            var parameter = 1
            for offset in changed {
                try statement.bind(row[offset], at: parameter)
                parameter += 1
            }
            try statement.bind(rid, at: parameter)
            try statement.bind(current, at: parameter + 1)
            while try statement.step() {}
        } catch {
            // OR FAIL: a statement of an app's own trigger that fails may leave the row written.
            // The log then gets its entry here, so every derived index still follows the row
            // whatever the caller's transaction does next.
            if try connection.scalar(
                "SELECT \"_version\" FROM \(layout.table) WHERE \(layout.rid) = ?", [.integer(rid)])?
                .int64Value != current
            {
                try connection.execute(
                    "INSERT INTO \(layout.log)(\(layout.logRid), op) VALUES (?, 1)", [.integer(rid)]
                )
            }
            if let error = error as? SQLiteError, error.code == .constraint {
                throw try constraintError(error, document: document(), values: row, on: connection)
            }
            throw error
        }
        // Only a trigger of the user's could have changed the row between the read and the write.
        guard connection.changes == 1 else {
            throw try missingOrConflict(documentID, expected: current, on: connection)
        }
        return current + 1
    }

    /// `UPDATE t SET <the changed write columns> = ?..., _version = _version + 1, <touches>
    /// WHERE rid = ? AND _version = ?`; `changed` holds offsets into ``writeColumns``.
    private func updateSQL(changing changed: [Int]) -> String {
        let sets =
            changed.map { "\(writeColumns[$0]) = ?" } + ["\"_version\" = \"_version\" + 1"]
            + layout.updateTouches
        return
            "UPDATE OR FAIL \(layout.table) SET \(sets.joined(separator: ", ")) WHERE \(layout.rid) = ? AND \"_version\" = ?"
    }
}

/// The SQL of a collection's updates, one statement per set of changed columns (a handful in
/// practice: the sets an app's updates touch), built on first use and kept for the store's life.
///
/// `@unchecked Sendable`: `bySet` is only touched while holding `lock`; its strings are immutable.
final class PartialUpdates: @unchecked Sendable {
    private let lock = NSLock()
    private var bySet: [[Int]: String] = [:]

    /// The statement for `changed` (offsets into the write columns), built by `build` once.
    func sql(changing changed: [Int], build: ([Int]) -> String) -> String {
        if let known = lock.withLock({ bySet[changed] }) { return known }
        let sql = build(changed)
        // A bound on memory for a collection whose updates touch ever new combinations.
        lock.withLock { if bySet.count < 1_024 { bySet[changed] = sql } }
        return sql
    }
}
