import Foundation
import TroveSQLite

/// Writes a record's merged state into its table: deletes a dead record's row, inserts or
/// updates a living one with its current life's fields. A life whose required fields have not
/// all arrived yet (their change set comes later) is kept aside (`missing`) and written once
/// they have; a row already there takes what is known of the new life meanwhile.
struct Materializer {
    let connection: Connection
    let table: CapturedTable
    /// The columns of each unique index other than the id's (see ``admit(id:values:rowExists:)``).
    var uniqueKeys: [[String]] { table.uniqueKeys }

    /// The condition selecting the row of record `?1`.
    private var whereID: String {
        guard table.isLinks else { return "\"id\" = ?1" }
        return CapturedTable.linkKeyColumns.enumerated()
            .map { "\($0.element) = json_extract(?1, '$[\($0.offset)]')" }.joined(
                separator: " AND ")
    }

    func materialize(id: SQLValue, cl: Int64, lifeChanged: Bool, won: [(String, SQLValue)]) throws {
        let name = SQLValue.text(table.collection)
        if cl % 2 == 0 {
            if lifeChanged {
                try connection.cachedStatement("DELETE FROM \(table.table) WHERE \(whereID)")
                    .execute([id])
            }
            return
        }
        let exists =
            try connection.cachedStatement("SELECT 1 FROM \(table.table) WHERE \(whereID)").rows([
                id
            ]).isEmpty == false
        if exists, !lifeChanged {
            if !won.isEmpty, try admit(id: id, values: won, rowExists: true) {
                try update(id: id, values: won)
            }
            return
        }
        // A new life, or a row not written yet: the whole current life.
        let current = try connection.cachedStatement(
            "SELECT field, value FROM \(SyncTables.fields) WHERE collection = ? AND id = ? AND cl = ?"
        ).rows([name, id, .integer(cl)]).map { ($0.string(at: 0) ?? "", $0[1]) }
        let known = Set(current.map(\.0))
        let complete = table.requiredColumns.isSubset(of: known)
        if exists {
            // The row stays (deleting it would cascade to its links) and takes what is known of
            // the new life; the rest follows as it arrives.
            if try admit(id: id, values: current, rowExists: true) {
                try update(id: id, values: current)
            }
        } else if complete, try admit(id: id, values: current, rowExists: false) {
            try insert(id: id, values: current)
        }
        try connection.cachedStatement(
            "UPDATE \(SyncTables.records) SET missing = ? WHERE collection = ? AND id = ?"
        ).execute([.integer(!exists && !complete ? 1 : 0), name, id])
    }

    /// Writes a record seen here for the first time, from the fields its change set carries
    /// (`fields`: those of life `cl`): no row to read or merge with.
    func materializeNew(id: SQLValue, cl: Int64, fields: [(String, SQLValue)]) throws {
        guard cl % 2 == 1 else { return }
        if table.requiredColumns.isSubset(of: Set(fields.map(\.0))), try !rowExists(id: id) {
            if try admit(id: id, values: fields, rowExists: false) {
                try insert(id: id, values: fields)
            }
        } else {
            // Incomplete, or a row written while capture was not watching: the general path.
            try materialize(id: id, cl: cl, lifeChanged: true, won: fields)
        }
    }

    /// Whether the record's row exists.
    func rowExists(id: SQLValue) throws -> Bool {
        try !connection.cachedStatement("SELECT 1 FROM \(table.table) WHERE \(whereID)").rows([id])
            .isEmpty
    }

    /// Sets one field of the record's row as a local write (the capture triggers stamp it);
    /// false when the row does not exist.
    func write(id: SQLValue, field: String, value: SQLValue) throws -> Bool {
        try connection.cachedStatement(
            "UPDATE \(table.table) SET \(CapturedTable.quoted(field)) = ?2 WHERE \(whereID)"
        ).execute([id, value])
        return connection.changes > 0
    }

    private func update(id: SQLValue, values: [(String, SQLValue)]) throws {
        guard !values.isEmpty else { return }
        let sets = values.enumerated().map {
            "\(CapturedTable.quoted($0.element.0)) = ?\($0.offset + 2)"
        }.joined(
            separator: ", ")
        try connection.cachedStatement("UPDATE \(table.table) SET \(sets) WHERE \(whereID)")
            .execute(
                [id] + values.map(\.1))
    }

    private func insert(id: SQLValue, values: [(String, SQLValue)]) throws {
        let columns = values.map { CapturedTable.quoted($0.0) }
        let placeholders = values.indices.map { "?\($0 + 2)" }
        let sql: String
        if table.isLinks {
            let keys = CapturedTable.linkKeyColumns.enumerated().map {
                "json_extract(?1, '$[\($0.offset)]')"
            }
            sql = """
                INSERT INTO \(table.table)(\((CapturedTable.linkKeyColumns + columns).joined(separator: ", ")))
                SELECT \((keys + placeholders).joined(separator: ", ")) WHERE true
                ON CONFLICT(\(CapturedTable.linkKeyColumns.joined(separator: ", "))) DO NOTHING
                """
        } else {
            sql =
                "INSERT INTO \(table.table)(\"id\", \(columns.joined(separator: ", "))) VALUES (?1, \(placeholders.joined(separator: ", ")))"
        }
        try connection.cachedStatement(sql).execute([id] + values.map(\.1))
    }
}
