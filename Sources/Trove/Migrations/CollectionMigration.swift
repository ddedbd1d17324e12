import Foundation
import TroveSQLite

/// Carries one document collection from its layout to a new one, inside the migration's open
/// transaction: checks the data first (typed errors before any change), changes the table (an
/// `ALTER TABLE` where SQLite can, else a rebuild), brings indexes, triggers and the full-text
/// table in line with the new layout, stores the new schema and makes every connection's
/// in-memory indexes reload.
struct CollectionMigration {
    let connection: Connection
    /// What every store of the database shares: the link graph and the expiry clock.
    let graph: GraphStore
    let clock: any ExpiryClock

    /// Applies `edit` to the collection `store` describes. - Returns: the store for the new layout.
    func apply(_ edit: SchemaEdit, to store: DocumentStore) throws -> DocumentStore {
        let old = store.layout
        let new = DocumentLayout(name: old.name, schema: edit.schema)
        var change = edit.table
        try DocumentStore.validateReferences(new.schema, name: new.name, on: connection)
        try check(change, from: old, to: new)
        if case .addColumn(let field) = change, old.schema.allowsUndeclaredFields,
            try connection.scalar(
                "SELECT 1 FROM \(old.table) WHERE json_type(\"_extra\", ?) IS NOT NULL LIMIT 1",
                [.text("$.\(field.name)")]) != nil
        {
            change = .rebuild(
                old.schema.copyingAll(new.schema, except: field.name, with: .fromExtra))
        }
        // Values rewritten without triggers: an external-content FTS5 table over them is stale.
        var rewritesText = false
        if case .rebuild(let sources) = change, let fullText = new.schema.fullText {
            rewritesText = fullText.fields.contains {
                if case .copy = sources[$0] { false } else { true }
            }
        }
        try sync(from: old, to: new, refill: rewritesText) {
            switch change {
            case .none:
                break
            case .addColumn(let field):
                try connection.execute(
                    script: "ALTER TABLE \(old.table) ADD COLUMN \(try new.columnDefinition(field))"
                )
            case .renameColumn(let from, let to):
                try connection.execute(
                    script: "ALTER TABLE \(old.table) RENAME COLUMN \"\(from)\" TO \"\(to)\"")
            case .dropColumn(let name, let sources):
                do {
                    try connection.savepoint {
                        try connection.execute(
                            script: "ALTER TABLE \(old.table) DROP COLUMN \"\(name)\"")
                    }
                } catch let error as SQLiteError where error.code == .error {
                    // A column SQLite will not drop (one a foreign key or a table constraint
                    // names): the rebuild does the same job.
                    try TableRebuild(connection: connection, old: old, new: new, sources: sources)
                        .run()
                }
            case .rebuild(let sources):
                try TableRebuild(connection: connection, old: old, new: new, sources: sources).run()
            }
        }
        try record(new)
        return DocumentStore(layout: new, graph: graph, clock: clock)
    }

    /// Creates a collection (as `database.documents(_:schema:)` would).
    func create(_ name: String, schema: DocumentSchema) throws -> DocumentStore {
        try DocumentStore.open(
            connection: connection, name: name, requested: schema, graph: graph, clock: clock)
    }

    // MARK: Checks before any change

    /// Typed errors for data the new layout cannot hold, found before the table changes.
    private func check(_ change: TableChange, from old: DocumentLayout, to new: DocumentLayout)
        throws
    {
        let rows = {
            Int(try connection.scalar("SELECT count(*) FROM \(old.table)")?.int64Value ?? 0)
        }
        if case .rebuild(let sources) = change {
            for field in new.schema.fields {
                switch sources[field.name] {
                case .fill where !field.isOptional && field.defaultValue == nil:
                    let count = try rows()
                    if count > 0 {
                        throw MigrationError.requiredFieldWithoutDefault(
                            collection: old.name, field: field.name, rows: count)
                    }
                case .fill where field.isUnique && field.defaultValue.map({ !$0.isNull }) == true:
                    let count = try rows()
                    if count > 1 {
                        throw MigrationError.duplicateValues(
                            collection: old.name, keys: [field.name],
                            value: "\(field.defaultValue!) (the default)")
                    }
                case .convert(let previous, nil) where !field.isOptional && previous.isOptional:
                    let nulls =
                        try connection.scalar(
                            "SELECT count(*) FROM \(old.table) WHERE \"\(field.name)\" IS NULL")?
                        .int64Value ?? 0
                    if nulls > 0 {
                        throw MigrationError.nullValues(
                            collection: old.name, field: field.name, rows: Int(nulls))
                    }
                default:
                    break
                }
            }
        }
        // Unique indexes and unique fields the old table did not have: duplicates among the
        // values being copied (converted values are checked as they are written).
        var uniqueKeys = new.schema.indexes.filter(\.isUnique).map(\.keys)
        uniqueKeys += new.schema.fields.filter(\.isUnique).map { [Field($0.name)] }
        let before = Set(
            old.schema.indexes.filter(\.isUnique).map(\.keys)
                + old.schema.fields.filter(\.isUnique).map { [Field($0.name)] })
        for keys in uniqueKeys where !before.contains(keys) {
            if case .rebuild(let sources) = change,
                keys.contains(where: {
                    if case .copy = sources[$0.name] { return false } else { return true }
                })
            {
                continue
            }
            // Read the old table: renamed columns are not renamed yet, so resolve against it
            // when the key exists there, else skip (a new column holds only its default).
            guard
                let expressions = try? keys.map({
                    try FieldResolver(schema: old.schema).column($0).sql
                })
            else {
                continue
            }
            let list = expressions.joined(separator: ", ")
            let notNull = expressions.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
            let sql =
                "SELECT \(expressions.map { "quote(\($0))" }.joined(separator: " || ', ' || ")) FROM \(old.table) WHERE \(notNull) GROUP BY \(list) HAVING count(*) > 1 LIMIT 1"
            if let duplicate = try connection.scalar(sql)?.stringValue {
                throw MigrationError.duplicateValues(
                    collection: old.name, keys: keys.map(\.description), value: duplicate)
            }
        }
    }

