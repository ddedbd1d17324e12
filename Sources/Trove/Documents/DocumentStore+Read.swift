import Foundation
import TroveSQLite

extension DocumentStore {
    /// One document by id, or nil.
    func fetch(id: DocumentID, on connection: Connection) throws -> Document? {
        guard id.kind == schema.id else {
            throw TroveError.typeMismatch(
                field: "id", expected: "\(schema.id) id", value: id.description)
        }
        let selection = try selection(nil)
        var sql = SQLFragment(sql: "SELECT \(selection.sql) FROM \(layout.table) WHERE \"id\" = ")
        sql.bind(id.sqlValue)
        if let visible = visibility() {
            sql.append(" AND ")
            sql.append(visible)
        }
        let statement = try connection.cachedStatement(sql.sql)
        try statement.bind(sql.bindings)
        defer { statement.reset() }
        return try statement.step() ? document(statement, selection) : nil
    }

    /// The SELECT of an unranked query: filter, cursor, order (ties by id), limit and offset.
    struct CompiledFetch {
        var sql: SQLFragment
        var selection: Selection
        var sortColumns: Int
    }

    func compileFetch(_ query: Query, on connection: Connection) throws -> CompiledFetch {
        guard !query.isRanked else {
            throw TroveError.invalidQuery("a ranked query is run with search(), not fetch()")
        }
        let selection = try selection(query.projection)
        let keys = try sortKeys(query.order)
        var sql = SQLFragment(sql: "SELECT \(selection.sql)")
        for key in keys { sql.append(", \(key.sql)") }
        sql.append(" FROM \(layout.table) WHERE ")
        sql.append(try condition(query.filter, on: connection))
        if let cursor = query.cursor {
            guard cursor.fingerprint == query.cursorFingerprint, cursor.keys.count == keys.count - 1
            else {
                throw TroveError.invalidCursor(
                    reason: "the cursor comes from a query with another filter or order")
            }
            sql.append(" AND ")
            sql.append(keysetCondition(keys, after: cursor.keys + [cursor.id.sqlValue]))
        }
        sql.append(" ORDER BY ")
        sql.append(
            keys.map {
                "\($0.sql) \($0.descending ? "DESC" : "ASC") NULLS \($0.nullsFirst ? "FIRST" : "LAST")"
            }
            .joined(separator: ", "))
        if let limit = query.limit {
            guard limit >= 0 else {
                throw TroveError.invalidQuery("limit must be >= 0, got \(limit)")
            }
            sql.append(" LIMIT ")
            sql.bind(.integer(Int64(limit)))
        } else if query.offset > 0 {
            sql.append(" LIMIT -1")
        }
        if query.offset > 0 {
            sql.append(" OFFSET ")
            sql.bind(.integer(Int64(query.offset)))
        } else if query.offset < 0 {
            throw TroveError.invalidQuery("offset must be >= 0, got \(query.offset)")
        }
        return CompiledFetch(sql: sql, selection: selection, sortColumns: keys.count)
    }

    struct ResolvedSortKey {
        var sql: String
        var descending: Bool
        var nullsFirst: Bool
    }

    /// The query's keys, then the id (ascending) so the order is total.
    func sortKeys(_ order: [SortKey]) throws -> [ResolvedSortKey] {
        var keys: [ResolvedSortKey] = []
        for key in order {
            let column = try resolver.column(key.field)
            if let d = column.definition,
                d.type == .json || d.type == .point || d.type.vectorDimension != nil
            {
                throw TroveError.typeMismatch(
                    field: key.field.description, expected: "an orderable field",
                    value: "\(d.type) field")
            }
            keys.append(
                ResolvedSortKey(
                    sql: column.sql, descending: key.descending, nullsFirst: key.nullsFirst))
        }
        keys.append(ResolvedSortKey(sql: "\"id\"", descending: false, nullsFirst: true))
        return keys
    }

