import Foundation
import TroveSQLite

/// Document collections in a dump: the schema, then every visible document's stored columns
/// (`id`, `_version`, the declared fields, `_extra`, `_expires`), in id order. Internal row ids
/// of text-id collections are not dumped (they never leave the file).
enum DocumentCollectionDump: DumpSectionKind {
    static let kind = "documents"

    static func columns(of schema: DocumentSchema) -> [String] {
        ["id", "_version"] + schema.fields.map(\.name)
            + (schema.allowsUndeclaredFields ? ["_extra"] : [])
            + (schema.allowsExpiry ? ["_expires"] : [])
    }

    static func sections(in source: DumpSource) throws -> [DumpSection] {
        let names = try source.connection.query(
            "SELECT substr(key, ?) FROM \(CollectionSchema.metaTable) WHERE key LIKE 'documents.%' ORDER BY key",
            [.integer(Int64(DocumentLayout.metaKeyPrefix.count + 1))]
        ).compactMap { $0.string(at: 0) }
        return try names.map { name in
            let store = try source.documentStore(name)
            let columns = columns(of: store.schema)
            // One reading of the clock for the count and the rows, so they agree.
            let visible = store.visibility()
            let condition = visible.map { " WHERE \($0.sql)" } ?? ""
            let bindings = visible?.bindings ?? []
            let count =
                try source.connection.scalar(
                    "SELECT count(*) FROM \(store.layout.table)\(condition)", bindings)?.int64Value
                ?? 0
            let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            return DumpSection(
                header: DumpSectionHeader(
                    kind: kind, name: name, columns: columns, records: Int(count),
                    schema: store.schema),
                select: "SELECT \(list) FROM \(store.layout.table)\(condition) ORDER BY \"id\"",
                bindings: bindings)
        }
    }

    static func create(_ header: DumpSectionHeader, renames: DumpRenames, on connection: Connection)
        throws
        -> DumpLoadTarget
    {
        guard let stored = header.schema else {
            throw DumpError.section(header.name, "a documents section needs a schema")
        }
        guard header.columns == columns(of: stored) else {
            throw DumpError.section(header.name, "its columns do not match its schema")
        }
        let fieldNames = renames.fields[header.name] ?? [:]
        for old in fieldNames.keys where stored.field(old) == nil {
            throw TroveError.unknownField(field: old, known: stored.fields.map(\.name))
        }
        let schema = renamed(stored, fieldNames)
        let name = renames.collections[header.name] ?? header.name
        let store = try DocumentStore.open(
            connection: connection, name: name, requested: schema, graph: GraphStore())
        let columns = header.columns.map { fieldNames[$0] ?? $0 }
        let marks = repeatElement("?", count: columns.count).joined(separator: ", ")
        return DumpLoadTarget(
            name: name,
            insert:
                "INSERT INTO \(store.layout.table)(\(columns.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(marks))",
            columnCount: columns.count,
            fullText: schema.fullText == nil ? nil : (store.layout.fts, "\(name)_fts_ai"))
    }

    /// The schema with fields renamed everywhere they are named (fields, index keys, full-text
    /// fields, vector index settings).
    static func renamed(_ schema: DocumentSchema, _ names: [String: String]) -> DocumentSchema {
        guard !names.isEmpty else { return schema }
        func rename(_ name: String) -> String { names[name] ?? name }
        var out = schema
        out.fields = schema.fields.map { field in
            var field = field
            field.name = rename(field.name)
            return field
        }
        out.indexes = schema.indexes.map { index in
            IndexDefinition(
                index.keys.map { Field(rename($0.name), path: $0.path) }, unique: index.isUnique)
        }
        out.fullText?.fields = schema.fullText?.fields.map(rename) ?? []
        out.vectorIndexes = Dictionary(
            uniqueKeysWithValues: schema.vectorIndexes.map { (rename($0.key), $0.value) })
        return out
    }
}

/// Search collections (`Collection`: id, content, source, metadata, embedding, timestamps) in a
/// dump: the configuration (with its embedding manifest), then every row in id order.
enum SearchCollectionDump: DumpSectionKind {
    static let kind = "search"
    static let columns = [
        "id", "content", "source", "metadata", "embedding", "created_at", "updated_at", "_version",
    ]
    /// The columns of dumps made before format 3 (their rows load with version 1).
    static let formatTwoColumns = Array(columns.dropLast())

    static func sections(in source: DumpSource) throws -> [DumpSection] {
        let rows = try source.connection.query(
            "SELECT substr(key, 12), value FROM \(CollectionSchema.metaTable) WHERE key LIKE 'collection.%' ORDER BY key"
        )
        return try rows.map { row in
            let name = row.string(at: 0) ?? ""
            let configuration: CollectionConfiguration
            do {
                configuration = try JSONDecoder().decode(
                    CollectionConfiguration.self, from: Data((row.string(at: 1) ?? "").utf8))
            } catch {
                throw TroveError.schemaMismatch(
                    collection: name, details: "stored configuration is unreadable: \(error)")
            }
            let schema = CollectionSchema(name: name, configuration: configuration)
            let count =
                try source.connection.scalar("SELECT count(*) FROM \(schema.table)")?.int64Value
                ?? 0
            return DumpSection(
                header: DumpSectionHeader(
                    kind: kind, name: name, columns: columns, records: Int(count),
                    configuration: configuration),
                // A read-only source of format 2 has no versions yet: every row is at 1.
                select: "SELECT \(formatTwoColumns.joined(separator: ", ")), "
                    + (try CollectionSchema.hasVersionColumn(name, on: source.connection)
                        ? "_version" : "1")
                    + " FROM \(schema.table) ORDER BY id")
        }
    }

