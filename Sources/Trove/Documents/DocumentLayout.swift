import Foundation
import TroveSQLite

/// Names and SQL of the objects that make up one document collection `c`:
///
/// ```
/// c(id INTEGER PRIMARY KEY | _rowid INTEGER PRIMARY KEY + id TEXT UNIQUE,
///   _version INTEGER, <declared fields...>, _extra TEXT  -- undeclared fields, a JSON object)
/// c_log(seq, rid, op)    -- every insert, update (of any column) and delete, trigger-fed
/// c_fts                  -- FTS5 over the full-text fields (external content, triggers)
/// c_i<n>                 -- B-tree indexes
/// ```
///
/// `rid` is the table's integer primary key: the id itself for `.int64` collections, an
/// internal `_rowid` otherwise (declared, so VACUUM keeps it; it never leaves the file).
struct DocumentLayout: Sendable {
    let name: String
    let schema: DocumentSchema
    /// Set when the layout describes a search collection's table: the preset's fields, with
    /// automatic timestamps and the metadata rule (DocumentLayout+Preset.swift).
    var preset: CollectionConfiguration? = nil
    /// Whether the table has its `_version` column: always, except search collections of files
    /// older than format 3 opened read-only (their rows then read as version 1).
    var hasVersions = true
    /// What reads select as a row's version.
    var versionColumn: String { hasVersions ? "\"_version\"" : "1" }

    static let metaKeyPrefix = "documents."

    var table: String { quoted(name) }
    var log: String { quoted("\(name)_log") }
    var ftsName: String { "\(name)_fts" }
    var fts: String { quoted(ftsName) }
    /// FTS5 settings of a full-text table (`fts` quoted), stored in its own config (so every
    /// connection uses them). Every collection's text index takes them.
    ///
    /// `hashsize`: how many bytes of pending terms FTS5 holds before it flushes a segment early
    /// (default 1 MB): with the default a large batch flushed a new segment every megabyte of
    /// pending terms, each merged again later.
    ///
    /// `automerge` 0 and `crisismerge` `CollectionSchema.ftsCrisisMerge`: the writer no longer merges segments in
    /// its commits (about a third of a batch insert's time); ``BackgroundMerger`` merges them on
    /// another connection once writes pause, as far as the default automerge (4) would have.
    /// The crisis merge still bounds the segments per level when writes never pause, or come
    /// from another program. (Merging at 8 segments per level in the writer instead saved little
    /// and left FTS5 queries with snippets slower: BENCHMARKS.md, "Batch insert".)
    static func ftsSettings(fts: String) -> [String] {
        [
            "INSERT INTO \(fts)(\(fts), rank) VALUES ('hashsize', \(CollectionSchema.ftsHashSize))",
            "INSERT INTO \(fts)(\(fts), rank) VALUES ('automerge', 0)",
            "INSERT INTO \(fts)(\(fts), rank) VALUES ('crisismerge', \(CollectionSchema.ftsCrisisMerge))",
        ]
    }

    /// The FTS5 settings of this collection's text index.
    var ftsSettings: [String] { Self.ftsSettings(fts: fts) }

    /// The table of the collection's saved vector indexes (``IndexSnapshotStore``), made on the first save.
    var snapshotTableName: String { "\(name)_index" }
    var metaKey: String { Self.metaKeyPrefix + name }

    /// Where the index of the vector field `field` is saved: the collection's `<name>_index`
    /// table, an HNSW graph under the field's name, a flat matrix under `<field>.flat` (search
    /// collections' files before format 4 used `hnsw` and `flat`; the upgrade renames them).
    func snapshotLocation(for field: String, flat: Bool = false) -> IndexSnapshotStore.Location {
        let key =
            legacySnapshotKeys && field == "embedding"
            ? (flat ? "flat" : "hnsw") : (flat ? "\(field).flat" : field)
        return IndexSnapshotStore.Location(table: snapshotTableName, key: key)
    }
    /// Whether `embedding`'s snapshots are under `hnsw` and `flat`: a search collection of a
    /// file older than format 4 opened read-only (writable opens upgrade the file first).
    var legacySnapshotKeys = false
    var logFloorKey: String { "log_floor.\(name)" }
    var changeLog: ChangeLog { ChangeLog(table: log, floorKey: logFloorKey) }
    /// The integer primary key column.
    var rid: String { schema.id == .int64 ? "\"id\"" : "\"_rowid\"" }
    /// The change log's column naming the changed row: `rid`, except in the log of an Int64
    /// search collection of a file older than format 4 opened read-only (`id`).
    var logRid = "rid"

