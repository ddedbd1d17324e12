import Foundation
import TroveSQLite

extension DocumentStore {
    // Every method here runs inside a transaction the caller opened on the writer connection,
    // so a throw leaves nothing behind once the caller rolls back.

    /// Validates every document, then writes them in order. `.insert` fails on an existing id,
    /// `.upsert` replaces it (its version goes up); `.update` is not used here. A document whose
    /// id is unassigned (``DocumentID/unassigned``) goes in under a new one
    /// (``assignIDs(_:on:)``).
    ///
    /// - Returns: each document's id, in order (the new one where it was unassigned).
    /// - Throws: the first validation error before anything is written;
    ///   ``TroveError/duplicateDocumentID(_:)`` or ``TroveError/uniqueViolation(field:value:)``
    ///   when a constraint fails (the caller's transaction then rolls back).
    @discardableResult
    func write(
        _ documents: [Document], mode: WriteMode, expiry: Expiry = .never, on connection: Connection
    ) throws -> [DocumentID] {
        let second = try expirySecond(expiry)
        var rows = try documents.map { try newRowValues($0, unassigned: $0.id == .unassigned) }
        if schema.allowsExpiry {
            for i in rows.indices { rows[i].append(second.map(SQLValue.integer) ?? .null) }
        }
        let fresh = try assignIDs(&rows, on: connection)
        try write(rows: rows, mode: mode, on: connection) { i in
            guard let id = fresh[i] else { return documents[i] }
            var document = documents[i]
            document.id = id
            return document
        }
        return documents.indices.map { fresh[$0] ?? documents[$0].id }
    }

    /// Writes rows already in ``writeColumns`` order (validated by the caller; with the expiry
    /// second last when the collection allows expiry); `document(i)` gives row i as a document,
    /// only to name what a failed constraint was about. Inside the caller's transaction, which
    /// rolls back when this throws; writes inside a user's `database.write { tx in }` take a
    /// savepoint around this (`DocumentWriter`), so a failed batch leaves nothing even when the
    /// transaction goes on. (Not here: a savepoint makes SQLite copy every page the batch first
    /// touches to its sub-journal, work a transaction that rolls back whole does not need.)
    ///
    /// Batches go several rows per statement (`insertMultiRow`): every
    /// statement runs the change log's trigger program and opens a statement journal, and the
    /// FTS5 shipped with SQLite before 3.44 flushes its pending terms as a new segment at every
    /// statement that fires its triggers, so one statement per row wrote one segment per row
    /// (BENCHMARKS.md, "Batch insert, text and hybrid queries").
    /// Inserts of 64 rows or more go in bulk (`bulkInsert`): without the insert
    /// triggers a row's statement runs no trigger program and needs no statement journal, so
    /// collections without full text gain too (BENCHMARKS.md, documents).
    /// Collections with expiry or references write one row per
    /// statement (each insert first removes an expired document of the same id; a reference
    /// must name a document written before it).
    func write(
        rows: [[SQLValue]], mode: WriteMode, on connection: Connection,
        document: (Int) throws -> Document
    )
        throws
    {
        try write(ValueRows(rows: rows), mode: mode, on: connection, document: document)
    }

    /// The same for any ``RowSource`` (a search collection binds its rows straight into the
    /// statements, without building arrays of values first).
    func write(
        _ rows: some RowSource, mode: WriteMode, on connection: Connection,
        document: (Int) throws -> Document
    )
        throws
    {
        guard rows.count > 0 else { return }
        // References are checked at the end of each statement: a batch of several rows per
        // statement would accept a child written before its parent, one row per statement not.
        let batched = !schema.allowsExpiry && schema.referenceFields.isEmpty
        if batched, mode == .insert, rows.count >= Self.bulkInsertMinimumRows {
            try bulkInsert(rows, on: connection, document: document)
        } else if batched, rows.count > 1 {
            try insertMultiRow(rows, upsert: mode == .upsert, on: connection, document: document)
        } else {
            try insertEach(
                rows, 0..<rows.count, upsert: mode == .upsert, on: connection, document: document)
        }
        try pruneLogIfNeeded(on: connection)
    }

