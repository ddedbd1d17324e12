import Foundation
import TroveSQLite

/// What one save writes to one collection, computed in the context and carried to the writer.
struct TableChanges: Sendable {
    var name: String
    var model: String
    /// The field columns in schema order (slot i is column i).
    var columns: [String]
    /// Slots of lazy fields: null in a snapshot there means "not loaded", not "null".
    var lazySlots: Set<Int>
    var inserts: [[SQLValue]] = []
    var updates: [RowUpdate] = []
    /// The values the updates write, each update's in its slots' order from its `start`: one
    /// array for the save, not one per updated row.
    var updateValues: [SQLValue] = []
    var deletes: [RowDelete] = []
    /// The whole rows of an update, now and as the context read it, made only when a write
    /// fails (to name the failed constraint or the fields in conflict).
    var updateRows: UpdateRows

    var isEmpty: Bool { inserts.isEmpty && updates.isEmpty && deletes.isEmpty }
}

/// A changed row: only `slots` are written (their values `updateValues[start...]`), at `version`.
struct RowUpdate: Sendable {
    var id: DocumentID
    var version: Int64
    var slots: [Int]
    var start: Int
}

/// An updated row's whole row now (`id, <fields>`) and as the context read it, by id.
///
/// `@unchecked Sendable`: it reads the context's models, and is made and called only inside
/// the context's synchronous save, in the context's isolation (``ContextStore/save()``).
struct UpdateRows: @unchecked Sendable {
    let rows: (DocumentID) throws -> (row: [SQLValue], saved: [SQLValue])
}

/// An inserted model whose unique values were already stored: its row was written over the
/// stored one (SwiftData's upsert), so the model now has that row's id and version.
struct Rekey: Sendable {
    var table: String
    var from: DocumentID
    var to: DocumentID
    var version: Int64
}

struct RowDelete: Sendable {
    var id: DocumentID
    var version: Int64
    var saved: [SQLValue]
}

enum ContextSave {
    /// Writes every table's changes inside the caller's transaction: inserts and updates in
    /// table order (referenced collections first), deletes in reverse. Each update and delete
    /// is guarded by the version the context read; a row that moved on is a
    /// ``TroveError/modelConflict(model:id:fields:)`` and the caller's transaction rolls back.
    ///
    /// An insert whose unique fields (`@Attribute(.unique)`, `#Unique`) hold values a stored row
    /// (or an earlier insert of the same save) has is written over that row, as SwiftData does:
    /// the returned rekeys say which models now have which row.
    @discardableResult
    static func write(_ tables: [TableChanges], stores: [DocumentStore], on connection: Connection)
        throws -> [Rekey]
    {
        var rekeys: [Rekey] = []
        var deletedEarly: Set<DocumentID> = []
        for (changes, store) in zip(tables, stores) {
            if !changes.inserts.isEmpty {
                var rows = changes.inserts
                let (moved, freed) = try matchUnique(&rows, changes, store, on: connection)
                // A row this save deletes gives its unique values to the insert that takes
                // them: it goes first, so the insert does not land on it.
                for delete in changes.deletes where freed.contains(delete.id.sqlValue) {
                    try self.delete(delete, changes, store, on: connection)
                    deletedEarly.insert(delete.id)
                }
                let fresh = rows.indices.filter { moved[$0] == nil }
                let document = { (row: [SQLValue]) in
                    Document(id: DocumentID.read(row[0], kind: store.schema.id) ?? .int(0))
                }
                let inserted = fresh.map { rows[$0] }
                try store.write(rows: inserted, mode: .insert, on: connection) {
                    document(inserted[$0])
                }
                for (i, from) in moved.sorted(by: { $0.key < $1.key }) {
                    try store.write(rows: [rows[i]], mode: .upsert, on: connection) { _ in
                        document(rows[i])
                    }
                    let to = DocumentID.read(rows[i][0], kind: store.schema.id) ?? .int(0)
                    let version =
                        try connection.scalar(
                            "SELECT \"_version\" FROM \(store.layout.table) WHERE \"id\" = ?",
                            [rows[i][0]])?.int64Value
                        ?? 1
                    rekeys.append(Rekey(table: changes.name, from: from, to: to, version: version))
                }
            }
            var sql: [[Int]: String] = [:]
            var last: (slots: [Int], statement: Statement)?
            for update in changes.updates {
                try self.update(update, changes, store, sql: &sql, last: &last, on: connection)
            }
        }
        for (changes, store) in zip(tables, stores).reversed() {
            for delete in changes.deletes where !deletedEarly.contains(delete.id) {
                try self.delete(delete, changes, store, on: connection)
            }
        }
        return rekeys
    }

    /// Deletes a row at the version the context read.
    private static func delete(
        _ delete: RowDelete, _ changes: TableChanges, _ store: DocumentStore,
        on connection: Connection
    ) throws {
        let stored = try connection.scalar(
            "SELECT \"_version\" FROM \(store.layout.table) WHERE \"id\" = ?",
            [delete.id.sqlValue])?.int64Value
        guard stored == delete.version else {
            throw try conflict(changes, delete.id, saved: delete.saved, store, on: connection)
        }
        _ = try store.delete(ids: [delete.id], on: connection)
    }

