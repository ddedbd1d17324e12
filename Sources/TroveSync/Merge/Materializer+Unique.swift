import Foundation
import TroveSQLite

// Two devices apart can each make a record holding the same unique value (two `@Attribute(.unique)`
// trails named "Coast"): both records are valid where they were made, and the index holds only
// one. Every device keeps the record with the smaller id (time-ordered ids: the older) and ends
// the other's life as a local delete that syncs (its references follow their delete rules, as
// for any delete), keeping what it held as a conflict for the app. Each device that meets the
// clash decides the same way, so devices converge in whatever order change sets arrive, and
// the value is free again once the kept record lets it go.

extension Materializer {
    /// The columns of each unique index of `table` other than the id's. Indexes on expressions
    /// are left out: a clash on one still stops the apply, with the collection's error.
    static func readUniqueKeys(of table: CapturedTable, on connection: Connection) throws
        -> [[String]]
    {
        guard !table.isLinks else { return [] }
        var keys: [[String]] = []
        // index_list: seq, name, unique, origin, partial.
        for index in try connection.query("PRAGMA index_list(\(table.table))")
        where index.int64(at: 2) == 1 {
            guard let name = index.string(at: 1) else { continue }
            // index_xinfo: seqno, cid (-1 rowid, -2 expression), name, desc, coll, key.
            let columns = try connection.query(
                "PRAGMA index_xinfo(\(CapturedTable.quoted(name)))"
            ).filter { $0.int64(at: 5) == 1 }
            guard columns.allSatisfy({ ($0.int64(at: 1) ?? -1) >= 0 }) else { continue }
            let names = columns.compactMap { $0.string(at: 2) }
            if !names.isEmpty, names != ["id"] { keys.append(names) }
        }
        return keys
    }

    /// Whether record `id` may be written with `values` (its new row, or the fields an update
    /// sets): false when another record holds the same unique value and keeps it (its id is
    /// smaller). The record that does not keep it is deleted as a local change, and kept as a
    /// conflict.
    func admit(id: SQLValue, values: [(String, SQLValue)], rowExists: Bool) throws -> Bool {
        guard !uniqueKeys.isEmpty else { return true }
        let given = Dictionary(values, uniquingKeysWith: { _, last in last })
        for key in uniqueKeys where key.contains(where: { given[$0] != nil }) {
            var keyValues: [SQLValue] = []
            for column in key {
                if let value = given[column] {
                    keyValues.append(value)
                } else if rowExists {
                    keyValues.append(
                        try connection.cachedStatement(
                            "SELECT \(CapturedTable.quoted(column)) FROM \(table.table) WHERE \"id\" = ?"
                        ).rows([id]).first?[0] ?? .null)
                } else {
                    keyValues.append(.null)
                }
            }
            // SQLite's unique indexes let nulls repeat.
            guard !keyValues.contains(.null) else { continue }
            let condition = key.map { "\(CapturedTable.quoted($0)) = ?" }.joined(separator: " AND ")
            guard
                let holder = try connection.cachedStatement(
                    "SELECT \"id\" FROM \(table.table) WHERE \(condition) AND \"id\" IS NOT ?"
                ).rows(keyValues + [id]).first?[0]
            else { continue }
            let incomingKeeps =
                try connection.cachedStatement("SELECT ? < ?").rows([id, holder]).first?
                .int64(at: 0) == 1
            let (keeper, loser) = incomingKeeps ? (id, holder) : (holder, id)
            try recordSetAside(loser, keptBy: keeper, key: key, values: keyValues)
            try endLife(of: loser)
            if !incomingKeeps { return false }
        }
        return true
    }

    /// Deletes record `id` as a local change: its row through the capture triggers (its
    /// references follow their delete rules, captured alike), or, with no row here, its life
    /// alone.
    private func endLife(of id: SQLValue) throws {
        try connection.execute("UPDATE \(SyncTables.device) SET applying = 0")
        try connection.cachedStatement("DELETE FROM \(table.table) WHERE \"id\" = ?").execute([id])
        try connection.execute("UPDATE \(SyncTables.device) SET applying = 1")
        try connection.cachedStatement(
            """
            UPDATE \(SyncTables.records) SET cl = cl + 1, pending = 1, missing = 0
            WHERE collection = ? AND id = ? AND cl % 2 = 1
            """
        ).execute([.text(table.collection), id])
    }

    /// Keeps the record set aside as a conflict on its unique field (the first column of the
    /// key), with the stamps of both records' values of it; once, however often it is met.
    private func recordSetAside(
        _ loser: SQLValue, keptBy keeper: SQLValue, key: [String], values: [SQLValue]
    ) throws {
        let readStamp = try connection.cachedStatement(
            "SELECT device, hlc FROM \(SyncTables.fields) WHERE collection = ? AND id = ? AND field = ?"
        )
        let name = SQLValue.text(table.collection)
        let field = SQLValue.text(key[0])
        let lost = try readStamp.rows([name, loser, field]).first
        let lostDevice = lost?[0] ?? .text("")
        let lostHLC = lost?[1] ?? .integer(0)
        let kept = try readStamp.rows([name, keeper, field]).first
        let keptDevice = kept?[0] ?? .text("")
        let keptHLC = kept?[1] ?? .integer(0)
        try connection.cachedStatement(
            """
            INSERT INTO \(SyncTables.conflicts)(collection, record, field, value, device, hlc, winner_device, winner_hlc)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8 WHERE NOT EXISTS (
                SELECT 1 FROM \(SyncTables.conflicts)
                WHERE collection = ?1 AND record = ?2 AND field = ?3 AND value IS ?4 AND winner_device = ?7)
            """
        ).execute([
            name, loser, field, values[0], lostDevice, lostHLC, keptDevice, keptHLC,
        ])
    }
}
