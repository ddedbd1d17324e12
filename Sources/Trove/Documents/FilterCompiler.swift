import Foundation
import TroveSQLite

/// What a ``Field`` refers to in a collection's table, as SQL.
struct ResolvedField {
    enum Kind {
        case id(IDKind)
        case declared(FieldDefinition)
        /// A JSON path into a json field or into the undeclared-fields column.
        case jsonPath
    }
    /// The SQL expression (a quoted column, or `json_extract(column, '<validated path>')`).
    let sql: String
    let kind: Kind
    let field: Field
    /// For JSON paths: the column and the path, for json_each/json_type.
    let jsonColumn: String?
    let jsonPath: String?

    var definition: FieldDefinition? { if case .declared(let d) = kind { d } else { nil } }
    var isVector: Bool { definition?.type.vectorDimension != nil }
}

/// Maps ``Field`` references onto a schema's columns, with typed errors for unknown fields and
/// malformed paths.
struct FieldResolver {
    let schema: DocumentSchema

    static let extraColumn = "\"_extra\""

    func column(_ field: Field) throws -> ResolvedField {
        if field.name == "id" {
            guard field.path == nil else {
                throw TroveError.invalidPath(
                    field: "id", path: field.path!, reason: "the id has no JSON paths")
            }
            return ResolvedField(
                sql: "\"id\"", kind: .id(schema.id), field: field, jsonColumn: nil, jsonPath: nil)
        }
        if let definition = schema.field(field.name) {
            guard let path = field.path else {
                return ResolvedField(
                    sql: quote(field.name), kind: .declared(definition), field: field,
                    jsonColumn: nil, jsonPath: nil)
            }
            guard definition.type == .json else {
                throw TroveError.invalidPath(
                    field: field.name, path: path,
                    reason: "only json fields have paths; \(field.name) is \(definition.type)")
            }
            try Self.validate(path: path, field: field.name)
            let column = quote(field.name)
            return ResolvedField(
                sql: "json_extract(\(column), '\(path)')", kind: .jsonPath, field: field,
                jsonColumn: column,
                jsonPath: path)
        }
        guard schema.allowsUndeclaredFields else {
            throw TroveError.unknownField(
                field: field.name, known: ["id"] + schema.fields.map(\.name))
        }
        try DocumentSchema.validate(fieldName: field.name)
        var path = "$.\(field.name)"
        if let tail = field.path {
            try Self.validate(path: tail, field: field.name)
            path += tail.dropFirst()
        }
        return ResolvedField(
            sql: "json_extract(\(Self.extraColumn), '\(path)')", kind: .jsonPath, field: field,
            jsonColumn: Self.extraColumn, jsonPath: path)
    }

    private func quote(_ name: String) -> String { "\"\(name)\"" }

    /// JSON paths are written into SQL text (so expression indexes match them), hence a strict
    /// grammar: `$` then `.name` (`[A-Za-z_][A-Za-z0-9_]*`) or `[index]` steps.
    static func validate(path: String, field: String) throws {
        let scalars = Array(path.unicodeScalars)
        func fail(_ reason: String) -> TroveError {
            .invalidPath(field: field, path: path, reason: reason)
        }
        guard scalars.first == "$" else { throw fail("a path starts with $") }
        var i = 1
        func isNameStart(_ s: Unicode.Scalar) -> Bool {
            (s >= "A" && s <= "Z") || (s >= "a" && s <= "z") || s == "_"
        }
        func isDigit(_ s: Unicode.Scalar) -> Bool { s >= "0" && s <= "9" }
        while i < scalars.count {
            switch scalars[i] {
            case ".":
                i += 1
                guard i < scalars.count, isNameStart(scalars[i]) else {
                    throw fail("expected a name after .")
                }
                while i < scalars.count, isNameStart(scalars[i]) || isDigit(scalars[i]) { i += 1 }
            case "[":
                i += 1
                let start = i
                while i < scalars.count, isDigit(scalars[i]) { i += 1 }
                guard i > start, i < scalars.count, scalars[i] == "]" else {
                    throw fail("expected [digits]")
                }
                i += 1
            default:
                throw fail("unexpected character '\(scalars[i])'")
            }
        }
    }
}

/// SQL text with its bindings, built piece by piece.
struct SQLFragment {
    var sql: String = ""
    var bindings: [SQLValue] = []

    mutating func append(_ text: String) { sql += text }
    mutating func bind(_ value: SQLValue) {
        sql += "?"
        bindings.append(value)
    }
    mutating func append(_ other: SQLFragment) {
        sql += other.sql
        bindings += other.bindings
    }

    /// Ids as a JSON array, bound as one text and read back with `json_each` (one statement
    /// whatever the number of ids).
    static func jsonArray(_ ids: [Int64]) -> String {
        var text = "["
        text.reserveCapacity(ids.count * 8 + 2)
        for (offset, id) in ids.enumerated() {
            if offset > 0 { text += "," }
            text += String(id)
        }
        return text + "]"
    }
}