    static func create(_ header: DumpSectionHeader, renames: DumpRenames, on connection: Connection)
        throws
        -> DumpLoadTarget
    {
        guard let configuration = header.configuration else {
            throw DumpError.section(header.name, "a search section needs a configuration")
        }
        guard header.columns == columns || header.columns == formatTwoColumns else {
            throw DumpError.section(header.name, "its columns are not a search collection's")
        }
        if let fields = renames.fields[header.name], !fields.isEmpty {
            throw TroveError.invalidConfiguration(
                "search collection \(header.name) has fixed fields; only the collection can be renamed"
            )
        }
        let name = renames.collections[header.name] ?? header.name
        _ = try SearchCollectionTable.open(
            connection: connection, name: name, requested: configuration, graph: GraphStore())
        let schema = CollectionSchema(name: name, configuration: configuration)
        let marks = repeatElement("?", count: header.columns.count).joined(separator: ", ")
        return DumpLoadTarget(
            name: name,
            insert:
                "INSERT INTO \(schema.table)(\(header.columns.joined(separator: ", "))) VALUES (\(marks))",
            columnCount: header.columns.count,
            fullText: configuration.lexicalSearch ? (schema.fts, "\(name)_fts_ai") : nil)
    }
}

/// Plain tables Trove and its tools keep beside the collections (`trove_*` and `_trove_*`, other
/// than `trove_meta`; the CLI's `trove_files`): the `CREATE TABLE` statement, then every row,
/// ordered by all columns. Sync's bookkeeping (`_trove_sync_*`: the device id, clocks, outbox)
/// belongs to one device, so it is not dumped: a loaded dump is a new device.
enum SideTableDump: DumpSectionKind {
    static let kind = "table"

    static func isSideTable(_ name: String) -> Bool {
        let lower = name.lowercased()
        // The edge table's change log is derived (it feeds the adjacency index) and rebuilt by
        // loading the edges, so it is not dumped.
        return (lower.hasPrefix("trove_") || lower.hasPrefix("_trove_"))
            && lower != CollectionSchema.metaTable
            && lower != EdgeTable.name + "_log" && !lower.hasPrefix(syncPrefix)
    }

    /// The prefix of TroveSync's tables.
    static let syncPrefix = "_trove_sync_"

    static func sections(in source: DumpSource) throws -> [DumpSection] {
        let tables = try source.connection.query(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
        return try tables.compactMap { row -> DumpSection? in
            guard let name = row.string(at: 0), isSideTable(name), let sql = row.string(at: 1)
            else { return nil }
            let quoted = "\"\(name.replacingOccurrences(of: "\"", with: "\"\""))\""
            let columns = try source.connection.query(
                "SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(name)]
            )
            .compactMap { $0.string(at: 0) }
            let list = columns.map { "\"\($0)\"" }.joined(separator: ", ")
            let count =
                try source.connection.scalar("SELECT count(*) FROM \(quoted)")?.int64Value ?? 0
            // The edge table exists as soon as a document collection does; without links it is
            // left out, so a database without links dumps the same whichever version made it.
            if name == EdgeTable.name, count == 0 { return nil }
            return DumpSection(
                header: DumpSectionHeader(
                    kind: kind, name: name, columns: columns, records: Int(count), definition: sql),
                select: "SELECT \(list) FROM \(quoted) ORDER BY \(list)")
        }
    }

    static func create(_ header: DumpSectionHeader, renames: DumpRenames, on connection: Connection)
        throws
        -> DumpLoadTarget
    {
        guard isSideTable(header.name), renames.collections[header.name] == nil,
            renames.fields[header.name] == nil
        else {
            throw DumpError.section(
                header.name,
                "only trove_ and _trove_ tables are loaded as side tables, under their own name")
        }
        guard let definition = header.definition, definition.uppercased().hasPrefix("CREATE TABLE")
        else {
            throw DumpError.section(header.name, "a side table needs its CREATE TABLE statement")
        }
        if header.name == EdgeTable.name {
            // Trove's own edge table (possibly created already by a documents section, with its
            // log and triggers): made by this version's statements, not the dumped text.
            for statement in EdgeTable.createStatements {
                try connection.execute(script: statement)
            }
        } else {
            // One statement only (prepare refuses a second), and it must create the named table.
            try connection.prepare(definition).execute()
        }
        let created = try connection.query(
            "SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(header.name)]
        )
        .compactMap { $0.string(at: 0) }
        guard created == header.columns else {
            throw DumpError.section(
                header.name, "its CREATE TABLE statement does not make its columns")
        }
        let quoted = "\"\(header.name.replacingOccurrences(of: "\"", with: "\"\""))\""
        let marks = repeatElement("?", count: created.count).joined(separator: ", ")
        return DumpLoadTarget(
            name: header.name,
            insert:
                "INSERT INTO \(quoted)(\(created.map { "\"\($0)\"" }.joined(separator: ", "))) VALUES (\(marks))",
            columnCount: created.count, fullText: nil)
    }
}

/// A problem in one section of a dump, turned into ``TroveError/invalidDump(line:reason:)`` with
/// the header's line number by the loader.
enum DumpError: Error {
    case section(String, String)
}