    private func quoted(_ identifier: String) -> String { "\"\(identifier)\"" }

    /// Every table, index and trigger name this collection creates (to detect collisions before
    /// creating anything).
    var objectNames: [String] {
        var names = [
            name, "\(name)_log", "\(name)_log_ai", "\(name)_log_au", "\(name)_log_ad",
            "\(name)_version",
        ]
        if schema.fullText != nil {
            names += [ftsName, "\(name)_fts_ai", "\(name)_fts_au", "\(name)_fts_ad"]
        }
        if schema.allowsExpiry { names.append(expiresIndexName) }
        if schema.fields.contains(where: { if case .vector = $0.type { true } else { false } }) {
            names.append(snapshotTableName)
        }
        names += indexDefinitions.indices.map { "\(name)_i\($0)" }
        names +=
            geoObjectNames + [
                EdgeTable.cascadeTriggerName(name), EdgeTable.idChangeTriggerName(name),
            ]
        return names
    }

    /// The per-field flags and the explicit indexes, as one list. A reference field is always
    /// indexed: SQLite looks children up by it on every delete of a parent.
    var indexDefinitions: [IndexDefinition] {
        schema.fields.filter { ($0.isIndexed || $0.reference != nil) && !$0.isUnique }.map {
            IndexDefinition([Field($0.name)])
        }
            + schema.indexes
    }

    /// The expiry column (whole seconds since 1970; NULL: never) of collections that allow expiry.
    static let expiresColumn = "\"_expires\""
    /// The partial index that finds expired rows (for visibility and purge).
    var expiresIndexName: String { "\(name)_expires" }

    /// The declared columns in table order (after id and _version).
    var fieldColumns: [FieldDefinition] { schema.fields }