    /// Points each insert whose unique values are taken (by a stored row or an earlier insert)
    /// at that row's id; returns the moved inserts' positions and their ids before, and the
    /// rows this save deletes whose values an insert takes instead (`freed`).
    private static func matchUnique(
        _ rows: inout [[SQLValue]], _ changes: TableChanges, _ store: DocumentStore,
        on connection: Connection
    ) throws -> (moved: [Int: DocumentID], freed: Set<SQLValue>) {
        let schema = store.schema
        var keys: [[String]] = schema.fields.filter(\.isUnique).map { [$0.name] }
        keys += schema.indexes.filter(\.isUnique).compactMap { index in
            let names = index.keys.map(\.name)
            return index.keys.allSatisfy { $0.path == nil } ? names : nil
        }
        guard !keys.isEmpty else { return ([:], []) }
        let deleting = Set(changes.deletes.map(\.id.sqlValue))
        var freed: Set<SQLValue> = []
        let slots = keys.compactMap { names -> [Int]? in
            let found = names.compactMap { changes.columns.firstIndex(of: $0).map { $0 + 1 } }
            return found.count == names.count ? found : nil
        }
        var moved: [Int: DocumentID] = [:]
        var claimed: [[SQLValue]: SQLValue] = [:]  // unique values -> the id an earlier insert took
        for i in rows.indices {
            for (key, columns) in zip(keys, slots) {
                let values = columns.map { rows[i][$0] }
                if values.contains(where: \.isNull) { continue }  // nulls never collide
                let existing: SQLValue?
                if let earlier = claimed[[.text(key.joined(separator: ","))] + values] {
                    existing = earlier
                } else {
                    let condition = key.map { "\"\($0)\" = ?" }.joined(separator: " AND ")
                    existing = try connection.scalar(
                        "SELECT \"id\" FROM \(store.layout.table) WHERE \(condition)", values)
                }
                if let existing, deleting.contains(existing) {
                    freed.insert(existing)
                } else if let existing, existing != rows[i][0] {
                    moved[i] = moved[i] ?? DocumentID.read(rows[i][0], kind: schema.id)
                    rows[i][0] = existing
                }
            }
            for (key, columns) in zip(keys, slots) {
                let values = columns.map { rows[i][$0] }
                if !values.contains(where: \.isNull) {
                    claimed[[.text(key.joined(separator: ","))] + values] = rows[i][0]
                }
            }
        }
        return (moved, freed)
    }

    /// `UPDATE ... SET <changed columns>, _version = _version + 1 WHERE id = ? AND _version = ?`,
    /// one cached statement per set of changed columns, its text built once per save (`sql`).
    /// Consecutive updates of the same columns (the common case: a loop changing one property)
    /// run the previous update's statement (`last`), without hashing the columns or the text.
    private static func update(
        _ update: RowUpdate, _ changes: TableChanges, _ store: DocumentStore,
        sql: inout [[Int]: String], last: inout (slots: [Int], statement: Statement)?,
        on connection: Connection
    ) throws {
        let statement: Statement
        if let last, last.slots == update.slots {
            statement = last.statement
        } else {
            let text: String
            if let built = sql[update.slots] {
                text = built
            } else {
                var built = "UPDATE \(store.layout.table) SET "
                for slot in update.slots { built += "\"\(changes.columns[slot])\" = ?, " }
                for touch in store.layout.updateTouches { built += touch + ", " }
                built += "\"_version\" = \"_version\" + 1 WHERE \"id\" = ? AND \"_version\" = ?"
                sql[update.slots] = built
                text = built
            }
            statement = try connection.cachedStatement(text)
            last = (update.slots, statement)
        }
        do {
            // Bound in place: no array of bindings per row.
            statement.reset()
            var index = 1
            for offset in update.start..<update.start + update.slots.count {
                try statement.bind(changes.updateValues[offset], at: index)
                index += 1
            }
            try statement.bind(update.id.sqlValue, at: index)
            try statement.bind(update.version, at: index + 1)
            defer { statement.reset() }
            while try statement.step() {}
        } catch let error as SQLiteError where error.code == .constraint {
            // The store's own update names what failed (a unique field, a missing reference).
            let row = try changes.updateRows.rows(update.id).row
            _ = try store.update(row: row, id: update.id, ifVersion: update.version, on: connection)
            {
                Document(id: update.id)
            }
            throw error
        }
        guard connection.changes == 1 else {
            let saved = try changes.updateRows.rows(update.id).saved
            throw try conflict(changes, update.id, saved: saved, store, on: connection)
        }
    }

    /// The conflict for a row that is not at the version the context read: the fields that
    /// differ from what it read, or none when the row is gone.
    private static func conflict(
        _ changes: TableChanges, _ id: DocumentID, saved: [SQLValue], _ store: DocumentStore,
        on connection: Connection
    ) throws -> TroveError {
        guard let document = try store.fetch(id: id, on: connection) else {
            return .modelConflict(model: changes.model, id: id, fields: [])
        }
        let stored = try store.storedValues(document)
        var fields: [String] = []
        for (slot, column) in changes.columns.enumerated()
        where slot + 1 < stored.count && stored[slot + 1] != saved[slot + 1]
            && !(changes.lazySlots.contains(slot) && saved[slot + 1].isNull)
        {
            fields.append(column)
        }
        return .modelConflict(model: changes.model, id: id, fields: fields)
    }
}