    // MARK: Derived objects

    /// Drops the indexes, triggers and virtual tables whose SQL the new layout does not have,
    /// runs `changeTable`, then creates what is missing and fills new virtual tables (FTS5) from
    /// the rows (all of them when `refill`: the table change rewrote their text). Compared with the file itself (`sqlite_master`), so objects written by older
    /// versions are replaced too.
    private func sync(
        from old: DocumentLayout, to new: DocumentLayout, refill: Bool,
        changeTable: () throws -> Void
    )
        throws
    {
        let wanted = try new.derivedObjects()
        let wantedSQL = Dictionary(
            wanted.map { ($0.name, $0.sql) }, uniquingKeysWith: { a, _ in a })
        let virtualNames = Set(
            try old.derivedObjects().filter { $0.kind == .virtualTable }.map(\.name)
                + wanted.filter { $0.kind == .virtualTable }.map(\.name))
        for object in try existingObjects(of: old, virtualNames: virtualNames)
        where wantedSQL[object.name] != object.sql {
            try connection.execute(script: object.dropStatement)
        }
        try changeTable()
        let present = Set(try existingObjects(of: new, virtualNames: virtualNames).map(\.name))
        var createdVirtualTable = false
        for object in wanted where !present.contains(object.name) {
            try connection.execute(script: object.sql)
            if object.kind == .virtualTable { createdVirtualTable = true }
        }
        if createdVirtualTable || refill {
            // B-tree indexes fill themselves on CREATE; virtual tables (FTS5) are filled here.
            for index in DerivedIndexSet(layout: new).indexes where !(index is BTreeIndexes) {
                try index.rebuildInSQLite(connection, layout: new)
            }
        }
    }

    private func existingObjects(of layout: DocumentLayout, virtualNames: Set<String>) throws
        -> [DerivedObject]
    {
        let rows = try connection.query(
            """
            SELECT type, name, sql FROM sqlite_master
            WHERE sql IS NOT NULL AND ((type IN ('index', 'trigger') AND tbl_name = ?)
                OR (type = 'table' AND name IN (SELECT value FROM json_each(?)) AND sql LIKE 'CREATE VIRTUAL TABLE%'))
            """,
            [
                .text(layout.name),
                .text(
                    String(decoding: try JSONEncoder().encode(virtualNames.sorted()), as: UTF8.self)
                ),
            ])
        return rows.compactMap { row in
            guard let type = row.string(at: 0), let name = row.string(at: 1),
                let sql = row.string(at: 2)
            else {
                return nil
            }
            let kind: DerivedObject.Kind =
                type == "index" ? .index : type == "trigger" ? .trigger : .virtualTable
            return DerivedObject(kind: kind, name: name, sql: sql)
        }
    }

    // MARK: After the change

    /// Stores the new schema and raises the change-log floor past a marker entry, so every
    /// connection (of this process or another) rebuilds its in-memory indexes on its next query.
    private func record(_ layout: DocumentLayout) throws {
        try connection.execute(
            "UPDATE \(CollectionSchema.metaTable) SET value = ? WHERE key = ?",
            [.text(try DocumentStore.encode(layout.schema)), .text(layout.metaKey)])
        try layout.changeLog.raiseFloorPastNewest(connection, rowColumn: "rid")
    }
}

/// An index, trigger or virtual table of a collection, other than its table and change log.
struct DerivedObject: Equatable {
    /// `shared`: a table other collections use too (the edge table), created if missing, never dropped.
    enum Kind { case index, trigger, virtualTable, shared }
    let kind: Kind
    let name: String
    let sql: String

    var dropStatement: String {
        switch kind {
        case .index: "DROP INDEX IF EXISTS \"\(name)\""
        case .trigger: "DROP TRIGGER IF EXISTS \"\(name)\""
        case .virtualTable: "DROP TABLE IF EXISTS \"\(name)\""
        case .shared: preconditionFailure("shared tables are never dropped by a migration")
        }
    }
}

extension DocumentLayout {
    /// The derived objects of this layout, from its `createStatements()` (every statement but the
    /// table and the change log's table), so whatever the layout creates is migrated too.
    func derivedObjects() throws -> [DerivedObject] {
        try createStatements().compactMap { sql in
            if sql.hasPrefix("CREATE TABLE \(table) ") || sql.hasPrefix("CREATE TABLE \(log) ") {
                return nil
            }
            let kind: DerivedObject.Kind
            if sql.hasPrefix("CREATE TABLE IF NOT EXISTS") {
                kind = .shared
            } else if sql.hasPrefix("CREATE INDEX") || sql.hasPrefix("CREATE UNIQUE INDEX") {
                kind = .index
            } else if sql.hasPrefix("CREATE TRIGGER") {
                kind = .trigger
            } else if sql.hasPrefix("CREATE VIRTUAL TABLE") {
                kind = .virtualTable
            } else {
                preconditionFailure(
                    "DocumentLayout made a statement migrations do not know: \(sql.prefix(40))")
            }
            // The layout quotes every name it creates; the first quoted identifier is the object's.
            let parts = sql.split(separator: "\"", maxSplits: 2, omittingEmptySubsequences: false)
            precondition(parts.count == 3, "unquoted object name in \(sql.prefix(40))")
            return DerivedObject(kind: kind, name: String(parts[1]), sql: sql)
        }
    }
}