    /// Rows strictly after `values` in the order of `keys`:
    /// `k1 > v1 OR (k1 IS v1 AND (k2 > v2 OR (k2 IS v2 AND ...)))`, with nulls placed as the keys say.
    func keysetCondition(_ keys: [ResolvedSortKey], after values: [SQLValue]) -> SQLFragment {
        var out = SQLFragment(sql: "(")
        for i in keys.indices {
            if i > 0 { out.append(" OR ") }
            out.append("(")
            for j in 0..<i {
                out.append("\(keys[j].sql) IS ")
                out.bind(values[j])
                out.append(" AND ")
            }
            let key = keys[i]
            if values[i].isNull {
                out.append(key.nullsFirst ? "\(key.sql) IS NOT NULL" : "0")
            } else {
                out.append("(\(key.sql) \(key.descending ? "<" : ">") ")
                out.bind(values[i])
                if !key.nullsFirst { out.append(" OR \(key.sql) IS NULL") }
                out.append(")")
            }
            out.append(")")
        }
        out.append(")")
        return out
    }

    /// An unranked query's page, with the cursor for the next one.
    func fetch(_ query: Query, on connection: Connection, wantsCursor: Bool = true) throws -> Page {
        let (documents, next) = try fetch(query, on: connection, wantsCursor: wantsCursor) {
            document($0, $1)
        }
        return Page(documents: documents, next: next)
    }

    /// An unranked query's rows, each made by `row` from the statement positioned on it (the
    /// selection's columns first), with the cursor for the next page.
    func fetch<T>(
        _ query: Query, on connection: Connection, wantsCursor: Bool = true,
        row makeRow: (Statement, Selection) throws -> T
    ) throws -> (rows: [T], next: Cursor?) {
        var rows: [T] = []
        let next = try forEachRow(query, on: connection, wantsCursor: wantsCursor) {
            rows.append(try makeRow($0, $1))
        }
        return (rows, next)
    }

    /// Calls `body` with the statement on each row of an unranked query (the selection's
    /// columns first), and returns the cursor for the next page. Not generic, so a caller that
    /// keeps its rows its own way pays no generic dispatch per row.
    func forEachRow(
        _ query: Query, on connection: Connection, wantsCursor: Bool,
        _ body: (Statement, Selection) throws -> Void
    ) throws -> Cursor? {
        let compiled = try compileFetch(query, on: connection)
        let statement = try connection.cachedStatement(compiled.sql.sql)
        var count = 0
        var lastKeys: [SQLValue] = []
        var lastID: DocumentID?
        let keyStart = compiled.selection.columnCount
        let readsKeys = wantsCursor && query.limit != nil
        try statement.forEachRow(compiled.sql.bindings) { row in
            try body(row, compiled.selection)
            count += 1
            // Only a page that ends at its limit needs the last row's sort values.
            if readsKeys, count == query.limit {
                lastKeys = (keyStart..<(keyStart + compiled.sortColumns - 1)).map {
                    row.value(at: $0)
                }
                lastID = DocumentID.read(row.value(at: 0), kind: schema.id)
            }
        }
        guard wantsCursor, let limit = query.limit, count == limit, let lastID else { return nil }
        return Cursor(keys: lastKeys, id: lastID, fingerprint: query.cursorFingerprint)
    }

    /// Calls `body` with each document passing the filter, in id order, until it returns false.
    func scan(_ filter: Filter, on connection: Connection, _ body: (Document) throws -> Bool) throws
    {
        let selection = try selection(nil)
        var sql = SQLFragment(sql: "SELECT \(selection.sql) FROM \(layout.table) WHERE ")
        sql.append(try condition(filter, on: connection))
        sql.append(" ORDER BY \"id\"")
        let statement = try connection.prepare(sql.sql)
        try statement.bind(sql.bindings)
        defer { statement.reset() }
        while try statement.step() {
            if try !body(document(statement, selection)) { return }
        }
    }

    /// How many documents pass the filter.
    func count(_ filter: Filter, on connection: Connection) throws -> Int {
        var sql = SQLFragment(sql: "SELECT count(*) FROM \(layout.table) WHERE ")
        sql.append(try condition(filter, on: connection))
        return Int(
            try connection.cachedStatement(sql.sql).rows(sql.bindings).first?.int64(at: 0) ?? 0)
    }

    // MARK: Aggregates

