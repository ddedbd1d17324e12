import Foundation
import TroveSQLite

/// A reference field of some collection that points at a given collection (an incoming edge).
struct IncomingReference {
    /// The referencing collection.
    let collection: String
    let schema: DocumentSchema
    let field: FieldDefinition
    var reference: Reference { field.reference! }
    /// `collection.field`, as errors name it.
    var label: String { "\(collection).\(field.name)" }
}

extension DocumentStore {
    // MARK: Schema checks against the file

    /// Checks a new collection's references against the file: each target exists (or is the
    /// collection itself) and has the id kind the field holds. Targets must exist first: SQLite
    /// would accept a foreign key to a missing table and fail only on the first write.
    ///
    /// - Throws: ``TroveError/referenceTargetNotFound(field:collection:)``,
    ///   ``TroveError/invalidConfiguration(_:)`` for an id-kind mismatch.
    static func validateReferences(
        _ schema: DocumentSchema, name: String, on connection: Connection
    ) throws {
        for field in schema.referenceFields {
            let reference = field.reference!
            let targetKind: IDKind
            if reference.collection == name {
                targetKind = schema.id
            } else {
                let key = DocumentLayout.metaKeyPrefix + reference.collection
                guard
                    let target = try storedSchema(connection, key: key, name: reference.collection)
                else {
                    throw TroveError.referenceTargetNotFound(
                        field: field.name, collection: reference.collection)
                }
                targetKind = target.id
            }
            guard targetKind == reference.idKind else {
                throw TroveError.invalidConfiguration(
                    "reference field \(field.name) holds \(reference.idKind) ids, but \(reference.collection) has \(targetKind) ids"
                )
            }
        }
    }

    /// Every reference field in the file that points at `target` (its own included).
    static func incomingReferences(to target: String, on connection: Connection) throws
        -> [IncomingReference]
    {
        let rows = try connection.query(
            "SELECT substr(key, ?) FROM \(CollectionSchema.metaTable) WHERE key LIKE 'documents.%' ORDER BY key",
            [.integer(Int64(DocumentLayout.metaKeyPrefix.count + 1))])
        var out: [IncomingReference] = []
        for name in rows.compactMap({ $0.string(at: 0) }) {
            guard
                let schema = try storedSchema(
                    connection, key: DocumentLayout.metaKeyPrefix + name, name: name)
            else {
                continue
            }
            for field in schema.referenceFields where field.reference!.collection == target {
                out.append(IncomingReference(collection: name, schema: schema, field: field))
            }
        }
        return out
    }

    /// Refuses to drop a collection other collections reference (SQLite's implicit
    /// `DELETE FROM` of a dropped parent would cascade into them, or fail).
    static func refuseDropIfReferenced(_ name: String, on connection: Connection) throws {
        let others = try incomingReferences(to: name, on: connection).filter {
            $0.collection != name
        }
        guard others.isEmpty else {
            throw TroveError.collectionReferenced(collection: name, by: others.map(\.label))
        }
    }

    // MARK: Naming foreign-key failures (by looking at the tables, never at SQLite's message)

    /// After a write failed with `SQLITE_CONSTRAINT_FOREIGNKEY`: the reference field whose value
    /// names no document. The failed statement was rolled back, so the tables are as before it.
    func missingReference(_ values: [String: SQLValue], on connection: Connection) throws
        -> TroveError?
    {
        for field in schema.referenceFields {
            guard let value = values[field.name], !value.isNull else { continue }
            let target = field.reference!.collection
            if try connection.scalar("SELECT 1 FROM \"\(target)\" WHERE \"id\" = ?", [value]) == nil
            {
                return .missingReference(
                    field: field.name, value: Self.display(value), collection: target)
            }
        }
        return nil
    }

    /// The stored values of a write's row (`values` in ``writeColumns`` order) by field name.
    func referenceValues(_ values: [SQLValue]) -> [String: SQLValue] {
        var out: [String: SQLValue] = [:]
        for (offset, field) in schema.fields.enumerated()
        where field.reference != nil && offset + 1 < values.count {
            out[field.name] = values[offset + 1]
        }
        return out
    }

