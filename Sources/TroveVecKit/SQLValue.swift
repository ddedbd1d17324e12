import Foundation
import TroveSQLite

/// One SQLite value: a binding for a `?` placeholder, or a column of a ``SQLRow``.
///
/// ```swift
/// let rows = try await store.query("SELECT content FROM chunks WHERE source = ? AND id > ?",
///                                  bindings: [.text("notes.md"), .int(10)])
/// ```
public enum SQLValue: Sendable, Equatable {
    /// A 64-bit integer.
    case int(Int)
    /// A double.
    case double(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes.
    case blob(Data)
    /// SQL `NULL`.
    case null

    /// The value Trove's connection binds.
    var trove: TroveSQLite.SQLValue {
        switch self {
        case .int(let value): .integer(Int64(value))
        case .double(let value): .real(value)
        case .text(let value): .text(value)
        case .blob(let value): .blob([UInt8](value))
        case .null: .null
        }
    }

    /// The value Trove's connection read.
    init(_ value: TroveSQLite.SQLValue) {
        switch value {
        case .integer(let value): self = .int(Int(value))
        case .real(let value): self = .double(value)
        case .text(let value): self = .text(value)
        case .blob(let bytes): self = .blob(Data(bytes))
        case .null: self = .null
        }
    }
}

/// One row returned by ``VectorStore/query(_:bindings:)``: its values by column name, with typed
/// accessors that return nil when the column is missing or holds another type.
///
/// ```swift
/// let author = rows.first?.text("author")
/// let pages = rows.first?.int("pages")
/// ```
public struct SQLRow: Sendable, Equatable {
    /// The column names, in the order the statement selects them.
    public let columnNames: [String]
    /// Values in column order (a name selected twice reads its first column).
    private let values: [SQLValue]

    init(_ row: TroveSQLite.Row) {
        columnNames = row.columnNames
        values = row.values.map(SQLValue.init)
    }

    /// The value of `column`, or nil when the row has no such column.
    public subscript(_ column: String) -> SQLValue? {
        columnNames.firstIndex(of: column).map { values[$0] }
    }

    /// The integer in `column`, or nil.
    public func int(_ column: String) -> Int? {
        if case .int(let value)? = self[column] { value } else { nil }
    }

    /// The number in `column` (an integer is widened), or nil.
    public func double(_ column: String) -> Double? {
        switch self[column] {
        case .double(let value)?: value
        case .int(let value)?: Double(value)
        default: nil
        }
    }

    /// The text in `column`, or nil.
    public func text(_ column: String) -> String? {
        if case .text(let value)? = self[column] { value } else { nil }
    }

    /// The bytes in `column`, or nil.
    public func blob(_ column: String) -> Data? {
        if case .blob(let value)? = self[column] { value } else { nil }
    }
}