    func createStatements() throws -> [String] {
        var columns: [String] = []
        switch schema.id {
        case .int64:
            columns.append("\"id\" INTEGER PRIMARY KEY")
        case .uuid, .string:
            columns.append("\"_rowid\" INTEGER PRIMARY KEY")
            columns.append(
                "\"id\" TEXT NOT NULL UNIQUE CHECK (typeof(\"id\") = 'text' AND length(\"id\") > 0)"
            )
        }
        columns.append("\"_version\" INTEGER NOT NULL DEFAULT 1")
        for field in schema.fields { columns.append(try columnDefinition(field)) }
        if schema.allowsUndeclaredFields {
            columns.append(
                "\"_extra\" TEXT CHECK (\"_extra\" IS NULL OR (json_valid(\"_extra\") AND json_type(\"_extra\") = 'object'))"
            )
        }
        if schema.allowsExpiry {
            columns.append(
                "\"_expires\" INTEGER CHECK (\"_expires\" IS NULL OR typeof(\"_expires\") = 'integer')"
            )
        }
        var sql = ["CREATE TABLE \(table) (\n    " + columns.joined(separator: ",\n    ") + "\n)"]
        if schema.allowsExpiry {
            sql.append(
                "CREATE INDEX \(quoted(expiresIndexName)) ON \(table)(\"_expires\") WHERE \"_expires\" IS NOT NULL"
            )
        }
        let resolver = FieldResolver(schema: schema)
        for (offset, index) in indexDefinitions.enumerated() {
            let keys = try index.keys.map { try resolver.column($0).sql }.joined(separator: ", ")
            sql.append(
                "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(quoted("\(name)_i\(offset)")) ON \(table)(\(keys))"
            )
        }
        // The change log: every change to any column, so every derived index can catch up from it.
        sql += Self.changeLogStatements(table: table, log: log, rid: rid, name: name)
        sql += [
            // Updates made with raw SQL raise the version too (the API raises it itself, so this
            // fires only when a statement left it unchanged).
            """
            CREATE TRIGGER \(quoted("\(name)_version")) AFTER UPDATE ON \(table)
            WHEN new."_version" = old."_version" BEGIN
                UPDATE \(table) SET "_version" = old."_version" + 1 WHERE \(rid) = new.\(rid);
            END
            """
        ]
        if let fullText = schema.fullText {
            let cols = fullText.fields.map(quoted).joined(separator: ", ")
            let newValues = fullText.fields.map { "new.\(quoted($0))" }.joined(separator: ", ")
            let oldValues = fullText.fields.map { "old.\(quoted($0))" }.joined(separator: ", ")
            let tokenizer = fullText.tokenizer.replacingOccurrences(of: "'", with: "''")
            let ridName = schema.id == .int64 ? "id" : "_rowid"
            sql += [
                "CREATE VIRTUAL TABLE \(fts) USING fts5(\(cols), content=\(table), content_rowid=\(ridName), tokenize='\(tokenizer)')",
                """
                CREATE TRIGGER \(quoted("\(name)_fts_ai")) AFTER INSERT ON \(table) BEGIN
                    INSERT INTO \(fts)(rowid, \(cols)) VALUES (new.\(rid), \(newValues));
                END
                """,
                """
                CREATE TRIGGER \(quoted("\(name)_fts_ad")) AFTER DELETE ON \(table) BEGIN
                    INSERT INTO \(fts)(\(fts), rowid, \(cols)) VALUES ('delete', old.\(rid), \(oldValues));
                END
                """,
                """
                CREATE TRIGGER \(quoted("\(name)_fts_au")) AFTER UPDATE OF \(rid), \(cols) ON \(table) BEGIN
                    INSERT INTO \(fts)(\(fts), rowid, \(cols)) VALUES ('delete', old.\(rid), \(oldValues));
                    INSERT INTO \(fts)(rowid, \(cols)) VALUES (new.\(rid), \(newValues));
                END
                """,
            ]
        }
        sql += geoCreateStatements
        sql += EdgeTable.cascadeStatements(for: self)
        return sql
    }

    /// The change log `<name>_log(seq, rid, op)` and its three triggers on `table`: every
    /// insert, update (of any column) and delete, so every derived index can catch up from it.
    ///
    /// A seq is never reused, so a watermark always means the same point: the log is only ever
    /// pruned from its oldest end (``ChangeLog`` keeps the newest entries, a floor marker
    /// included), so SQLite's `max(seq) + 1` never hands out a seq a watermark has seen, and
    /// entries of a rolled-back transaction were never seen. No `AUTOINCREMENT`, which promises
    /// the same by updating a `sqlite_sequence` row in every writing statement: one more page
    /// in every commit (16 KB), the larger part of a one-row write. Files created before keep it.
    static func changeLogStatements(
        table: String, log: String, rid: String, name: String, ifNotExists: Bool = false
    )
        -> [String]
    {
        let tableClause = ifNotExists ? "TABLE IF NOT EXISTS" : "TABLE"
        let trigger = ifNotExists ? "TRIGGER IF NOT EXISTS" : "TRIGGER"
        return [
            "CREATE \(tableClause) \(log) (seq INTEGER PRIMARY KEY, rid INTEGER NOT NULL, op INTEGER NOT NULL)",
            """
            CREATE \(trigger) "\(name)_log_ai" AFTER INSERT ON \(table) BEGIN
                INSERT INTO \(log)(rid, op) VALUES (new.\(rid), 1);
            END
            """,
            """
            CREATE \(trigger) "\(name)_log_au" AFTER UPDATE ON \(table) BEGIN
                INSERT INTO \(log)(rid, op) SELECT old.\(rid), 2 WHERE old.\(rid) != new.\(rid);
                INSERT INTO \(log)(rid, op) VALUES (new.\(rid), 1);
            END
            """,
            """
            CREATE \(trigger) "\(name)_log_ad" AFTER DELETE ON \(table) BEGIN
                INSERT INTO \(log)(rid, op) VALUES (old.\(rid), 2);
            END
            """,
        ]
    }