    /// One statement per row (the path that names the row a constraint failed on).
    ///
    /// - Returns: the row id of each row inserted (for upserts that update, the last insert's).
    @discardableResult
    private func insertEach(
        _ rows: some RowSource, _ range: Range<Int>, upsert: Bool, on connection: Connection,
        document: (Int) throws -> Document
    ) throws -> [Int64] {
        let statement = try connection.cachedStatement(upsert ? upsertSQL : insertSQL)
        var rids: [Int64] = []
        rids.reserveCapacity(range.count)
        for i in range {
            // An expired document is gone for every read; its id is free for a new one.
            if schema.allowsExpiry { try removeExpired(document(i).id, on: connection) }
            do {
                statement.reset()
                try rows.bind(i, to: statement, at: 1)
                while try statement.step() {}
            } catch let error as SQLiteError where error.code == .constraint {
                throw try constraintError(
                    error, document: document(i), values: rows.values(i), on: connection)
            }
            rids.append(connection.lastInsertRowID)
        }
        return rids
    }

    /// Rows per multi-row INSERT statement (fewer when a row has many columns: SQLite takes at
    /// most 32,766 bindings per statement).
    static let rowsPerStatement = 500

    /// Smallest batch that takes the bulk path. Smaller batches go through the triggers: the
    /// bulk path changes the schema (drops and recreates two triggers), which makes this and
    /// every other connection re-prepare its statements, a fixed cost that a few rows do not repay.
    static let bulkInsertMinimumRows = 64

    /// Inserts or upserts with several rows per statement. A constraint failure (the statement
    /// changed nothing) is named by running that statement's rows again one by one in a
    /// savepoint that is rolled back.
    private func insertMultiRow(
        _ rows: some RowSource, upsert: Bool, on connection: Connection,
        document: (Int) throws -> Document
    ) throws {
        let width = writeColumns.count + (schema.allowsExpiry ? 1 : 0)
        let perStatement = max(1, min(Self.rowsPerStatement, 32_766 / width))
        let marks = "(" + repeatElement("?", count: width).joined(separator: ", ") + ")"
        var start = 0
        while start < rows.count {
            let end = min(rows.count, start + perStatement)
            var sql =
                multiRowInsertHead
                + repeatElement(marks, count: end - start).joined(separator: ", ")
            if upsert { sql += upsertClause }
            let statement = try connection.cachedStatement(sql)
            do {
                for i in start..<end {
                    try rows.bind(i, to: statement, at: 1 + (i - start) * width)
                }
                while try statement.step() {}
                statement.reset()
            } catch let error as SQLiteError where error.code == .constraint {
                do {
                    try connection.savepoint {
                        try insertEach(
                            rows, start..<end, upsert: upsert, on: connection, document: document)
                        throw ReplayedRows()
                    }
                } catch is ReplayedRows {
                    throw error
                }
            }
            start = end
        }
    }

