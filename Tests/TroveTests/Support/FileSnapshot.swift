import Foundation
import Trove
import TroveSQLite

/// Everything a Trove file holds, for "nothing changed" checks after a failed migration: every
/// schema object's SQL and every table's rows (including the change log, `trove_meta`, the
/// timeline and FTS5's shadow tables, so the text index is covered too).
struct FileSnapshot: Equatable, CustomStringConvertible {
    var objects: [String]
    var rows: [String: [String]]

    static func of(_ db: Database) async throws -> FileSnapshot {
        let objects = try await db.query(
            "SELECT type, name, sql FROM sqlite_master ORDER BY type, name"
        )
        .map { "\($0[0]) \($0[1]) \($0[2])" }
        var rows: [String: [String]] = [:]
        let tables = try await db.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%'"
        )
        for table in tables.compactMap({ $0.string(at: 0) }) {
            rows[table] = try await db.query("SELECT * FROM \"\(table)\"").map {
                $0.values.map(\.description).joined(separator: "|")
            }.sorted()
        }
        return FileSnapshot(objects: objects, rows: rows)
    }

    var description: String {
        "\(objects.count) objects, \(rows.values.map(\.count).reduce(0, +)) rows"
    }
}

/// What a collection looks like in the file, independent of how it got there: the columns (by
/// name: `ALTER TABLE ADD COLUMN` appends where a fresh table would not), every index, trigger and
/// virtual table with its SQL, the stored schema, and the documents. A migrated collection must
/// equal a fresh one created with the final schema and the expected documents.
struct CollectionShape: Equatable {
    var columns: Set<String>
    var objects: Set<String>
    var schema: DocumentSchema
    var documents: [Document]

    static func of(_ name: String, in db: Database) async throws -> CollectionShape {
        let columns = try await db.query(
            "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_xinfo(?)",
            bindings: [.text(name)]
        )
        .map { "\($0[0]) \($0[1]) \($0[2]) \($0[3]) \($0[4])" }
        let objects = try await db.query(
            """
            SELECT type, name, sql FROM sqlite_master
            WHERE sql IS NOT NULL AND name != ? AND (tbl_name = ? OR name LIKE ? || '_fts%' OR name = ? || '_log')
              AND NOT (type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name LIKE ? || '_fts_%')
            """,
            bindings: [.text(name), .text(name), .text(name), .text(name), .text(name)]
        ).map { "\($0[0]) \($0[1]) \($0[2])" }
        let collection = try await db.documents(named: name)
        let documents = try await collection.fetch(Query().sorted(by: .ascending("id")))
        return CollectionShape(
            columns: Set(columns), objects: Set(objects), schema: collection.schema,
            documents: documents.map { Document(id: $0.id, $0.fields) })
    }
}
