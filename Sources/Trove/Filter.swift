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
    /// A SQL boolean expression over the collection's columns.
    public var sql: String?
    /// Values for the `?` placeholders in ``sql``, in order.
    public var bindings: [SQLValue]

    public init(source: String? = nil, sql: String? = nil, bindings: [SQLValue] = []) {
        self.source = source
        self.sql = sql
        self.bindings = bindings
    }

    /// True when every row passes.
    public var isEmpty: Bool { source == nil && (sql?.allSatisfy(\.isWhitespace) ?? true) }

    /// `SELECT id FROM <table> WHERE ...` and its bindings, or nil when the filter is empty.
    func candidateQuery(table: String, requireEmbedding: Bool) -> (sql: String, bindings: [SQLValue])? {
        guard !isEmpty else { return nil }
        var conditions: [String] = []
        var values: [SQLValue] = []
        if requireEmbedding { conditions.append("embedding IS NOT NULL") }
        if let source {
            conditions.append("source = ?")
            values.append(.text(source))
        }
        if let sql, !sql.allSatisfy(\.isWhitespace) {
            // Parenthesised so the fragment's own OR cannot widen the other conditions.
            conditions.append("(\(sql))")
            values += bindings
        }
        return ("SELECT id FROM \(table) WHERE " + conditions.joined(separator: " AND "), values)
    }
}
