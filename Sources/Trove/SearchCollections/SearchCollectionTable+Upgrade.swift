import Foundation
import TroveSQLite

extension SearchCollectionTable {
    /// Moves a search collection written by formats 1-3 (whose tables `CollectionSchema` made
    /// with SQL of its own) to the document layout every collection has since format 4, inside
    /// the caller's transaction (`Database.upgrade`), so a failure anywhere leaves the file as
    /// it was.
    ///
    /// Nothing derived is lost: rows keep their ids and integer keys (`_rowid`), so the text
    /// index (rebuilt from the rows by the new table's triggers) and the saved vector snapshots
    /// (keyed by those integers) still describe them; the change log keeps every entry and its
    /// seq, so each snapshot's watermark means the same point; snapshots move to the keys the
    /// document layout gives a field (`embedding`, `embedding.flat`). A log that `AUTOINCREMENT`
    /// had counted past its newest entry gets a marker entry at that count, so no seq a
    /// watermark has seen is handed out again.
    ///
    /// - Complexity: O(n log n) for n rows: every row is copied once and tokenized once.
    static func moveToDocumentLayout(_ name: String, on connection: Connection) throws {
        let key = "collection.\(name)"
        guard
            let json = try connection.scalar(
                "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(key)])?
                .stringValue
        else { return }
        let configuration: CollectionConfiguration
        do {
            configuration = try JSONDecoder().decode(
                CollectionConfiguration.self, from: Data(json.utf8))
        } catch {
            throw TroveError.schemaMismatch(
                collection: name, details: "stored configuration is unreadable: \(error)")
        }
        let layout = DocumentLayout(preset: name, configuration: configuration)
        func quoted(_ s: String) -> String { "\"\(s)\"" }
        let oldTable = quoted("\(name)__trove_format3")
        let oldLog = quoted("\(name)_log__trove_format3")

        // What the old objects hold, read before they move.
        let hasVersions = try CollectionSchema.hasVersionColumn(name, on: connection)
        let oldLogRid =
            try connection.scalar(
                "SELECT 1 FROM pragma_table_info(?) WHERE name = 'rid'", [.text("\(name)_log")])
            != nil ? "rid" : "id"
        let counted: Int64? =
            try connection.scalar(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_sequence'")
            != nil
            ? try connection.scalar(
                "SELECT seq FROM sqlite_sequence WHERE name = ?", [.text("\(name)_log")])?
                .int64Value
            : nil

        // The old triggers and index go first (the new layout makes its own), then the table and
        // log step aside under names no collection can take (`__`), and the text index, whose
        // rows the new triggers write again, is dropped.
        for suffix in [
            "_log_ai", "_log_au", "_log_ad", "_version", "_fts_ai", "_fts_ad", "_fts_au",
        ] {
            try connection.execute(script: "DROP TRIGGER IF EXISTS \(quoted(name + suffix))")
        }
        try connection.execute(script: "DROP INDEX IF EXISTS \(quoted("\(name)_source"))")
        // Legacy renames: a reference from another table to this one keeps naming `name` (the
        // new table), instead of following the old rows to the name they leave under.
        let legacy = try connection.scalar("PRAGMA legacy_alter_table")?.int64Value ?? 0
        try connection.execute(script: "PRAGMA legacy_alter_table = ON")
        defer { try? connection.execute(script: "PRAGMA legacy_alter_table = \(legacy)") }
        try connection.execute(script: "ALTER TABLE \(layout.table) RENAME TO \(oldTable)")
        try connection.execute(script: "ALTER TABLE \(layout.log) RENAME TO \(oldLog)")
        try connection.execute(script: "DROP TABLE IF EXISTS \(layout.fts)")

        for statement in try layout.createStatements() { try connection.execute(script: statement) }
        if configuration.lexicalSearch {
            for statement in layout.ftsSettings { try connection.execute(script: statement) }
        }

        let ids = configuration.ids == .int64 ? ["id"] : ["_rowid", "id"]
        let fields = layout.schema.fields.map { quoted($0.name) }
        let columns = (ids.map(quoted) + ["\"_version\""] + fields).joined(separator: ", ")
        let values = (ids.map(quoted) + [hasVersions ? "\"_version\"" : "1"] + fields).joined(
            separator: ", ")
        try connection.execute(
            script: "INSERT INTO \(layout.table)(\(columns)) SELECT \(values) FROM \(oldTable)")
        // The copy logged every row again; the old log is the history watermarks refer to.
        try connection.execute(script: "DELETE FROM \(layout.log)")
        try connection.execute(
            script:
                "INSERT INTO \(layout.log)(seq, rid, op) SELECT seq, \(oldLogRid), op FROM \(oldLog)"
        )
        let newest =
            try connection.scalar("SELECT coalesce(max(seq), 0) FROM \(layout.log)")?.int64Value
            ?? 0
        if let counted, counted > newest {
            // A marker for a row that cannot exist: replaying it changes nothing.
            try connection.execute(
                "INSERT INTO \(layout.log)(seq, rid, op) VALUES (?, ?, 0)",
                [.integer(counted), .integer(Int64.min)])
        }
        try connection.execute(script: "DROP TABLE \(oldTable)")
        try connection.execute(script: "DROP TABLE \(oldLog)")

        if try connection.scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
            [.text(layout.snapshotTableName)]) != nil
        {
            let snapshots = quoted(layout.snapshotTableName)
            let graph = layout.snapshotLocation(for: "embedding").key
            let matrix = layout.snapshotLocation(for: "embedding", flat: true).key
            try connection.execute(
                "UPDATE \(snapshots) SET name = CASE name WHEN 'hnsw' THEN ? ELSE ? END WHERE name IN ('hnsw', 'flat')",
                [.text(graph), .text(matrix)])
        }
    }
}
