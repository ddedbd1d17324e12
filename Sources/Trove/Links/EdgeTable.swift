import Foundation
import TroveSQLite

/// The one table of links for the whole file, readable by any generic dump:
///
/// ```
/// _trove_edges(id INTEGER PRIMARY KEY,
///              from_collection TEXT NOT NULL, from_id NOT NULL,  -- id: INTEGER or TEXT, as the record's
///              label TEXT NOT NULL,
///              to_collection TEXT NOT NULL, to_id NOT NULL,
///              weight REAL NOT NULL DEFAULT 1 CHECK (weight >= 0),
///              UNIQUE (from_collection, from_id, label, to_collection, to_id))
/// _trove_edges_to ON (to_collection, to_id, label)             -- in-neighbours
/// _trove_edges_log(seq, rid, op) + triggers                    -- feeds the adjacency index
/// <c>_edges_ad AFTER DELETE ON <c>                              -- a deleted record's links go too
/// <c>_edges_au AFTER UPDATE OF id ON <c>                         -- an id changed by raw SQL moves its links
/// ```
///
/// Ids keep their kind: the id columns have no declared type (no affinity), so an integer id is
/// stored as an INTEGER and a string or UUID id (lowercase) as TEXT, and `42` and `"42"` stay
/// different nodes. The table follows the document layout's conventions (`id` integer primary
/// key, `<name>_log`), so ``DerivedIndexSet`` catches the adjacency index up like any other.
enum EdgeTable {
    static let name = "_trove_edges"
    static let table = "\"_trove_edges\""
    static let layout = DocumentLayout(name: name, schema: DocumentSchema(id: .int64, fields: []))

    static var createStatements: [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                id INTEGER PRIMARY KEY,
                from_collection TEXT NOT NULL,
                from_id NOT NULL CHECK (typeof(from_id) IN ('integer', 'text')),
                label TEXT NOT NULL,
                to_collection TEXT NOT NULL,
                to_id NOT NULL CHECK (typeof(to_id) IN ('integer', 'text')),
                weight REAL NOT NULL DEFAULT 1 CHECK (weight >= 0),
                UNIQUE (from_collection, from_id, label, to_collection, to_id))
            """,
            "CREATE INDEX IF NOT EXISTS \"_trove_edges_to\" ON \(table)(to_collection, to_id, label)",
        ]
            + DocumentLayout.changeLogStatements(
                table: table, log: layout.log, rid: "id", name: name, ifNotExists: true)
    }

    static func cascadeTriggerName(_ collection: String) -> String { "\(collection)_edges_ad" }
    static func idChangeTriggerName(_ collection: String) -> String { "\(collection)_edges_au" }

    /// The edge table (if missing), the trigger that deletes a record's links with it, in the
    /// deleting statement's transaction, whoever deletes (the API or raw SQL), and the trigger
    /// that moves a record's links when raw SQL changes its id. `+old.id` has no affinity, so the
    /// comparison uses the id columns' indexes.
    static func cascadeStatements(for layout: DocumentLayout) -> [String] {
        let literal = DocumentLayout.literal(.text(layout.name))
        return createStatements + [
            """
            CREATE TRIGGER IF NOT EXISTS "\(cascadeTriggerName(layout.name))" AFTER DELETE ON \(layout.table) BEGIN
                DELETE FROM \(table) WHERE from_collection = \(literal) AND from_id = +old."id";
                DELETE FROM \(table) WHERE to_collection = \(literal) AND to_id = +old."id";
            END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS "\(idChangeTriggerName(layout.name))" AFTER UPDATE OF "id" ON \(layout.table)
            WHEN old."id" IS NOT new."id" BEGIN
                UPDATE \(table) SET from_id = new."id" WHERE from_collection = \(literal) AND from_id = +old."id";
                UPDATE \(table) SET to_id = new."id" WHERE to_collection = \(literal) AND to_id = +old."id";
            END
            """,
        ]
    }

    /// Adds the link triggers to a collection created before links (or before the id-change
    /// trigger) existed (writable opens).
    static func ensureCascade(_ connection: Connection, layout: DocumentLayout) throws {
        guard !connection.isReadOnly else { return }
        let present =
            try connection.scalar(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?)",
                [.text(cascadeTriggerName(layout.name)), .text(idChangeTriggerName(layout.name))])?
            .int64Value ?? 0
        if present < 2 {
            for statement in cascadeStatements(for: layout) {
                try connection.execute(script: statement)
            }
        }
    }

    /// Whether the file has the edge table yet (it is created with the first link or the first
    /// document collection).
    static func exists(_ connection: Connection) throws -> Bool {
        try connection.scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
    }
}