    /// Inserts new rows with the change log's and the full-text index's insert triggers out of
    /// the way, then writes the log and the full-text index for the whole batch in one
    /// statement each.
    ///
    /// How: inside the caller's transaction (or savepoint), the two insert triggers are
    /// dropped, the rows inserted one statement each, the log and FTS5 rows written in bulk, and
    /// the triggers recreated from their own stored SQL before it ends. DDL is transactional: no
    /// other connection or process ever sees the table without its triggers (they read the last
    /// committed state, and the write lock keeps other writers out), a failure anywhere rolls the
    /// drop back with everything else, and raw SQL, from anywhere, always fires the triggers.
    /// Other insert triggers (places, links) still fire per row.
    ///
    /// Why: with the triggers, every row ran two trigger programs inside a statement that needs a
    /// statement journal, and FTS5 (before SQLite 3.44) flushed its pending terms as a new segment
    /// at each multi-row statement. Here the table inserts need no statement journal, and the
    /// batch becomes one FTS5 segment written in rowid order (FTS5 also flushes whenever a rowid
    /// goes down): fewer instructions per row for the same SQL work (BENCHMARKS.md, "Batch
    /// insert"). The cost: the schema cookie changes with each batch, so this and other
    /// connections re-prepare their statements once after it; the rows go through the short
    /// single-row statement, which re-prepares cheaply, not a 500-row one.
    private func bulkInsert(
        _ rows: some RowSource, on connection: Connection, document: (Int) throws -> Document
    )
        throws
    {
        let triggers = try connection.query(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?) ORDER BY name",
            [.text("\(name)_log_ai"), .text("\(name)_fts_ai")])
        for trigger in triggers {
            try connection.execute(script: "DROP TRIGGER \"\(trigger.string(at: 0)!)\"")
        }
        let rids = try insertEach(
            rows, 0..<rows.count, upsert: false, on: connection, document: document)
        let list = SQLValue.text(SQLFragment.jsonArray(rids))
        try connection.execute(
            "INSERT INTO \(layout.log)(\(layout.logRid), op) SELECT value, 1 FROM json_each(?)",
            [list])
        if let fullText = schema.fullText {
            let columns = fullText.fields.map { "\"\($0)\"" }.joined(separator: ", ")
            try connection.execute(
                """
                INSERT INTO \(layout.fts)(rowid, \(columns))
                SELECT \(layout.rid), \(columns) FROM \(layout.table) WHERE \(layout.rid) IN (SELECT value FROM json_each(?))
                ORDER BY \(layout.rid)
                """, [list])
        }
        for trigger in triggers { try connection.execute(script: trigger.string(at: 1)!) }
    }

    /// Changes some fields (or JSON paths inside json and undeclared fields) of one document.
    ///
    /// `.null` clears an optional field, or removes an undeclared field or a JSON path.
    /// - Returns: the document as stored afterwards.
    func patch(
        _ id: DocumentID, _ changes: [Field: Value], ifVersion version: Int64?,
        on connection: Connection
    ) throws
        -> Document
    {
        guard id.kind == schema.id else {
            throw TroveError.typeMismatch(
                field: "id", expected: "\(schema.id) id", value: id.description)
        }
        if try isExpired(id, on: connection) { throw TroveError.documentNotFound(id) }
        var assignments: [String: SQLFragment] = [:]  // column -> new value expression
        var order: [String] = []
        func assign(_ column: String, _ build: (SQLFragment) throws -> SQLFragment) throws {
            let current = assignments[column] ?? SQLFragment(sql: column, bindings: [])
            if assignments[column] == nil { order.append(column) }
            assignments[column] = try build(current)
        }
        for (field, value) in changes.sorted(by: { $0.key.description < $1.key.description }) {
            guard field.name != "id" else {
                throw TroveError.invalidValue(field: "id", reason: "the id cannot be patched")
            }
            guard !layout.automaticFields.contains(field.name) else {
                throw TroveError.invalidValue(
                    field: field.name, reason: "Trove sets \(field.name) itself")
            }
            if let definition = schema.field(field.name) {
                if let path = field.path {
                    guard definition.type == .json else {
                        throw TroveError.invalidPath(
                            field: field.name, path: path, reason: "only json fields have paths")
                    }
                    try FieldResolver.validate(path: path, field: field.name)
                    try assign("\"\(field.name)\"") { current in
                        let base = SQLFragment(
                            sql: "coalesce(\(current.sql), '{}')", bindings: current.bindings)
                        return try Self.jsonEdit(
                            base, path: path, value: value, field: field.description)
                    }
                } else {
                    if field.name == "metadata" { try layout.checkPreset(metadata: value) }
                    let bound = try FieldCodec.bind(value, for: definition)
                    try assign("\"\(field.name)\"") { _ in SQLFragment(sql: "?", bindings: [bound])
                    }
                }
            } else if schema.allowsUndeclaredFields {
                try DocumentSchema.validate(fieldName: field.name)
                var path = "$.\(field.name)"
                if let tail = field.path {
                    try FieldResolver.validate(path: tail, field: field.name)
                    path += tail.dropFirst()
                }
                try assign(FieldResolver.extraColumn) { current in
                    let base = SQLFragment(
                        sql: "coalesce(\(current.sql), '{}')", bindings: current.bindings)
                    return try Self.jsonEdit(
                        base, path: path, value: value, field: field.description)
                }
            } else {
                throw TroveError.unknownField(
                    field: field.name, known: ["id"] + schema.fields.map(\.name))
            }
        }
        if layout.preset != nil, let metadata = assignments["\"metadata\""] {
            try checkPresetMetadataSize(metadata, id: id, on: connection)
        }
        var statement = SQLFragment(sql: "UPDATE \(layout.table) SET ")
        for column in order {
            statement.append("\(column) = ")
            statement.append(assignments[column]!)
            statement.append(", ")
        }
        for touch in layout.updateTouches { statement.append(touch + ", ") }
        statement.append("\"_version\" = \"_version\" + 1 WHERE \"id\" = ")
        statement.bind(id.sqlValue)
        if let version {
            statement.append(" AND \"_version\" = ")
            statement.bind(.integer(version))
        }
        let prepared = try connection.prepare(statement.sql)
        do {
            try prepared.execute(statement.bindings)
        } catch let error as SQLiteError where error.code == .constraint {
            // The only constraints a patch can break are unique fields and references.
            if error.extendedCode == .constraintForeignKey {
                var values: [String: SQLValue] = [:]
                for (field, value) in changes where field.path == nil {
                    if let definition = schema.field(field.name) {
                        values[field.name] = try FieldCodec.bind(value, for: definition)
                    }
                }
                if let missing = try missingReference(values, on: connection) { throw missing }
            }
            throw try uniqueError(fromPatch: changes, on: connection)
                ?? TroveError.invalidValue(field: id.description, reason: error.message)
        }
        guard connection.changes > 0 else {
            throw try missingOrConflict(id, expected: version, on: connection)
        }
        try pruneLogIfNeeded(on: connection)
        guard let document = try fetch(id: id, on: connection) else {
            throw TroveError.documentNotFound(id)
        }
        return document
    }

    private static func jsonEdit(_ base: SQLFragment, path: String, value: Value, field: String)
        throws -> SQLFragment
    {
        var out = SQLFragment()
        if value.isNull {
            out.append("json_remove(")
            out.append(base)
            out.append(", '\(path)')")
            return out
        }
        out.append("json_set(")
        out.append(base)
        out.append(", '\(path)', json(")
        out.bind(.text(try JSONCoding.text(value, field: field)))
        out.append("))")
        return out
    }

    /// Deletes documents by id. - Returns: how many existed.
    func delete(ids: [DocumentID], on connection: Connection) throws -> Int {
        let statement = try connection.cachedStatement(
            "DELETE FROM \(layout.table) WHERE \"id\" = ?")
        var deleted = 0
        for id in ids {
            guard id.kind == schema.id else {
                throw TroveError.typeMismatch(
                    field: "id", expected: "\(schema.id) id", value: id.description)
            }
            do {
                try statement.execute([id.sqlValue])
            } catch let error as SQLiteError where error.extendedCode == .constraintForeignKey {
                throw try deleteDenial(of: [id], on: connection) ?? error
            }
            deleted += connection.changes
        }
        try pruneLogIfNeeded(on: connection)
        return deleted
    }

    /// Deletes every document passing the filter. - Returns: how many.
    func delete(where filter: Filter, on connection: Connection) throws -> Int {
        let compiled = try condition(filter, on: connection)
        do {
            try connection.prepare("DELETE FROM \(layout.table) WHERE \(compiled.sql)").execute(
                compiled.bindings)
        } catch let error as SQLiteError where error.extendedCode == .constraintForeignKey {
            let ids = try connection.prepare(
                "SELECT \"id\" FROM \(layout.table) WHERE \(compiled.sql)"
            ).rows(
                compiled.bindings
            )
            .compactMap { DocumentID.read($0[0], kind: schema.id) }
            throw try deleteDenial(of: ids, on: connection) ?? error
        }
        let deleted = connection.changes
        try pruneLogIfNeeded(on: connection)
        return deleted
    }

    // MARK: Errors

    func missingOrConflict(_ id: DocumentID, expected: Int64?, on connection: Connection) throws
        -> TroveError
    {
        let actual = try connection.scalar(
            "SELECT \"_version\" FROM \(layout.table) WHERE \"id\" = ?", [id.sqlValue])?
            .int64Value
        guard let actual else { return .documentNotFound(id) }
        return .versionConflict(id: id, expected: expected ?? 0, actual: actual)
    }

    /// Names what a failed constraint was about, by asking the table (never by reading SQLite's
    /// message): the id, a unique field, or a unique index.
    func constraintError(
        _ error: SQLiteError, document: Document, values: [SQLValue], on connection: Connection
    ) throws
        -> TroveError
    {
        if error.extendedCode == .constraintPrimaryKey { return .duplicateDocumentID(document.id) }
        if error.extendedCode == .constraintForeignKey,
            let missing = try missingReference(referenceValues(values), on: connection)
        {
            return missing
        }
        for (offset, field) in schema.fields.enumerated() where field.isUnique {
            let value = values[offset + 1]
            if !value.isNull,
                try connection.scalar(
                    "SELECT 1 FROM \(layout.table) WHERE \"\(field.name)\" = ? AND \"id\" IS NOT ?",
                    [value, document.id.sqlValue]) != nil
            {
                return .uniqueViolation(
                    field: field.name, value: document[field.name]?.description ?? "\(value)")
            }
        }
        let resolver = self.resolver
        for index in schema.indexes where index.isUnique {
            let keys = try index.keys.map { try resolver.column($0) }
            // Rebuild the new row's key values by evaluating the key expressions over its values.
            let probe = keys.map(\.sql).joined(separator: ", ")
            let columns = writeColumns
            let marks = columns.map { "? AS \($0)" }.joined(separator: ", ")
            let newKeys =
                try connection.query("SELECT \(probe) FROM (SELECT \(marks))", values).first?.values
                ?? []
            let condition = keys.map { "\($0.sql) IS ?" }.joined(separator: " AND ")
            if try connection.scalar(
                "SELECT 1 FROM \(layout.table) WHERE \(condition) AND \"id\" IS NOT ?",
                newKeys + [document.id.sqlValue]
            ) != nil {
                return .uniqueViolation(
                    field: index.keys.map(\.description).joined(separator: "+"),
                    value: newKeys.map(\.description).joined(separator: ", "))
            }
        }
        // Text ids are a UNIQUE column rather than the primary key.
        if try connection.scalar(
            "SELECT 1 FROM \(layout.table) WHERE \"id\" = ?", [document.id.sqlValue]) != nil
        {
            return .duplicateDocumentID(document.id)
        }
        return .invalidValue(
            field: document.id.description, reason: "a constraint failed (\(error.extendedCode))")
    }

    private func uniqueError(fromPatch changes: [Field: Value], on connection: Connection) throws
        -> TroveError?
    {
        for (field, value) in changes where field.path == nil {
            guard let definition = schema.field(field.name), definition.isUnique, !value.isNull
            else { continue }
            return .uniqueViolation(field: field.name, value: value.description)
        }
        return nil
    }

    /// Deletes old change-log entries once the log is long; call inside a write transaction.
    func pruneLogIfNeeded(on connection: Connection) throws {
        try layout.changeLog.pruneIfNeeded(connection)
    }
}