    var dropStatements: [String] {
        var sql = [
            "DROP TABLE IF EXISTS \(table)", "DROP TABLE IF EXISTS \(log)",
            "DROP TABLE IF EXISTS \(quoted(snapshotTableName))",
        ]
        if schema.fullText != nil { sql.insert("DROP TABLE IF EXISTS \(fts)", at: 0) }
        sql += pointFields.map { "DROP TABLE IF EXISTS \(geoTable($0))" }
        return sql
    }

    /// Deletes the collection: its table, change log, full-text table and schema.
    func drop(on connection: Connection) throws {
        try DocumentStore.refuseDropIfReferenced(name, on: connection)
        for statement in dropStatements { try connection.execute(script: statement) }
        // Its records' links go with it (the cascade trigger went with the table).
        if try EdgeTable.exists(connection) {
            try connection.execute(
                "DELETE FROM \(EdgeTable.table) WHERE from_collection = ?1 OR to_collection = ?1",
                [.text(name)])
        }
        try connection.execute(
            "DELETE FROM \(CollectionSchema.metaTable) WHERE key IN (?, ?)",
            [.text(preset == nil ? metaKey : "collection.\(name)"), .text(logFloorKey)])
    }

    func columnDefinition(_ field: FieldDefinition) throws -> String {
        let c = quoted(field.name)
        var (affinity, check): (String, String)
        // The scalar checks call no function: a CHECK that calls one makes SQLite give every
        // statement that sets its column, in a table with triggers, a statement journal (a copy
        // of each 16 KB page it touches), the larger part of a one-row update's cost. Each
        // accepts exactly what `typeof` did (storage classes order NULL < numbers < text <
        // blob; a value equals its CAST only when it already has that class). Files created
        // before keep their `typeof` checks, which mean the same.
        switch field.type {
        case .text: (affinity, check) = ("TEXT", "\(c) >= '' AND \(c) < X''")
        case .integer: (affinity, check) = ("INTEGER", "\(c) = CAST(\(c) AS INTEGER)")
        case .real: (affinity, check) = ("REAL", "\(c) = CAST(\(c) AS REAL)")
        case .bool: (affinity, check) = ("INTEGER", "\(c) IN (0, 1)")
        case .date: (affinity, check) = ("REAL", "\(c) = CAST(\(c) AS REAL)")
        case .data: (affinity, check) = ("BLOB", "\(c) >= X''")
        case .json: (affinity, check) = ("TEXT", "json_valid(\(c))")
        case .vector(let dimension, _):
            (affinity, check) = (
                "BLOB", "typeof(\(c)) = 'blob' AND length(\(c)) = \(4 * dimension)"
            )
        case .point: (affinity, check) = ("TEXT", Self.pointCheck(c))
        }
        if let rule = presetCheck(field, column: c) { check = rule }
        var sql = "\(c) \(affinity)"
        if field.isOptional {
            sql += " CHECK (\(c) IS NULL OR (\(check)))"
        } else {
            sql += " NOT NULL CHECK (\(check))"
        }
        if field.isUnique { sql += " UNIQUE" }
        if let value = field.defaultValue {
            sql += " DEFAULT \(try Self.literal(FieldCodec.bind(value, for: field)))"
        }
        if let automatic = automaticDefault(field) { sql += " DEFAULT \(automatic)" }
        if let reference = field.reference { sql += " " + reference.foreignKeyClause }
        return sql
    }

    /// A SQL literal for DDL defaults (the one place SQLite takes no bound values).
    static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let v): String(v)
        case .real(let v): v.isFinite ? "(\(v))" : "NULL"
        case .text(let v): "'\(v.replacingOccurrences(of: "'", with: "''"))'"
        case .blob(let v): "X'\(v.map { String(format: "%02X", $0) }.joined())'"
        }
    }
}

