import Foundation
import TroveSQLite

/// A reference to a field, or to a JSON path inside a json field or an undeclared field, used to
/// build filters, orderings, indexes and aggregates.
///
/// ```swift
/// Field("year") >= 2020 && Field("category") == "c7"
/// Field("meta", path: "$.author.name") == "Ada"       // inside a json field
/// Field("color") == "red"                              // an undeclared field of a document
/// Field.id == 42
/// ```
public struct Field: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The field's name (`id` for the document id).
    public var name: String
    /// A JSON path inside the field (`$.a.b`, `$.list[0]`), or nil for the field itself.
    public var path: String?

    /// A field, or a JSON path inside it.
    public init(_ name: String, path: String? = nil) {
        self.name = name
        self.path = path
    }

    /// The document id.
    public static let id = Field("id")

    public var description: String { path.map { "\(name)\($0.dropFirst())" } ?? name }
}

/// How a comparison compares.
public enum Comparison: String, Hashable, Sendable, Codable {
    case equal = "="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
}

/// A filter expression: which documents a query sees. Values are always bound, never spliced
/// into SQL.
///
/// Semantics follow SQL: `==` and `!=` treat null as a value (`Field("x") == nil` matches a
/// missing or null field, `!=` a non-null value matches null rows too); order comparisons,
/// `between`, `in`, prefix, contains and like are unknown for null and so never match it, not
/// even under `!`.
///
/// ```swift
/// let filter: Filter = (Field("year") >= 2020 || Field("pinned") == true)
///     && !Field("tags").arrayContains("archived")
///     && Field("title").hasPrefix("Re:")
/// ```
public indirect enum Filter: Hashable, Sendable {
    /// Every document.
    case all
    /// `field <op> value`.
    case compare(Field, Comparison, Value)
    /// The field's value is one of the values.
    case isIn(Field, [Value])
    /// `lower <= field <= upper`.
    case between(Field, Value, Value)
    /// Text starting with the prefix (case-sensitive).
    case hasPrefix(Field, String)
    /// Text containing the substring (case-sensitive).
    case contains(Field, String)
    /// SQL LIKE: `%` any run, `_` one character, ASCII letters case-insensitive.
    case like(Field, String)
    /// The field (or path) is null or missing.
    case isNull(Field)
    /// The JSON path exists (even holding null); for a plain field: not null.
    case exists(Field)
    /// The field (a JSON array) has an element equal to the value.
    case arrayContains(Field, Value)
    case and([Filter])
    case or([Filter])
    case not(Filter)
    /// The point field is within `kilometres` of `center` (great-circle distance; unknown for
    /// null). See ``Field/within(kilometres:of:)``.
    case withinDistance(Field, center: GeoPoint, kilometres: Double)
    /// The point field is inside the box (edges included; across the antimeridian when
    /// `west > east`). See ``Field/within(_:)``.
    case withinBox(Field, GeoBox)
    /// The document is within the scope's hops of its origin in the link graph. See
    /// ``Filter/linked(from:maxHops:labels:direction:)``.
    case linked(GraphScope)
    /// A SQL condition over the collection's columns with `?` bindings, for what the typed
    /// filters cannot say (`json_extract(metadata, '$.year') % 4 = ?`). It must only read; a
    /// fragment that does not compile, writes, or binds the wrong number of values is a
    /// ``TroveError/invalidFilter(sql:reason:)`` before anything runs.
    case sql(String, [SQLValue])

    /// The documents whose `source` field is `source` (search collections, and any collection
    /// with a `source` field).
    public static func source(_ source: String) -> Filter { Field("source") == .string(source) }

    /// Every field the filter reads.
    var fields: [Field] {
        switch self {
        case .all: []
        case .compare(let f, _, _), .isIn(let f, _), .between(let f, _, _), .hasPrefix(let f, _),
            .contains(let f, _), .like(let f, _), .isNull(let f), .exists(let f),
            .arrayContains(let f, _):
            [f]
        case .and(let parts), .or(let parts): parts.flatMap(\.fields)
        case .not(let inner): inner.fields
        case .withinDistance(let f, _, _), .withinBox(let f, _): [f]
        case .linked, .sql: []
        }
    }

    /// The SQL fragments of the filter, checked before it runs.
    var sqlFragments: [(sql: String, bindings: [SQLValue])] {
        switch self {
        case .sql(let sql, let bindings): [(sql, bindings)]
        case .and(let parts), .or(let parts): parts.flatMap(\.sqlFragments)
        case .not(let inner): inner.sqlFragments
        default: []
        }
    }

    /// The geo and graph parts of the filter, for `explain`.
    var placesAndLinks: [Filter] {
        switch self {
        case .withinDistance, .withinBox, .linked: [self]
        case .and(let parts), .or(let parts): parts.flatMap(\.placesAndLinks)
        case .not(let inner): inner.placesAndLinks
        default: []
        }
    }

    /// Documents linked from `origin` within `maxHops` (breadth-first over the link graph),
    /// optionally only along some labels and in a given direction.
    ///
    /// ```swift
    /// // Chunks of document 7 that also match a question:
    /// let query = Query(.linked(from: GraphNode("docs", 7), labels: ["has"]))
    ///     .matching(.typed("reset the router")).limit(5)
    /// ```
    public static func linked(
        from origin: GraphNode, maxHops: Int = 1, labels: Set<String>? = nil,
        direction: LinkDirection = .outgoing
    ) -> Filter {
        .linked(GraphScope(from: origin, maxHops: maxHops, labels: labels, direction: direction))
    }
}

