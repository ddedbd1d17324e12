import Foundation
import TroveSQLite

/// SQLite's procedure for table changes ALTER TABLE cannot make (its "12 steps"): create the new
/// table under a temporary name, copy the rows, drop the old table, rename the new one. Row ids
/// and versions are kept, so the full-text table's rowids and every in-memory index entry still
/// name the same documents. The caller drops and re-creates indexes and triggers around it and
/// runs it with foreign keys off (dropping a parent table would otherwise delete its children).
struct TableRebuild {
    let connection: Connection
    let old: DocumentLayout
    let new: DocumentLayout
    let sources: [String: ColumnSource]

    func run() throws {
        let temporary = "\(new.name)__migrating"
        let scratch = DocumentLayout(name: temporary, schema: new.schema)
        guard
            let create = try scratch.createStatements().first(where: {
                $0.hasPrefix("CREATE TABLE \(scratch.table) ")
            })
        else {
            preconditionFailure("DocumentLayout made no table statement")
        }
        if try connection.scalar(
            "SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(temporary)]) != nil
        {
            throw StepRefusal(
                reason:
                    "the file has a table named \(temporary), which rebuilding \(new.name) needs")
        }
        try connection.execute(script: create)

        // Columns kept as they are: the row id (and text id), then every internal column both
        // tables have (`_version`, `_extra`, `_expires`, and whatever the layout adds later).
        let movesExtra = new.schema.fields.contains {
            if case .fromExtra = sources[$0.name] { true } else { false }
        }
        var keyColumns = [old.rid]
        if new.schema.id != .int64 { keyColumns.append("\"id\"") }
        let oldColumns = Set(
            try connection.query("SELECT name FROM pragma_table_info(?)", [.text(old.name)])
                .compactMap {
                    $0.string(at: 0)
                })
        for row in try connection.query(
            "SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(temporary)])
        {
            guard let column = row.string(at: 0), column.hasPrefix("_"), column != "_rowid",
                oldColumns.contains(column),
                !(column == "_extra" && movesExtra)
            else { continue }
            keyColumns.append("\"\(column)\"")
        }
        let copied = new.schema.fields.compactMap { field -> (String, String)? in
            if case .copy(let from) = sources[field.name] {
                return ("\"\(field.name)\"", "\"\(from)\"")
            }
            return nil
        }
        let computed = new.schema.fields.filter {
            switch sources[$0.name] {
            case .convert, .fromExtra, .vectors: true
            default: false
            }
        }
        if computed.isEmpty {
            let targets = (keyColumns + copied.map(\.0)).joined(separator: ", ")
            let values = (keyColumns + copied.map(\.1)).joined(separator: ", ")
            try connection.execute(
                script:
                    "INSERT INTO \(scratch.table)(\(targets)) SELECT \(values) FROM \(old.table)")
        } else {
            try copyRowByRow(
                into: scratch, keyColumns: keyColumns, copied: copied, computed: computed,
                movesExtra: movesExtra)
        }
        try connection.execute(script: "DROP TABLE \(old.table)")
        try connection.execute(script: "ALTER TABLE \(scratch.table) RENAME TO \(new.table)")
    }

    /// Reads every old row, computes the new fields in Swift (transforms, values moved out of
    /// `_extra`, re-embedded vectors) and inserts it with bound values.
    private func copyRowByRow(
        into scratch: DocumentLayout, keyColumns: [String], copied: [(String, String)],
        computed: [FieldDefinition],
        movesExtra: Bool
    ) throws {
        // Read: key columns, copied columns, then one source column per computed field, then
        // the id (for error messages) and `_extra` when values move out of it.
        var reads = keyColumns + copied.map(\.1)
        for field in computed {
            switch sources[field.name] {
            case .convert(let previous, _): reads.append("\"\(previous.name)\"")
            case .vectors: reads.append(old.rid)
            default: reads.append("NULL")
            }
        }
        let idColumn = reads.count
        reads.append("\"id\"")
        let extraColumn = reads.count
        if movesExtra { reads.append("\"_extra\"") }
        var targets = keyColumns + copied.map(\.0) + computed.map { "\"\($0.name)\"" }
        if movesExtra { targets.append("\"_extra\"") }
        let insert = try connection.prepare(
            "INSERT INTO \(scratch.table)(\(targets.joined(separator: ", "))) VALUES (\(repeatElement("?", count: targets.count).joined(separator: ", ")))"
        )
        var seen: [String: Set<SQLValue>] = [:]
        let select = try connection.prepare(
            "SELECT \(reads.joined(separator: ", ")) FROM \(old.table) ORDER BY \(old.rid)")
        try select.forEachRow { row in
            var values: [SQLValue] = (0..<(keyColumns.count + copied.count)).map {
                row.value(at: $0)
            }
            let id =
                DocumentID.read(row.value(at: idColumn), kind: old.schema.id)
                ?? .int(row.int64(at: 0))
            var extra: [String: Value]? = nil
            if movesExtra, let text = row.string(at: extraColumn),
                case .object(let members)? = try? JSONCoding.value(text)
            {
                extra = members
            }
            for (offset, field) in computed.enumerated() {
                let column = keyColumns.count + copied.count + offset
                let value: SQLValue
                do {
                    switch sources[field.name] {
                    case .convert(let previous, let transform):
                        let before = FieldCodec.read(row, column: column, as: previous.type)
                        value = try FieldCodec.bind(try transform?(before) ?? before, for: field)
                    case .fromExtra:
                        value = try FieldCodec.bind(
                            extra?.removeValue(forKey: field.name) ?? field.defaultValue ?? .null,
                            for: field)
                    case .vectors(let vectors):
                        value = try FieldCodec.bind(
                            vectors.vector(rid: row.int64(at: column)).map(Value.vector) ?? .null,
                            for: field)
                    default:
                        preconditionFailure("not a computed column")
                    }
                } catch {
                    throw MigrationError.transformFailed(
                        collection: old.name, field: field.name, id: id, reason: "\(error)")
                }
                if field.isUnique, !value.isNull,
                    !seen[field.name, default: []].insert(value).inserted
                {
                    throw MigrationError.duplicateValues(
                        collection: old.name, keys: [field.name], value: "\(value)")
                }
                values.append(value)
            }
            if movesExtra {
                values.append(
                    try extra.flatMap {
                        $0.isEmpty
                            ? nil : SQLValue.text(try JSONCoding.text(.object($0), field: "_extra"))
                    } ?? .null)
            }
            try insert.execute(values)
        }
    }
}
