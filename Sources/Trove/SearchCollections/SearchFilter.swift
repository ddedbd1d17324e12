import TroveSQLite

/// Which rows may compete in a search. Applied before ranking, so a filtered top-k returns k
/// matching rows whenever k exist.
///
/// The SQL fragment sees the collection's columns `id`, `content`, `source`, `metadata`,
/// `embedding`, `created_at`, `updated_at`; values go in `bindings`, never in the text:
///
/// ```swift
/// let filter = SearchFilter(source: "notes/today.md",
///                           sql: "json_extract(metadata, '$.page') > ?", bindings: [.integer(2)])
/// ```
public struct SearchFilter: Hashable, Sendable {
    /// Only rows with exactly this source.
    public var source: String?
    /// Typed conditions on metadata keys, all of which must hold.
    public var metadata: [MetadataPredicate]
    /// A SQL boolean expression over the collection's columns.
    public var sql: String?
    /// Values for the `?` placeholders in ``sql``, in order.
    public var bindings: [SQLValue]

    /// A filter; every given part must hold.
    public init(
        source: String? = nil, metadata: [MetadataPredicate] = [], sql: String? = nil, bindings: [SQLValue] = []
    ) {
        self.source = source
        self.metadata = metadata
        self.sql = sql
        self.bindings = bindings
    }

    /// True when every row passes.
    public var isEmpty: Bool { source == nil && metadata.isEmpty && (sql?.allSatisfy(\.isWhitespace) ?? true) }

    /// `SELECT id FROM <table> WHERE ...` and its bindings, or nil when the filter is empty.
    /// Only the filter's own conditions: rows without a vector are ignored by the vector index
    /// anyway, and asking for `embedding IS NOT NULL` would stop SQLite from scanning a small
    /// covering index instead of the wide table.
    func candidateQuery(table: String) -> (sql: String, bindings: [SQLValue])? {
        guard !isEmpty else { return nil }
        var conditions: [String] = []
        var values: [SQLValue] = []
        if let source {
            conditions.append("source = ?")
            values.append(.text(source))
        }
        for predicate in metadata {
            conditions.append(predicate.sql)
            values += predicate.bindings
        }
        if let sql, !sql.allSatisfy(\.isWhitespace) {
            // Parenthesised so the fragment's own OR cannot widen the other conditions.
            conditions.append("(\(sql))")
            values += bindings
        }
        return ("SELECT id FROM \(table) WHERE " + conditions.joined(separator: " AND "), values)
    }
}

/// A typed condition on one metadata key, compiled to `json_extract` with the key's JSON path and
/// the value passed as bindings (never spliced into SQL).
///
/// ```swift
/// let filter = SearchFilter(metadata: [.equals("lang", "en"), .greaterThan("year", 2020), .contains("tags", "todo")])
/// let hits = try await notes.search(vector: q, topK: 10, filter: filter)
/// ```
/// Keys name a top-level member (`"year"`); a key starting with `$` is a full JSON path
/// (`"$.author.name"`). JSON `true`/`false` compare equal to `1`/`0`. SQLite's JSON paths cannot
/// express a key containing a double quote; use a SQL fragment for such keys.
public struct MetadataPredicate: Hashable, Sendable {
    let sql: String
    let bindings: [SQLValue]

    static func path(_ key: String) -> SQLValue {
        if key.hasPrefix("$") { return .text(key) }
        return .text("$.\"" + key.replacingOccurrences(of: "\"", with: "\\\"") + "\"")
    }

    private static func compare(_ key: String, _ op: String, _ value: SQLValue) -> MetadataPredicate {
        MetadataPredicate(sql: "json_extract(metadata, ?) \(op) ?", bindings: [path(key), value])
    }

    /// The key's value equals `value`.
    public static func equals(_ key: String, _ value: SQLValue) -> MetadataPredicate { compare(key, "=", value) }
    /// The key is present and its value differs from `value`.
    public static func notEquals(_ key: String, _ value: SQLValue) -> MetadataPredicate { compare(key, "!=", value) }
    /// The key's value is less than `value`.
    public static func lessThan(_ key: String, _ value: SQLValue) -> MetadataPredicate { compare(key, "<", value) }
    /// The key's value is at most `value`.
    public static func lessThanOrEqual(_ key: String, _ value: SQLValue) -> MetadataPredicate { compare(key, "<=", value) }
    /// The key's value is greater than `value`.
    public static func greaterThan(_ key: String, _ value: SQLValue) -> MetadataPredicate { compare(key, ">", value) }
    /// The key's value is at least `value`.
    public static func greaterThanOrEqual(_ key: String, _ value: SQLValue) -> MetadataPredicate { compare(key, ">=", value) }

    /// The key is present (with any value, including null).
    public static func exists(_ key: String) -> MetadataPredicate {
        MetadataPredicate(sql: "json_type(metadata, ?) IS NOT NULL", bindings: [path(key)])
    }

    /// The key holds an array containing `value`, or equals `value`.
    public static func contains(_ key: String, _ value: SQLValue) -> MetadataPredicate {
        MetadataPredicate(
            sql: "EXISTS (SELECT 1 FROM json_each(metadata, ?) WHERE value = ?)", bindings: [path(key), value])
    }

    /// The key's value is one of `values`.
    public static func isIn(_ key: String, _ values: [SQLValue]) -> MetadataPredicate {
        guard !values.isEmpty else { return MetadataPredicate(sql: "0", bindings: []) }
        let marks = repeatElement("?", count: values.count).joined(separator: ", ")
        return MetadataPredicate(sql: "json_extract(metadata, ?) IN (\(marks))", bindings: [path(key)] + values)
    }
}