/// What filters over places and links need beyond the schema: the collection's layout (its
/// R*Trees) and a way to find the records within some hops in the link graph.
struct FilterContext {
    let layout: DocumentLayout
    /// The ids (as stored) of this collection's records within the scope.
    let linked: (GraphScope) throws -> [SQLValue]
}

/// Compiles a ``Filter`` into a SQL boolean expression over a collection's table.
struct FilterCompiler {
    let resolver: FieldResolver
    /// Needed by geo and graph filters (``DocumentStore/compileFilter(_:on:)`` provides it).
    var context: FilterContext? = nil

    func compile(_ filter: Filter) throws -> SQLFragment {
        var out = SQLFragment()
        try write(filter, into: &out)
        return out
    }

    /// `underNot`: whether a NOT encloses this part; only there must "unknown" (SQL NULL) and
    /// "false" differ, so only there do geo filters pay for the null-aware form.
    private func write(_ filter: Filter, into out: inout SQLFragment, underNot: Bool = false) throws
    {
        switch filter {
        case .all:
            out.append("1")
        case .compare(let field, let op, let value):
            let column = try resolver.column(field)
            try checkScalar(column, value, allowNull: op == .equal || op == .notEqual)
            if value.isNull {
                out.append(op == .equal ? "\(column.sql) IS NULL" : "\(column.sql) IS NOT NULL")
                return
            }
            if op == .equal || op == .notEqual {
                // IS / IS NOT: null is a value, so `!=` matches null rows (as Swift's != does).
                out.append("\(column.sql) \(op == .equal ? "IS" : "IS NOT") ")
            } else {
                out.append("\(column.sql) \(op.rawValue) ")
            }
            out.bind(try bindable(value, for: column))
        case .isIn(let field, let values):
            let column = try resolver.column(field)
            guard !values.isEmpty else {
                out.append("0")
                return
            }
            out.append("\(column.sql) IN (")
            for (i, value) in values.enumerated() {
                try checkScalar(column, value, allowNull: false)
                if i > 0 { out.append(", ") }
                out.bind(try bindable(value, for: column))
            }
            out.append(")")
        case .between(let field, let lower, let upper):
            let column = try resolver.column(field)
            try checkScalar(column, lower, allowNull: false)
            try checkScalar(column, upper, allowNull: false)
            out.append("\(column.sql) BETWEEN ")
            out.bind(try bindable(lower, for: column))
            out.append(" AND ")
            out.bind(try bindable(upper, for: column))
        case .hasPrefix(let field, let prefix):
            let column = try textColumn(field, operation: "hasPrefix")
            // substr/length count characters, so this is exact for any text; null stays unknown.
            out.append("(substr(\(column.sql), 1, length(")
            out.bind(.text(prefix))
            out.append(")) = ")
            out.bind(.text(prefix))
            out.append(")")
        case .contains(let field, let substring):
            let column = try textColumn(field, operation: "contains")
            out.append("(instr(\(column.sql), ")
            out.bind(.text(substring))
            out.append(") > 0)")
        case .like(let field, let pattern):
            let column = try textColumn(field, operation: "like")
            out.append("(\(column.sql) LIKE ")
            out.bind(.text(pattern))
            out.append(")")
        case .isNull(let field):
            let column = try resolver.column(field)
            out.append("\(column.sql) IS NULL")
        case .exists(let field):
            let column = try resolver.column(field)
            if let json = column.jsonColumn, let path = column.jsonPath {
                out.append("json_type(\(json), '\(path)') IS NOT NULL")
            } else {
                out.append("\(column.sql) IS NOT NULL")
            }
        case .arrayContains(let field, let value):
            let column = try resolver.column(field)
            try checkScalar(column, value, allowNull: false, forArrayElement: true)
            let (json, path): (String, String)
            if let c = column.jsonColumn, let p = column.jsonPath {
                (json, path) = (c, p)
            } else if column.definition?.type == .json {
                (json, path) = (column.sql, "$")
            } else {
                throw TroveError.typeMismatch(
                    field: field.description, expected: "json array", value: value.description)
            }
            out.append(
                "(json_type(\(json), '\(path)') = 'array' AND EXISTS (SELECT 1 FROM json_each(\(json), '\(path)') WHERE value = "
            )
            out.bind(try bindable(value, for: column))
            out.append("))")
        case .and(let parts):
            guard !parts.isEmpty else {
                out.append("1")
                return
            }
            try writeJoined(parts, with: " AND ", into: &out, underNot: underNot)
        case .or(let parts):
            guard !parts.isEmpty else {
                out.append("0")
                return
            }
            try writeJoined(parts, with: " OR ", into: &out, underNot: underNot)
        case .not(let inner):
            out.append("NOT (")
            try write(inner, into: &out, underNot: true)
            out.append(")")
        case .withinDistance(let field, let center, let kilometres):
            let (column, table, layout) = try pointColumn(field)
            _ = try center.validated(field: field.description)
            guard kilometres >= 0, kilometres.isFinite else {
                throw TroveError.invalidQuery(
                    "a radius must be finite and >= 0 km, got \(kilometres)")
            }
            writeGeo(
                GeoSQL.withinRadius(table: table, center: center, kilometres: kilometres),
                column: column, layout: layout, underNot: underNot, into: &out)
        case .withinBox(let field, let box):
            let (column, table, layout) = try pointColumn(field)
            try box.validate(field: field.description)
            writeGeo(
                GeoSQL.inside(table: table, box: box), column: column, layout: layout,
                underNot: underNot, into: &out)
        case .sql(let sql, let bindings):
            // Plain `?` marks only: the fragment is embedded in larger statements.
            out.append(SQLFragment(sql: "(\(sql))", bindings: bindings))
        case .linked(let scope):
            guard let context else {
                throw TroveError.invalidQuery("link filters are for document collections")
            }
            try scope.validate()
            let ids = try context.linked(scope)
            out.append("\"id\" IN (SELECT value FROM json_each(")
            out.bind(.text(Self.jsonArray(ids)))
            out.append("))")
        }
    }

