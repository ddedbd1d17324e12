import Foundation
import Trove
import TroveSQLite

/// One table whose changes are captured: a synced collection, or the links between synced
/// collections (`_trove_edges`, whose records are keyed by the link itself).
struct CapturedTable: Sendable, Hashable {
    /// The name the sync tables and change sets use.
    let collection: String
    /// The columns that sync, in table order.
    let columns: [String]
    /// The columns a new row cannot do without.
    let requiredColumns: Set<String>
    /// The vector columns with the embedding model of each (when the schema names one).
    let vectorFields: [String: EmbeddingManifest?]
    /// Links only: the synced collections whose outgoing links sync.
    let linkSources: [String]?
    /// The columns of each unique index other than the id's, read with the schema before each
    /// push and pull (`SyncSpace.prepare()`): what the merge checks a record's values against
    /// (`Materializer.admit(id:values:rowExists:)`).
    var uniqueKeys: [[String]] = []

    var isLinks: Bool { linkSources != nil }
    var table: String { "\"\(collection)\"" }

    static let linksName = "_trove_edges"
    static let linkKeyColumns = ["from_collection", "from_id", "label", "to_collection", "to_id"]

    init(shape: SyncedCollectionShape) {
        collection = shape.name
        columns = shape.columns
        requiredColumns = shape.requiredColumns
        vectorFields = shape.vectorFields
        linkSources = nil
    }

    init(linksFrom sources: [String]) {
        collection = Self.linksName
        columns = ["weight"]
        requiredColumns = []
        vectorFields = [:]
        linkSources = sources.sorted()
    }

    /// The record id of a row (`new` or `old`): the id column, or for a link its whole key as a
    /// JSON array (ids keep their kind: an integer stays an integer).
    func idExpression(_ row: String) -> String {
        guard isLinks else { return "\(row).\"id\"" }
        return "json_array(" + Self.linkKeyColumns.map { "\(row).\($0)" }.joined(separator: ", ")
            + ")"
    }

    /// What the triggers were made for: a change means they must be made again.
    var fingerprint: String {
        columns.joined(separator: ",") + (linkSources.map { "|" + $0.joined(separator: ",") } ?? "")
    }

    var triggerNames: [String] {
        ["ai", "au", "aid", "ad"].map { "_trove_sync_\(collection)_\($0)" }
    }

    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

/// The triggers that record every local change of a synced table at field level, stamped with
/// the hybrid logical clock and the device id, in the writing transaction: API writes, raw SQL
/// and migrations alike. They stand aside while sync applies remote changes (`applying`).
enum ChangeCapture {
    /// (Re)creates the triggers of `captured` when they are missing or were made for other
    /// columns, then records what changed while they were not there (``reconcile(_:on:)``).
    /// Call inside a write transaction.
    static func install(_ captured: CapturedTable, on connection: Connection) throws {
        let stored = try connection.scalar(
            "SELECT fingerprint FROM \(SyncTables.collections) WHERE name = ?",
            [.text(captured.collection)])?
            .stringValue
        let present =
            try connection.scalar(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (\(captured.triggerNames.map(CapturedTable.literal).joined(separator: ", ")))"
            )?.int64Value ?? 0
        guard stored != captured.fingerprint || present != Int64(captured.triggerNames.count) else {
            return
        }
        for name in captured.triggerNames {
            try connection.execute("DROP TRIGGER IF EXISTS \(CapturedTable.quoted(name))")
        }
        for statement in triggerStatements(captured) { try connection.execute(statement) }
        try reconcile(captured, on: connection)
        try connection.execute(
            "INSERT INTO \(SyncTables.collections)(name, fingerprint) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET fingerprint = excluded.fingerprint",
            [.text(captured.collection), .text(captured.fingerprint)])
    }

    /// Whether the triggers of `captured` are in place and current (a migration that rebuilt the
    /// table or added a column means they are not).
    static func isCurrent(_ captured: CapturedTable, on connection: Connection) throws -> Bool {
        let stored = try connection.scalar(
            "SELECT fingerprint FROM \(SyncTables.collections) WHERE name = ?",
            [.text(captured.collection)])?
            .stringValue
        let present =
            try connection.scalar(
                "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name IN (\(captured.triggerNames.map(CapturedTable.literal).joined(separator: ", ")))"
            )?.int64Value ?? 0
        return stored == captured.fingerprint && present == Int64(captured.triggerNames.count)
    }

