import Foundation
import TroveSQLite
import TroveText
import TroveVectors

/// The working state of one document collection: its layout, derived indexes and the operations,
/// each run on a connection it is given (the writer's, inside a transaction, or a reader's).
///
/// Sendable: everything is immutable except the in-memory indexes, which ``DerivedIndexSet``
/// guards with its lock. Connections are never stored here; callers own them.
final class DocumentStore: Sendable {
    let layout: DocumentLayout
    let indexes: DerivedIndexSet
    /// The clock expiry is measured against (see ``Expiry``).
    let clock: any ExpiryClock
    /// The file's links, for filters over the link graph.
    let graph: GraphStore
    var schema: DocumentSchema { layout.schema }
    var name: String { layout.name }
    var resolver: FieldResolver { FieldResolver(schema: schema) }

    /// Statements that depend only on the layout, built once.
    let insertSQL: String
    let upsertSQL: String
    /// `INSERT INTO t(columns) VALUES ` and ` ON CONFLICT ... DO UPDATE SET ...`, for
    /// multi-row statements.
    let multiRowInsertHead: String
    let upsertClause: String
    /// What an update reads before it writes (``update(row:id:ifVersion:on:document:)``): the
    /// row's rid, version and write columns (but the id), then the change log's state, for the
    /// id `?1` (floor key `?2`; and `?3`, now, for collections with expiry, whose expired rows
    /// are not found).
    let currentRowSQL: String
    /// The UPDATE statements of each set of changed columns, built on first use.
    let partialUpdates = PartialUpdates()
    /// Every column of a document.
    let fullSelection: Selection
    /// The columns a write sets: `id`, the declared fields Trove does not set itself, then
    /// `_extra` when kept.
    let writeColumns: [String]
    /// The declared fields a write sets (all but the layout's automatic ones, which come last).
    let writableFields: [FieldDefinition]
    /// What ``storedValues(_:)`` asks of the schema and layout for every document, read once
    /// (each look through `layout` copied the schema or the preset configuration).
    private let idKind: IDKind
    private let keepsExtra: Bool
    private let hasPreset: Bool

    /// - Parameter indexes: the derived indexes, when someone else keeps them (tests);
    ///   otherwise the layout's own.
    init(
        layout: DocumentLayout, graph: GraphStore, clock: any ExpiryClock = SystemClock(),
        indexes: DerivedIndexSet? = nil
    ) {
        self.layout = layout
        self.graph = graph
        self.clock = clock
        self.indexes = indexes ?? DerivedIndexSet(layout: layout)
        let schema = layout.schema
        fullSelection = Selection(
            fields: schema.fields, readsExtra: schema.allowsUndeclaredFields, extraNames: nil,
            version: layout.versionColumn)
        let automatic = layout.automaticFields
        writableFields = schema.fields.filter { !automatic.contains($0.name) }
        idKind = schema.id
        keepsExtra = schema.allowsUndeclaredFields
        hasPreset = layout.preset != nil
        writeColumns =
            ["\"id\""] + writableFields.map { "\"\($0.name)\"" }
            + (schema.allowsUndeclaredFields ? ["\"_extra\""] : [])
        let columns = writeColumns
        // Inserts and upserts also set the expiry (upserting without one clears it, as a fresh
        // write); updates and patches keep it.
        let inserted = columns + (schema.allowsExpiry ? [DocumentLayout.expiresColumn] : [])
        let insertMarks = repeatElement("?", count: inserted.count).joined(separator: ", ")
        multiRowInsertHead =
            "INSERT INTO \(layout.table)(\(inserted.joined(separator: ", "))) VALUES "
        insertSQL = multiRowInsertHead + "(\(insertMarks))"
        let touches = ["\"_version\" = \"_version\" + 1"] + layout.updateTouches
        let updates = inserted.dropFirst().map { "\($0) = excluded.\($0)" } + touches
        upsertClause = " ON CONFLICT(\"id\") DO UPDATE SET " + updates.joined(separator: ", ")
        upsertSQL = insertSQL + upsertClause
        let expires = DocumentLayout.expiresColumn
        currentRowSQL =
            "SELECT \(layout.rid), \"_version\", \(columns.dropFirst().map { "\($0), " }.joined())"
            + layout.changeLog.stateColumns(keyParameter: "?2")
            + " FROM \(layout.table) WHERE \"id\" = ?1"
            + (schema.allowsExpiry ? " AND (\(expires) IS NULL OR \(expires) > ?3)" : "")
    }

    // MARK: Opening