    /// Aggregates over the documents passing `filter` (and, when `within` is given, among those
    /// rows only), grouped by `groupBy`, groups in ascending order.
    func aggregate(
        _ aggregates: [Aggregate], groupBy: [Field], filter: Filter, within rids: [Int64]?,
        on connection: Connection
    ) throws -> [AggregateRow] {
        guard !aggregates.isEmpty else {
            throw TroveError.invalidQuery("name at least one aggregate")
        }
        let resolver = self.resolver
        let groups = try groupBy.map { field -> ResolvedField in
            let column = try resolver.column(field)
            if let d = column.definition,
                d.type == .json || d.type == .point || d.type.vectorDimension != nil
            {
                throw TroveError.typeMismatch(
                    field: field.description, expected: "a groupable field",
                    value: "\(d.type) field")
            }
            return column
        }
        var columns = groups.map(\.sql)
        var resolved: [ResolvedField?] = []
        for aggregate in aggregates {
            guard let field = aggregate.field else {
                columns.append("count(*)")
                resolved.append(nil)
                continue
            }
            let column = try resolver.column(field)
            if column.isVector || column.definition?.type == .json
                || column.definition?.type == .point
            {
                throw TroveError.notNumeric(
                    field: field.description, aggregate: aggregate.function.rawValue)
            }
            switch aggregate.function {
            case .sum, .avg:
                if case .declared(let d) = column.kind, !(d.type == .integer || d.type == .real) {
                    throw TroveError.notNumeric(
                        field: field.description, aggregate: aggregate.function.rawValue)
                }
                if case .id(let kind) = column.kind, kind != .int64 {
                    throw TroveError.notNumeric(
                        field: field.description, aggregate: aggregate.function.rawValue)
                }
                columns.append("\(aggregate.function == .sum ? "sum" : "avg")(\(column.sql))")
            case .min: columns.append("min(\(column.sql))")
            case .max: columns.append("max(\(column.sql))")
            case .count: columns.append("count(\(column.sql))")
            case .countDistinct: columns.append("count(DISTINCT \(column.sql))")
            }
            resolved.append(column)
        }
        var sql = SQLFragment(
            sql: "SELECT \(columns.joined(separator: ", ")) FROM \(layout.table) WHERE ")
        sql.append(try condition(filter, on: connection))
        if let rids {
            sql.append(" AND \(layout.rid) IN (SELECT value FROM json_each(")
            sql.bind(.text(SQLFragment.jsonArray(rids)))
            sql.append("))")
        }
        if !groups.isEmpty {
            let keys = groups.map(\.sql).joined(separator: ", ")
            sql.append(" GROUP BY \(keys) ORDER BY \(keys)")
        }
        let rows = try connection.prepare(sql.sql).rows(sql.bindings)
        return rows.map { row in
            var group: [String: Value] = [:]
            for (i, column) in groups.enumerated() {
                group[column.field.description] = Self.value(row[i], as: column)
            }
            var values: [String: Value] = [:]
            for (i, aggregate) in aggregates.enumerated() {
                let raw = row[groups.count + i]
                switch aggregate.function {
                case .min, .max:
                    values[aggregate.name] =
                        resolved[i].map { Self.value(raw, as: $0) } ?? Self.value(raw)
                default: values[aggregate.name] = Self.value(raw)
                }
            }
            return AggregateRow(group: group, values: values)
        }
    }

    /// A column value as a field value, typed by the field where it is declared.
    static func value(_ raw: SQLValue, as column: ResolvedField) -> Value {
        guard case .declared(let d) = column.kind, !raw.isNull else { return value(raw) }
        switch d.type {
        case .bool: return raw.int64Value.map { .bool($0 != 0) } ?? value(raw)
        case .date:
            return raw.doubleValue.map { .date(Date(timeIntervalSince1970: $0)) } ?? value(raw)
        case .real: return raw.doubleValue.map(Value.double) ?? value(raw)
        default: return value(raw)
        }
    }

    static func value(_ raw: SQLValue) -> Value {
        switch raw {
        case .null: .null
        case .integer(let v): .int(v)
        case .real(let v): .double(v)
        case .text(let v): .string(v)
        case .blob(let v): .data(Data(v))
        }
    }

    // MARK: Plans

    /// SQLite's plan for a statement, one line per step.
    func sqlitePlan(_ sql: SQLFragment, on connection: Connection) throws -> [String] {
        try connection.query("EXPLAIN QUERY PLAN " + sql.sql, sql.bindings).compactMap {
            $0.string(at: 3)
        }
    }
}