    /// After deleting some of `ids` failed with `SQLITE_CONSTRAINT_FOREIGNKEY`: the `.deny`
    /// reference that blocks it, found by following cascades from each id as SQLite does (a
    /// cascade that reaches a denied document fails the whole delete). Documents of this
    /// collection that the same statement deletes do not block (`NO ACTION` is checked at its end).
    func deleteDenial(of ids: [DocumentID], on connection: Connection) throws -> TroveError? {
        let deleting = Set(ids)
        var incoming: [String: [IncomingReference]] = [:]
        var visited: Set<String> = []
        func search(_ collection: String, _ id: DocumentID) throws -> TroveError? {
            guard visited.insert("\(collection)/\(id)").inserted else { return nil }
            if incoming[collection] == nil {
                incoming[collection] = try Self.incomingReferences(to: collection, on: connection)
            }
            for edge in incoming[collection]! {
                let sql =
                    "SELECT \"id\" FROM \"\(edge.collection)\" WHERE \"\(edge.field.name)\" = ?"
                switch edge.reference.onDelete {
                case .deny:
                    let referencing = try connection.query(sql, [id.sqlValue]).compactMap {
                        DocumentID.read($0[0], kind: edge.schema.id)
                    }
                    if referencing.contains(where: {
                        edge.collection != name || !deleting.contains($0)
                    }) {
                        return .deleteDenied(
                            collection: collection, id: id, referencedBy: edge.label)
                    }
                case .cascade:
                    for row in try connection.query(sql, [id.sqlValue]) {
                        guard let child = DocumentID.read(row[0], kind: edge.schema.id) else {
                            continue
                        }
                        if let denial = try search(edge.collection, child) { return denial }
                    }
                case .nullify:
                    continue
                }
            }
            return nil
        }
        for id in ids {
            if let denial = try search(name, id) { return denial }
        }
        return nil
    }

    /// A stored id as a person reads it (no SQL quoting).
    static func display(_ value: SQLValue) -> String {
        switch value {
        case .text(let v): v
        default: value.description
        }
    }

    // MARK: Fetching related documents in one statement

    /// Documents by id in one statement, in the order asked (each once), skipping missing ids.
    func fetch(ids: [DocumentID], on connection: Connection) throws -> [Document] {
        for id in ids where id.kind != schema.id {
            throw TroveError.typeMismatch(
                field: "id", expected: "\(schema.id) id", value: id.description)
        }
        guard !ids.isEmpty else { return [] }
        let selection = fullSelection
        let statement = try connection.cachedStatement(
            "SELECT \(selection.sql) FROM \(layout.table) WHERE \"id\" IN (SELECT value FROM json_each(?))"
        )
        var byID: [DocumentID: Document] = [:]
        try statement.forEachRow([.text(try Self.jsonArray(ids))]) { row in
            let document = document(row, selection)
            byID[document.id] = document
        }
        var seen: Set<DocumentID> = []
        return ids.compactMap { id in seen.insert(id).inserted ? byID[id] : nil }
    }

    /// The documents whose reference field `field` holds one of `parents`, grouped by parent
    /// (every parent asked is a key, with an empty list when nothing references it), in one
    /// statement. `query` adds a filter, an order within each group, a projection and a limit
    /// per parent (a window function, `row_number() OVER (PARTITION BY field ...)`).
    func children(
        of parents: [DocumentID], via fieldName: String, _ query: Query, on connection: Connection
    ) throws
        -> [DocumentID: [Document]]
    {
        guard let field = schema.field(fieldName), let reference = field.reference else {
            throw TroveError.invalidQuery("\(fieldName) is not a reference field of \(name)")
        }
        for id in parents where id.kind != reference.idKind {
            throw TroveError.typeMismatch(
                field: fieldName, expected: "\(reference.idKind) id", value: id.description)
        }
        guard !query.isRanked, query.cursor == nil, query.offset == 0 else {
            throw TroveError.invalidQuery(
                "children(of:via:) takes a filter, an order, a projection and a limit per parent")
        }
        if let limit = query.limit, limit < 0 {
            throw TroveError.invalidQuery("limit must be >= 0, got \(limit)")
        }
        var groups: [DocumentID: [Document]] = [:]
        for id in parents { groups[id] = [] }
        guard !parents.isEmpty else { return groups }

        let selection = try selection(query.projection)
        let order = try sortKeys(query.order)
            .map {
                "\($0.sql) \($0.descending ? "DESC" : "ASC") NULLS \($0.nullsFirst ? "FIRST" : "LAST")"
            }
            .joined(separator: ", ")
        let column = "\"\(fieldName)\""
        var sql = SQLFragment(sql: "SELECT \(selection.sql), \(column) AS \"_parent\"")
        if query.limit != nil {
            sql.append(", row_number() OVER (PARTITION BY \(column) ORDER BY \(order)) AS \"_n\"")
        }
        sql.append(" FROM \(layout.table) WHERE \(column) IN (SELECT value FROM json_each(")
        sql.bind(.text(try Self.jsonArray(parents)))
        sql.append(")) AND ")
        sql.append(try FilterCompiler(resolver: resolver).compile(query.filter))
        if let limit = query.limit {
            // row_number() follows the requested order, so ordering the outer query by it keeps
            // each group in that order without naming the sort columns twice.
            sql = SQLFragment(
                sql: "SELECT * FROM (\(sql.sql)) WHERE \"_n\" <= ? ORDER BY \"_n\"",
                bindings: sql.bindings)
            sql.bindings.append(.integer(Int64(limit)))
        } else {
            sql.append(" ORDER BY \(order)")
        }
        let parentColumn = selection.columnCount
        try connection.cachedStatement(sql.sql).forEachRow(sql.bindings) { row in
            guard let parent = DocumentID.read(row.value(at: parentColumn), kind: reference.idKind)
            else { return }
            groups[parent, default: []].append(document(row, selection))
        }
        return groups
    }