    /// Opens the collection `name` on the writer, creating it with `requested` when missing.
    ///
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` when it exists with another
    ///   schema (nothing changed); ``TroveError/collectionNotFound(_:)`` when missing and no
    ///   schema is given; ``TroveError/invalidName(_:reason:)`` when a table or index of that
    ///   name is already in the file.
    static func open(
        connection: Connection, name: String, requested: DocumentSchema?, graph: GraphStore,
        clock: any ExpiryClock = SystemClock()
    ) throws -> DocumentStore {
        try CollectionSchema.validate(name: name)
        try requested?.validate()
        let key = DocumentLayout.metaKeyPrefix + name
        let schema: DocumentSchema = try connection.transaction(
            connection.isReadOnly ? .deferred : .immediate
        ) {
            if let stored = try storedSchema(connection, key: key, name: name) {
                if let requested {
                    let differences = stored.differences(from: requested)
                    guard differences.isEmpty else {
                        throw TroveError.schemaMismatch(
                            collection: name, details: differences.joined(separator: "; "))
                    }
                }
                // Collections created before links existed get the trigger that deletes a
                // record's links with it.
                let layout = DocumentLayout(name: name, schema: stored)
                try EdgeTable.ensureCascade(connection, layout: layout)
                // Collections created before their full-text index merged in the background get
                // its settings once, when writable (rows in the FTS5 config; only speed depends on them).
                if stored.fullText != nil, !connection.isReadOnly,
                    try connection.scalar(
                        "SELECT 1 FROM \"\(layout.ftsName)_config\" WHERE k = 'hashsize'") == nil
                {
                    for statement in layout.ftsSettings {
                        try connection.execute(script: statement)
                    }
                }
                return stored
            }
            guard let requested else { throw TroveError.collectionNotFound(name) }
            try validateReferences(requested, name: name, on: connection)
            let layout = DocumentLayout(name: name, schema: requested)
            // Checked before creating anything (never by matching SQLite's message text).
            for object in layout.objectNames {
                if try connection.scalar(
                    "SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(object)])
                    != nil
                {
                    throw TroveError.invalidName(
                        name,
                        reason: "the file already has a table, index or trigger named \(object)")
                }
            }
            for statement in try layout.createStatements() {
                try connection.execute(script: statement)
            }
            if requested.fullText != nil {
                for statement in layout.ftsSettings { try connection.execute(script: statement) }
            }
            try connection.execute(
                "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?)",
                [.text(key), .text(try encode(requested))])
            return requested
        }
        return DocumentStore(
            layout: DocumentLayout(name: name, schema: schema), graph: graph, clock: clock)
    }

    static func storedSchema(_ connection: Connection, key: String, name: String) throws
        -> DocumentSchema?
    {
        guard
            let json = try connection.scalar(
                "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(key)])?
                .stringValue
        else { return nil }
        do {
            return try JSONDecoder().decode(DocumentSchema.self, from: Data(json.utf8))
        } catch {
            throw TroveError.schemaMismatch(
                collection: name, details: "stored schema is unreadable: \(error)")
        }
    }

    static func encode(_ schema: DocumentSchema) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(schema), as: UTF8.self)
    }

    // MARK: Filters

    /// The one place a filter becomes SQL over this collection's rows: every candidate-row query
    /// (fetch, page, scan, count, aggregate, delete, the legs of a search, explain) compiles
    /// through here, so a rule for which rows exist at all (expiry) belongs here too.
    ///
    /// Link filters traverse the graph now: on the in-memory adjacency (caught up on this
    /// connection's snapshot), or on the edge table inside a write transaction, whose
    /// uncommitted links the shared index must never see.
    func compileFilter(_ filter: Filter, on connection: Connection) throws -> SQLFragment {
        for fragment in filter.sqlFragments {
            try check(fragment.sql, bindings: fragment.bindings, on: connection)
        }
        let context = FilterContext(layout: layout) { [graph, name, schema] scope in
            let source: VectorSource = connection.isInWriteTransaction ? .table : .indexes
            return try graph.reachable(scope, source: source, on: connection).compactMap {
                reached in
                guard reached.node.collection == name else { return nil }
                switch (reached.node.id, schema.id) {
                case (.int(let v), .int64): return .integer(v)
                case (.text(let v), .uuid), (.text(let v), .string): return .text(v)
                default: return nil
                }
            }
        }
        return try FilterCompiler(resolver: resolver, context: context).compile(filter)
    }

    /// A SQL fragment of a filter (``Filter/sql(_:_:)``) on its own: it compiles over this
    /// table, only reads, and takes its bindings, so an error in a statement that embeds it can
    /// only come from elsewhere (never guessed from SQLite's message).
    ///
    /// - Throws: ``TroveError/invalidFilter(sql:reason:)``.
    func check(_ fragment: String, bindings: [SQLValue], on connection: Connection) throws {
        do {
            let statement = try connection.prepare(
                "SELECT 1 FROM \(layout.table) WHERE (\(fragment))")
            guard statement.isReadOnly else {
                throw TroveError.invalidFilter(sql: fragment, reason: "a filter must not write")
            }
            try statement.bind(bindings)
        } catch let error as SQLiteError {
            throw TroveError.invalidFilter(sql: fragment, reason: error.message)
        }
    }

    // MARK: Columns and rows

    /// The columns read for a document: the id, the version, the selected declared fields and,
    /// when undeclared fields are kept (and wanted), the JSON column.
    struct Selection {
        /// The column list, built once.
        let sql: String
        /// What the documents read through this selection share.
        let layout: StoredRow.Layout

        init(fields: [FieldDefinition], readsExtra: Bool, extraNames: Set<String>?, version: String)
        {
            layout = StoredRow.Layout(
                fields: fields, readsExtra: readsExtra, extraNames: extraNames)
            var columns = ["\"id\"", version]
            columns += fields.map { "\"\($0.name)\"" }
            if readsExtra { columns.append("\"_extra\"") }
            sql = columns.joined(separator: ", ")
        }

        /// The id, the version and the row's columns.
        var columnCount: Int { 2 + layout.kinds.count }
    }

    func selection(_ projection: [String]?) throws -> Selection {
        guard let projection else { return fullSelection }
        var fields: [FieldDefinition] = []
        var extras: Set<String> = []
        for name in projection where name != "id" {
            if let definition = schema.field(name) {
                fields.append(definition)
            } else if schema.allowsUndeclaredFields {
                try DocumentSchema.validate(fieldName: name)
                extras.insert(name)
            } else {
                throw TroveError.unknownField(
                    field: name, known: ["id"] + schema.fields.map(\.name))
            }
        }
        return Selection(
            fields: fields, readsExtra: !extras.isEmpty, extraNames: extras,
            version: layout.versionColumn)
    }

    /// The document the statement is on, reading `selection`'s columns from `first`: its row
    /// is kept and its fields decoded when read (`StoredRow`).
    func document(_ statement: Statement, _ selection: Selection, first: Int = 0) -> Document {
        let id =
            schema.id == .int64
            ? DocumentID.int(statement.int64(at: first))
            : DocumentID.read(statement.value(at: first), kind: schema.id)
                ?? .int(statement.int64(at: first))
        return Document(
            id: id, row: StoredRow(statement, first: first + 2, layout: selection.layout),
            version: statement.int64(at: first + 1))
    }

    /// The stored values of a document for the columns `id, <declared fields>, [_extra]`.
    ///
    /// Missing fields take their default; a missing required field without one, a null in a
    /// required field, a wrong type or an undeclared field (when not kept) throws, naming it.
    func storedValues(_ document: Document) throws -> [SQLValue] {
        guard document.id.kind == idKind else {
            throw TroveError.typeMismatch(
                field: "id", expected: "\(idKind) id", value: document.id.description)
        }
        if case .string(let s) = document.id, s.isEmpty {
            throw TroveError.invalidValue(field: "id", reason: "a string id cannot be empty")
        }
        let fields = document.fields  // once: a fetched document decodes them on each read
        var values: [SQLValue] = []
        values.reserveCapacity(writableFields.count + 2)
        values.append(document.id.sqlValue)
        var declaredPresent = 0
        for field in writableFields {
            if let value = fields[field.name] {
                values.append(try FieldCodec.bind(value, for: field))
                declaredPresent += 1
            } else if let value = field.defaultValue {
                values.append(try FieldCodec.bind(value, for: field))
            } else if field.isOptional {
                values.append(.null)
            } else {
                throw TroveError.missingField(field: field.name)
            }
        }
        if hasPreset {
            // Fields Trove sets are read back with every document; writing one back is no error.
            declaredPresent += layout.automaticFields.count { fields[$0] != nil }
            try layout.checkPreset(metadata: fields["metadata"])
        }
        if keepsExtra, declaredPresent < fields.count {
            var extra: [String: Value] = [:]
            for (key, value) in fields where schema.field(key) == nil {
                try DocumentSchema.validate(fieldName: key)
                extra[key] = value
            }
            values.append(
                extra.isEmpty
                    ? .null : .text(try JSONCoding.text(.object(extra), field: "document")))
        } else if keepsExtra {
            values.append(.null)
        } else if declaredPresent < fields.count {
            let unknown = fields.keys.filter { schema.field($0) == nil }.sorted()
            throw TroveError.unknownField(
                field: unknown.first ?? "?", known: ["id"] + schema.fields.map(\.name))
        }
        return values
    }

}
