import Foundation
import TroveSQLite

// A record deleted on one device while another device added a record referencing it (a
// landmark added to a trail deleted meanwhile): both changes are valid where they were made,
// and merged they leave a reference to nothing, which SQLite refuses at commit. Each such row
// is settled as the reference's delete rule would have settled it had the delete come second
// (as it does on the device that added the row): cascade deletes it, nullify clears the field,
// deny clears the field when it is optional and deletes the row otherwise. The rule depends
// only on the merged records, so every device settles the same rows the same way; like the
// cascades SQLite runs while sync applies, these writes are not captured.

extension Merger {
    /// Settles the rows whose references name a deleted record. Call at the end of the write
    /// transaction that applied a batch, before it commits.
    func settleReferences() throws {
        guard connection.hasDeferredForeignKeyViolations else { return }
        try connection.execute("UPDATE \(SyncTables.device) SET applying = 1")
        // A deleted row can leave rows referencing it under deny: settle until none are left
        // (bounded; what is left fails the commit as before).
        for _ in 0..<32 where connection.hasDeferredForeignKeyViolations {
            var rules: [String: [Int64: (column: String, onDelete: String)]] = [:]
            // foreign_key_check: table, rowid, parent, fkid.
            for violation in try connection.query("PRAGMA foreign_key_check") {
                guard let table = violation.string(at: 0), let rowid = violation.int64(at: 1),
                    let fkid = violation.int64(at: 3)
                else { continue }
                if rules[table] == nil {
                    rules[table] = try Self.foreignKeys(of: table, on: connection)
                }
                guard let rule = rules[table]?[fkid] else { continue }
                try settle(table: table, rowid: rowid, column: rule.column, onDelete: rule.onDelete)
            }
        }
        try connection.execute("UPDATE \(SyncTables.device) SET applying = 0")
    }

    private func settle(table: String, rowid: Int64, column: String, onDelete: String) throws {
        let quotedTable = CapturedTable.quoted(table)
        let delete = "DELETE FROM \(quotedTable) WHERE rowid = ?"
        switch onDelete {
        case "CASCADE":
            try connection.execute(delete, [.integer(rowid)])
        default:
            do {
                try connection.execute(
                    "UPDATE \(quotedTable) SET \(CapturedTable.quoted(column)) = NULL WHERE rowid = ?",
                    [.integer(rowid)])
            } catch  where onDelete != "SET NULL" {
                // A required field (NOT NULL or the collection's checks): the row goes.
                try connection.execute(delete, [.integer(rowid)])
            }
        }
    }

    /// Each foreign key of `table` by its id: the referencing column and the delete action.
    private static func foreignKeys(of table: String, on connection: Connection) throws -> [Int64:
        (column: String, onDelete: String)]
    {
        var keys: [Int64: (column: String, onDelete: String)] = [:]
        // foreign_key_list: id, seq, table, from, to, on_update, on_delete, match.
        for row in try connection.query("PRAGMA foreign_key_list(\(CapturedTable.quoted(table)))") {
            guard let id = row.int64(at: 0), let column = row.string(at: 3) else { continue }
            keys[id] = (column, row.string(at: 6) ?? "NO ACTION")
        }
        return keys
    }
}