    /// An unranked query's documents and, in the same read, the related documents of each
    /// prefetch: one statement per prefetch, however many documents.
    func fetch(
        _ query: Query, prefetching prefetches: [Prefetch],
        lookup: (String) throws -> DocumentStore,
        on connection: Connection
    ) throws -> PrefetchedDocuments {
        let documents = try fetch(query, on: connection, wantsCursor: false).documents
        var result = PrefetchedDocuments(documents: documents)
        for prefetch in prefetches {
            switch prefetch {
            case .referenced(let fieldName):
                guard let reference = schema.field(fieldName)?.reference else {
                    throw TroveError.invalidQuery(
                        "\(fieldName) is not a reference field of \(name)")
                }
                if let projection = query.projection, !projection.contains(fieldName) {
                    throw TroveError.invalidQuery(
                        "prefetching \(fieldName) needs it in the projection")
                }
                let target = reference.collection == name ? self : try lookup(reference.collection)
                let ids = documents.compactMap {
                    $0[fieldName].flatMap { DocumentID(reference: $0, kind: reference.idKind) }
                }
                let found = try target.fetch(ids: ids, on: connection)
                result.referenced[fieldName] = .init(
                    kind: reference.idKind,
                    byID: Dictionary(found.map { ($0.id, $0) }) { a, _ in a })
            case .children(let collection, let fieldName):
                let children = collection == name ? self : try lookup(collection)
                guard children.schema.field(fieldName)?.reference?.collection == name else {
                    throw TroveError.invalidQuery(
                        "\(collection).\(fieldName) is not a reference to \(name)")
                }
                result.childGroups[prefetch] = try children.children(
                    of: documents.map(\.id), via: fieldName, Query(), on: connection)
            }
        }
        return result
    }

    /// Ids as a JSON array for `json_each` (numbers, or strings: UUIDs lowercase, as stored).
    static func jsonArray(_ ids: [DocumentID]) throws -> String {
        try JSONCoding.text(.array(ids.map(\.value)), field: "id")
    }
}

extension DocumentID {
    /// The id a reference field's value names, for a target with ids of `kind`.
    init?(reference value: Value, kind: IDKind) {
        switch (kind, value) {
        case (.int64, .int(let v)): self = .int(v)
        case (.uuid, .string(let v)):
            guard let uuid = UUID(uuidString: v) else { return nil }
            self = .uuid(uuid)
        case (.string, .string(let v)): self = .string(v)
        default: return nil
        }
    }
}

/// The collection's references as SQLite foreign keys: enforced by SQLite on every write of a
/// connection with `PRAGMA foreign_keys = ON` (every connection Trove writes with), so there is
/// nothing to catch up. `verify` finds rows written without enforcement (another tool, a
/// connection with foreign keys off) with `PRAGMA foreign_key_check`. Repair never changes rows:
/// deleting or re-pointing a dangling reference is the app's decision.
final class ReferenceConstraints: DerivedIndex {
    let fields: [FieldDefinition]
    init(fields: [FieldDefinition]) { self.fields = fields }

    var name: String {
        "references(\(fields.map { "\($0.name) -> \($0.reference!.collection)" }.joined(separator: ", ")))"
    }
    var columns: [String] { [] }
    var isLoaded: Bool { true }
    func reset() {}
    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {}
    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}

    /// The most dangling references listed one by one; the rest are counted.
    static let reportLimit = 100

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        // fkid -> the referencing column, from SQLite's own list of the table's foreign keys.
        var columnOf: [Int64: String] = [:]
        // Rows: id, seq, table, from, to, on_update, on_delete, match.
        for row in try connection.query("PRAGMA foreign_key_list(\(layout.table))") {
            if let id = row.int64(at: 0), let column = row.string(at: 3) { columnOf[id] = column }
        }
        // Rows: table, rowid, parent, fkid.
        let dangling = try connection.query("PRAGMA foreign_key_check(\(layout.table))")
        var problems: [String] = []
        for row in dangling.prefix(Self.reportLimit) {
            guard let rid = row.int64(at: 1),
                let column = row.int64(at: 3).flatMap({ columnOf[$0] })
            else { continue }
            let parent = row.string(at: 2) ?? "?"
            let values = try connection.query(
                "SELECT \"id\", \"\(column)\" FROM \(layout.table) WHERE \(layout.rid) = ?",
                [.integer(rid)]
            ).first
            let id = values.map { DocumentStore.display($0[0]) } ?? "?"
            let value = values.map { DocumentStore.display($0[1]) } ?? "?"
            problems.append(
                "\(name): document \(id) has \(column) = \(value), which \(parent) does not have")
        }
        if dangling.count > Self.reportLimit {
            problems.append(
                "\(name): \(dangling.count - Self.reportLimit) more dangling references")
        }
        return problems
    }
}
