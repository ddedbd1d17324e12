import Foundation

/// What every ``VectorStore`` method throws, with SQLiteVecKit's case names, so `catch` clauses
/// and `switch`es written for SQLiteVecKit keep compiling and matching.
///
/// Codes are SQLite result codes (1 `SQLITE_ERROR`, 19 `SQLITE_CONSTRAINT`, 26 `SQLITE_NOTADB`,
/// ...); messages are SQLite's or Trove's text, for people, not for matching.
///
/// ```swift
/// do {
///     try await store.insert(entry)
/// } catch SQLiteError.dimensionMismatch(let expected, let got) {
///     print("the model makes \(got)-d vectors; the store holds \(expected)-d")
/// }
/// ```
///
/// Importing both `Trove` and `TroveVecKit` in one file makes the bare name ambiguous with
/// Trove's own `SQLiteError`: write `TroveVecKit.SQLiteError` there.
public enum SQLiteError: Sendable, LocalizedError {
    /// The file could not be opened as a store (not a database, unreadable, or written by a newer
    /// Trove).
    case databaseOpenFailed(code: Int32, message: String?)
    /// The store has no open connection. Kept for SQLiteVecKit's `switch`es; Trove never throws it
    /// (the connection lives as long as the store).
    case databaseNotOpen
    /// Kept for SQLiteVecKit's `switch`es; Trove registers no extension and never throws it.
    case registrationFailed(code: Int32, message: String?)
    /// A statement failed for a reason no other case names.
    case executionFailed(code: Int32, message: String?)
    /// SQL could not be compiled: a syntax error, an unknown table or column, or a `where:`
    /// fragment that is not a valid condition. Nothing was run.
    case prepareFailed(code: Int32, message: String?)
    /// SQL compiled but failed while running: a constraint (such as a duplicate id, code 19), or a
    /// `where:` fragment failing on a row (such as `json_extract` over metadata that is not JSON).
    case stepFailed(code: Int32, message: String?)
    /// The table name is not `[A-Za-z_][A-Za-z0-9_]*`, or is one Trove reserves (longer than 64
    /// characters, or starting with `sqlite_` or `trove_`).
    case invalidTableName(String)
    /// The dimension is below 1 (or above Trove's 65,536).
    case invalidDimension(Int)
    /// The file holds the table with another configuration (dimension, metric, lexical search),
    /// or holds another kind of table, index or collection under that name. Nothing was changed.
    case schemaMismatch(expected: String, found: String)
    /// A vector's length is not the store's dimension. Nothing was written.
    case dimensionMismatch(expected: Int, got: Int)
    /// A metadata string is longer than the store's limit, in UTF-8 bytes. Nothing was written.
    case metadataTooLarge(limit: Int, got: Int)
    /// `topK` is outside `1...VectorStore.maxTopK`.
    case invalidTopK(Int)
    /// `update(_:)` named an id the store does not hold.
    case rowNotFound(id: Int)
    /// The text of `searchText` / `searchHybrid` is not valid FTS5 syntax.
    case invalidTextQuery(String, detail: String?)
    /// Text or hybrid search on a store created with `lexicalSearch: false`.
    case lexicalSearchDisabled

    public var errorDescription: String? {
        func detail(_ code: Int32, _ message: String?) -> String {
            "code \(code): \(message ?? "no message")"
        }
        switch self {
        case .databaseOpenFailed(let code, let message):
            return "Could not open the store (\(detail(code, message)))."
        case .databaseNotOpen: return "The store's database is not open."
        case .registrationFailed(let code, let message):
            return "Extension registration failed (\(detail(code, message)))."
        case .executionFailed(let code, let message):
            return "The statement failed (\(detail(code, message)))."
        case .prepareFailed(let code, let message):
            return "The SQL could not be compiled (\(detail(code, message)))."
        case .stepFailed(let code, let message):
            return "The statement failed while running (\(detail(code, message)))."
        case .invalidTableName(let name):
            return
                "'\(name)' is not a valid table name: use [A-Za-z_][A-Za-z0-9_]*, at most 64 characters, not starting with sqlite_ or trove_."
        case .invalidDimension(let dimension):
            return "The dimension must be in 1...65536, got \(dimension)."
        case .schemaMismatch(let expected, let found):
            return
                "The file holds this table with another configuration; open it with the configuration it was made with, or re-ingest into a new file. Expected: \(expected). Found: \(found)."
        case .dimensionMismatch(let expected, let got):
            return "The vector has \(got) components; the store's dimension is \(expected)."
        case .metadataTooLarge(let limit, let got):
            return "The metadata is \(got) UTF-8 bytes; the store's limit is \(limit)."
        case .invalidTopK(let topK):
            return "topK must be in 1...\(VectorStore.maxTopK), got \(topK)."
        case .rowNotFound(let id): return "The store has no row with id \(id)."
        case .invalidTextQuery(let query, let detail):
            return "'\(query)' is not a valid FTS5 query: \(detail ?? "syntax error")."
        case .lexicalSearchDisabled:
            return "The store was created with lexicalSearch: false, so it has no text index."
        }
    }
}