/// Rows for ``DocumentStore/write(_:mode:on:document:)``, each in the store's write columns
/// (``DocumentStore/writeColumns``, then the expiry second when the collection allows expiry).
/// How a batch treats ids that already exist.
enum WriteMode {
    /// Fail with ``TroveError/duplicateDocumentID(_:)``.
    case insert
    /// Replace the document (its version goes up).
    case upsert
    /// Fail with ``TroveError/documentNotFound(_:)`` when the id is missing (one row at a time).
    case update
}

protocol RowSource {
    var count: Int { get }
    /// Binds row `i`'s values to `statement`'s parameters `first`, `first + 1`, ...
    func bind(_ i: Int, to statement: Statement, at first: Int) throws
    /// Row `i`'s values (to name what a failed constraint was about).
    func values(_ i: Int) -> [SQLValue]
}

/// Rows already turned into values.
struct ValueRows: RowSource {
    let rows: [[SQLValue]]
    var count: Int { rows.count }
    func bind(_ i: Int, to statement: Statement, at first: Int) throws {
        // Read in place: iterating the row would copy each value (retaining its text).
        try rows[i].withUnsafeBufferPointer { values in
            for offset in values.indices { try statement.bind(values[offset], at: first + offset) }
        }
    }
    func values(_ i: Int) -> [SQLValue] { rows[i] }
}

/// Thrown to roll back the savepoint in which a failed multi-row statement's rows were replayed.
private struct ReplayedRows: Error {}