/// Converts document values to and from a declared field's stored form, with typed errors.
enum FieldCodec {
    /// The stored value of `value` for `field`.
    ///
    /// - Throws: ``TroveError/typeMismatch(field:expected:value:)``, ``TroveError/missingField(field:)``
    ///   for null in a required field, ``TroveError/dimensionMismatch(expected:actual:)`` and
    ///   ``TroveError/invalidVector(reason:)`` for vectors.
    static func bind(_ value: Value, for field: FieldDefinition) throws -> SQLValue {
        func mismatch() -> TroveError {
            .typeMismatch(
                field: field.name, expected: field.type.description, value: value.description)
        }
        if value.isNull {
            guard field.isOptional else { throw TroveError.missingField(field: field.name) }
            return .null
        }
        if let reference = field.reference { return try reference.bind(value, field: field.name) }
        switch (field.type, value) {
        case (.text, .string(let v)): return .text(v)
        case (.integer, .int(let v)): return .integer(v)
        case (.real, .double(let v)):
            guard v.isFinite else {
                throw TroveError.invalidValue(field: field.name, reason: "\(v) is not finite")
            }
            return .real(v)
        case (.real, .int(let v)): return .real(Double(v))
        case (.bool, .bool(let v)): return .integer(v ? 1 : 0)
        case (.date, .date(let v)): return .real(v.timeIntervalSince1970)
        case (.data, .data(let v)): return .blob([UInt8](v))
        case (.json, let v):
            switch v {
            case .date, .data, .vector: throw mismatch()
            default: return .text(try JSONCoding.text(v, field: field.name))
            }
        case (.vector, .array(let items)):
            // An array literal of numbers (`"embedding": [0.1, 0.2, 0.3]`) is a vector too.
            let numbers = items.compactMap(\.doubleValue)
            guard numbers.count == items.count else { throw mismatch() }
            return try bind(.vector(numbers.map { Float($0) }), for: field)
        case (.vector(let dimension, let metric), .vector(let v)):
            guard v.count == dimension else {
                throw TroveError.dimensionMismatch(expected: dimension, actual: v.count)
            }
            guard v.allSatisfy(\.isFinite) else {
                throw TroveError.invalidVector(
                    reason: "\(field.name) has a NaN or infinite component")
            }
            if metric == .cosine, v.allSatisfy({ $0 == 0 }) {
                throw TroveError.invalidVector(
                    reason: "\(field.name) is a zero vector, which has no cosine")
            }
            return .blob(VectorBlob.bytes(v))
        case (.point, let v):
            guard let point = v.pointValue else { throw mismatch() }
            let valid = try point.validated(field: field.name)
            return .text("[\(valid.latitude),\(valid.longitude)]")
        default:
            throw mismatch()
        }
    }

    /// Reads column `column` of the current row as a value of a field of type `type`.
    static func read<Columns: FieldColumns>(_ statement: Columns, column: Int, as type: FieldType)
        -> Value
    {
        switch type {
        case .text: return statement.string(at: column).map(Value.string) ?? .null
        case .json:
            // Arrays of plain strings (tags, labels) without the general parser.
            guard let bytes = statement.bytes(at: column) else { return .null }
            return JSONStringArray.parse(bytes, Value.string).map(Value.array)
                ?? (try? JSONCoding.value(bytes: bytes))
                ?? .null
        case .vector(let dimension, _):
            return statement.bytes(at: column).flatMap {
                VectorBlob.vector($0, dimension: dimension)
            }.map(Value.vector)
                ?? .null
        default: break
        }
        if statement.isNull(at: column) { return .null }
        switch type {
        case .integer: return .int(statement.int64(at: column))
        case .real: return .double(statement.double(at: column))
        case .bool: return .bool(statement.int64(at: column) != 0)
        case .date: return .date(Date(timeIntervalSince1970: statement.double(at: column)))
        case .data: return .data(statement.bytes(at: column).map { Data($0) } ?? Data())
        case .point:
            return (try? JSONCoding.value(statement.string(at: column) ?? "null"))?.pointValue.map(
                Value.point) ?? .null
        case .text, .json, .vector: preconditionFailure("read above")
        }
    }
}