    private static let applyingOff = "(SELECT applying FROM \(SyncTables.device)) = 0"

    /// Upserts the record `id` alive: a record seen for the first time starts its first life
    /// (cl 1); a deleted one starts its next (a re-insert is a new life, never lost).
    private static func bornStatement(_ c: CapturedTable, id: String) -> String {
        """
        INSERT INTO \(SyncTables.records)(collection, id, cl, pending) VALUES (\(CapturedTable.literal(c.collection)), \(id), 1, 1)
            ON CONFLICT(collection, id) DO UPDATE SET cl = cl + (cl % 2 = 0), pending = 1, missing = 0
        """
    }

    /// Stamps the given columns of `id` with the clock's current value and this device.
    /// `values`: (column, new value, changed?) triples as SQL.
    private static func fieldStatement(
        _ c: CapturedTable, id: String, values: [(String, String, String)]
    ) -> String {
        // Named columns (a VALUES list names its columns after plain column references).
        let rows = values.map {
            "SELECT \(CapturedTable.literal($0.0)) AS name, \($0.1) AS value, \($0.2) AS changed"
        }
        .joined(separator: " UNION ALL ")
        return """
            INSERT INTO \(SyncTables.fields)(collection, id, field, cl, hlc, device, value, pending)
                SELECT r.collection, r.id, v.name, r.cl, d.hlc, d.device, v.value, 1
                FROM (\(rows)) v, \(SyncTables.records) r, \(SyncTables.device) d
                WHERE v.changed AND r.collection = \(CapturedTable.literal(c.collection)) AND r.id = \(id)
            ON CONFLICT(collection, id, field) DO UPDATE SET
                base_hlc = CASE WHEN pending = 1 THEN base_hlc ELSE hlc END,
                base_device = CASE WHEN pending = 1 THEN base_device ELSE device END,
                cl = excluded.cl, hlc = excluded.hlc, device = excluded.device, value = excluded.value, pending = 1
            """
    }

    private static func tombstoneStatement(_ c: CapturedTable, id: String) -> String {
        """
        INSERT INTO \(SyncTables.records)(collection, id, cl, pending) VALUES (\(CapturedTable.literal(c.collection)), \(id), 2, 1)
            ON CONFLICT(collection, id) DO UPDATE SET cl = cl + (cl % 2 = 1), pending = 1, missing = 0
        """
    }

    /// When a delete is recorded: every local delete; for links also a delete made while sync
    /// applies remote changes, when the link itself is still alive, which is the cascade of a
    /// remote record delete (the deleting device may never have had the link, so this device
    /// passes its death on: every device then agrees the link is gone).
    private static func deleteCondition(_ c: CapturedTable, oldID: String) -> String {
        guard c.isLinks else { return applyingOff }
        return """
            (\(applyingOff) OR (SELECT cl FROM \(SyncTables.records) WHERE collection = \(CapturedTable.literal(c.collection)) AND id = \(oldID)) % 2 = 1)
            """
    }

    static func triggerStatements(_ c: CapturedTable) -> [String] {
        let names = c.triggerNames.map(CapturedTable.quoted)
        let newID = c.idExpression("new")
        let oldID = c.idExpression("old")
        let scope =
            c.linkSources.map { sources in
                " AND new.from_collection IN (\(sources.map(CapturedTable.literal).joined(separator: ", ")))"
            } ?? ""
        let oldScope = scope.replacingOccurrences(of: "new.", with: "old.")
        let all = c.columns.map { ($0, "new.\(CapturedTable.quoted($0))", "1") }
        let changed = c.columns.map {
            (
                $0, "new.\(CapturedTable.quoted($0))",
                "old.\(CapturedTable.quoted($0)) IS NOT new.\(CapturedTable.quoted($0))"
            )
        }
        let sameID =
            c.isLinks
            ? CapturedTable.linkKeyColumns.map { "old.\($0) IS new.\($0)" }.joined(
                separator: " AND ")
            : "old.\"id\" IS new.\"id\""
        func body(_ statements: [String]) -> String {
            statements.map { $0 + ";" }.joined(separator: "\n")
        }
        var sql = [
            """
            CREATE TRIGGER \(names[0]) AFTER INSERT ON \(c.table) WHEN \(applyingOff)\(scope) BEGIN
            \(body([SyncTables.tick, bornStatement(c, id: newID), fieldStatement(c, id: newID, values: all)]))
            END
            """,
            """
            CREATE TRIGGER \(names[3]) AFTER DELETE ON \(c.table) WHEN \(deleteCondition(c, oldID: oldID))\(oldScope) BEGIN
            \(body([tombstoneStatement(c, id: oldID)]))
            END
            """,
        ]
        // An update that keeps the id: the changed fields. The record may predate the capture
        // (then it starts its first life here).
        let knownRecord = """
            INSERT INTO \(SyncTables.records)(collection, id, cl, pending) VALUES (\(CapturedTable.literal(c.collection)), \(newID), 1, 1)
                ON CONFLICT(collection, id) DO UPDATE SET pending = 1
            """
        sql.append(
            """
            CREATE TRIGGER \(names[1]) AFTER UPDATE ON \(c.table) WHEN \(applyingOff)\(scope) AND \(sameID) BEGIN
            \(body([SyncTables.tick, knownRecord, fieldStatement(c, id: newID, values: changed)]))
            END
            """)
        // An update that changes the id (raw SQL): the old record is deleted, the new one born.
        sql.append(
            """
            CREATE TRIGGER \(names[2]) AFTER UPDATE ON \(c.table) WHEN \(applyingOff)\(scope) AND NOT (\(sameID)) BEGIN
            \(body([SyncTables.tick, tombstoneStatement(c, id: oldID), bornStatement(c, id: newID), fieldStatement(c, id: newID, values: all)]))
            END
            """)
        return sql
    }