// MARK: Building filters

extension Field {
    public static func == (field: Field, value: Value) -> Filter { .compare(field, .equal, value) }
    public static func != (field: Field, value: Value) -> Filter {
        .compare(field, .notEqual, value)
    }
    public static func < (field: Field, value: Value) -> Filter { .compare(field, .less, value) }
    public static func <= (field: Field, value: Value) -> Filter {
        .compare(field, .lessOrEqual, value)
    }
    public static func > (field: Field, value: Value) -> Filter { .compare(field, .greater, value) }
    public static func >= (field: Field, value: Value) -> Filter {
        .compare(field, .greaterOrEqual, value)
    }

    /// The value is one of `values`.
    public func isIn(_ values: [Value]) -> Filter { .isIn(self, values) }
    /// `lower <= value <= upper`.
    public func between(_ lower: Value, _ upper: Value) -> Filter { .between(self, lower, upper) }
    /// Text starting with `prefix`.
    public func hasPrefix(_ prefix: String) -> Filter { .hasPrefix(self, prefix) }
    /// Text containing `substring`.
    public func contains(_ substring: String) -> Filter { .contains(self, substring) }
    /// SQL LIKE pattern.
    public func like(_ pattern: String) -> Filter { .like(self, pattern) }
    /// Null or missing.
    public var isNull: Filter { .isNull(self) }
    /// Present (for a JSON path: even holding null).
    public var exists: Filter { .exists(self) }
    /// A JSON array holding `value`.
    public func arrayContains(_ value: Value) -> Filter { .arrayContains(self, value) }
    /// A point within `kilometres` of `center` (great-circle distance, exact; the R*Tree
    /// prefilters with the radius's bounding box, correct at the poles and the antimeridian).
    public func within(kilometres: Double, of center: GeoPoint) -> Filter {
        .withinDistance(self, center: center, kilometres: kilometres)
    }
    /// A point inside `box`.
    public func within(_ box: GeoBox) -> Filter { .withinBox(self, box) }
}

extension Filter {
    public static func && (a: Filter, b: Filter) -> Filter {
        switch (a, b) {
        case (.all, _): b
        case (_, .all): a
        case (.and(let x), .and(let y)): .and(x + y)
        case (.and(let x), _): .and(x + [b])
        default: .and([a, b])
        }
    }
    public static func || (a: Filter, b: Filter) -> Filter {
        switch (a, b) {
        case (.or(let x), .or(let y)): .or(x + y)
        case (.or(let x), _): .or(x + [b])
        default: .or([a, b])
        }
    }
    public static prefix func ! (a: Filter) -> Filter { .not(a) }
}