    /// `rid IN (<R*Tree ids>)`, which SQLite answers by seeking those rows. Under a NOT it is
    /// unknown for a missing point, as other predicates are (so `!` does not match it).
    private func writeGeo(
        _ ids: SQLFragment, column: ResolvedField, layout: DocumentLayout, underNot: Bool,
        into out: inout SQLFragment
    ) {
        if underNot { out.append("CASE WHEN \(column.sql) IS NULL THEN NULL ELSE ") }
        out.append("\(layout.rid) IN (")
        out.append(ids)
        out.append(")")
        if underNot { out.append(" END") }
    }

    private func pointColumn(_ field: Field) throws -> (ResolvedField, String, DocumentLayout) {
        let column = try resolver.column(field)
        guard column.definition?.type == .point else {
            throw TroveError.typeMismatch(
                field: field.description, expected: "a point field",
                value: column.definition.map { "\($0.type) field" } ?? "not a declared field")
        }
        guard let layout = context?.layout else {
            throw TroveError.invalidQuery("geo filters are for document collections")
        }
        return (column, layout.geoTable(field.name), layout)
    }

    /// A JSON array of integer and text values (for `json_each`).
    static func jsonArray(_ values: [SQLValue]) -> String {
        var text = "["
        for (offset, value) in values.enumerated() {
            if offset > 0 { text += "," }
            switch value {
            case .integer(let v): text += String(v)
            case .text(let v): JSONCoding.quote(v, into: &text)
            default: text += "null"
            }
        }
        return text + "]"
    }

    private func writeJoined(
        _ parts: [Filter], with separator: String, into out: inout SQLFragment, underNot: Bool
    )
        throws
    {
        out.append("(")
        for (i, part) in parts.enumerated() {
            if i > 0 { out.append(separator) }
            out.append("(")
            try write(part, into: &out, underNot: underNot)
            out.append(")")
        }
        out.append(")")
    }

    private func textColumn(_ field: Field, operation: String) throws -> ResolvedField {
        let column = try resolver.column(field)
        switch column.kind {
        case .declared(let d) where d.type != .text:
            throw TroveError.typeMismatch(
                field: field.description, expected: "text for \(operation)",
                value: "\(d.type) field")
        default: return column
        }
    }

    /// Rejects a comparison whose value cannot be of the field's type.
    private func checkScalar(
        _ column: ResolvedField, _ value: Value, allowNull: Bool, forArrayElement: Bool = false
    )
        throws
    {
        func mismatch(_ expected: String) -> TroveError {
            .typeMismatch(
                field: column.field.description, expected: expected, value: value.description)
        }
        if value.isNull {
            guard allowNull else { throw mismatch("a non-null value") }
            return
        }
        switch column.kind {
        case .id(let kind):
            switch (kind, value) {
            case (.int64, .int), (.uuid, .string), (.string, .string): return
            default: throw mismatch(kind == .int64 ? "an integer id" : "a text id")
            }
        case .jsonPath:
            switch value {
            case .bool, .int, .double, .string: return
            default: throw mismatch("a JSON scalar (bool, number or text)")
            }
        case .declared(let d):
            if forArrayElement {
                switch value {
                case .bool, .int, .double, .string: return
                default: throw mismatch("a JSON scalar")
                }
            }
            switch (d.type, value) {
            case (.text, .string), (.integer, .int), (.integer, .double), (.real, .int),
                (.real, .double),
                (.bool, .bool), (.date, .date), (.data, .data):
                return
            case (.json, _), (.vector, _), (.point, _):
                throw mismatch(
                    "no comparison on a \(d.type) field (use a path, isNull, exists, or within for points)"
                )
            default:
                throw mismatch(d.type.description)
            }
        }
    }

    /// The SQL value a filter binds for `value`.
    func bindable(_ value: Value, for column: ResolvedField) throws -> SQLValue {
        switch value {
        case .null: .null
        case .bool(let v): .integer(v ? 1 : 0)
        case .int(let v): .integer(v)
        case .double(let v): .real(v)
        case .string(let v): .text(v)
        case .date(let v): .real(v.timeIntervalSince1970)
        case .data(let v): .blob([UInt8](v))
        case .vector(let v): .blob(VectorBlob.bytes(v))
        case .array, .object: .text(try JSONCoding.text(value, field: column.field.description))
        }
    }
}