    /// Records, as local changes, every difference between the table and what sync knows of it:
    /// rows written while no trigger was there (before the collection was synced, or by a
    /// migration that rebuilt the table), columns a migration added, rows deleted unseen.
    /// Records whose current life could not be materialised yet (`missing`) are left alone.
    static func reconcile(_ c: CapturedTable, on connection: Connection) throws {
        let name = CapturedTable.literal(c.collection)
        let id = c.idExpression("t")
        let scope =
            c.linkSources.map { sources in
                " AND t.from_collection IN (\(sources.map(CapturedTable.literal).joined(separator: ", ")))"
            } ?? ""
        try connection.execute(SyncTables.tick)
        // Rows whose record is unknown or dead: born (again).
        try connection.execute(
            """
            INSERT INTO \(SyncTables.records)(collection, id, cl, pending)
                SELECT \(name), \(id), 1, 1 FROM \(c.table) t WHERE true\(scope)
            ON CONFLICT(collection, id) DO UPDATE SET cl = cl + 1, pending = 1 WHERE cl % 2 = 0
            """)
        // Fields that differ from the record's current life.
        for column in c.columns {
            let quoted = CapturedTable.quoted(column)
            try connection.execute(
                """
                INSERT INTO \(SyncTables.fields)(collection, id, field, cl, hlc, device, value, pending)
                    SELECT \(name), r.id, \(CapturedTable.literal(column)), r.cl, d.hlc, d.device, t.\(quoted), 1
                    FROM \(c.table) t
                    JOIN \(SyncTables.records) r ON r.collection = \(name) AND r.id = \(id)
                    JOIN \(SyncTables.device) d
                    LEFT JOIN \(SyncTables.fields) s ON s.collection = \(name) AND s.id = r.id AND s.field = \(CapturedTable.literal(column))
                    WHERE (s.id IS NULL OR s.cl != r.cl OR s.value IS NOT t.\(quoted))\(scope)
                ON CONFLICT(collection, id, field) DO UPDATE SET
                    base_hlc = CASE WHEN pending = 1 THEN base_hlc ELSE hlc END,
                    base_device = CASE WHEN pending = 1 THEN base_device ELSE device END,
                    cl = excluded.cl, hlc = excluded.hlc, device = excluded.device, value = excluded.value, pending = 1
                """)
        }
        try connection.execute(
            """
            UPDATE \(SyncTables.records) SET pending = 1 WHERE collection = \(name) AND pending = 0
              AND id IN (SELECT id FROM \(SyncTables.fields) WHERE collection = \(name) AND pending = 1)
            """)
        // Alive records without a row: deleted while no trigger watched.
        try connection.execute(
            """
            UPDATE \(SyncTables.records) SET cl = cl + 1, pending = 1
            WHERE collection = \(name) AND cl % 2 = 1 AND missing = 0
              AND NOT EXISTS (SELECT 1 FROM \(c.table) t WHERE \(id) = \(SyncTables.records).id\(scope))
            """)
    }
}
