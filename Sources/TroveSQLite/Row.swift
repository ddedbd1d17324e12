import Foundation

/// One result row, copied out of SQLite: column names and values, readable by index or by name.
///
/// Typed accessors return nil when the column is missing, NULL, or of an incompatible type
/// (integers widen to doubles; text reads as a blob).
///
/// ```swift
/// for row in try connection.query("SELECT id, name FROM t") {
///     print(row.int64("id") ?? 0, row.string("name") ?? "")
/// }
/// ```
public struct Row: Hashable, Sendable {
    /// Column names in result order.
    public let columnNames: [String]
    /// Values in result order.
    public let values: [SQLValue]

    /// A row from column names and one value per column.
    public init(columnNames: [String], values: [SQLValue]) {
        precondition(columnNames.count == values.count, "one value per column")
        self.columnNames = columnNames
        self.values = values
    }

    /// Number of columns.
    public var count: Int { values.count }

    /// The value at a column index (0-based).
    public subscript(index: Int) -> SQLValue { values[index] }

    /// The value of the first column with this name (case-insensitive, as SQL names are), or nil.
    public subscript(column: String) -> SQLValue? {
        columnIndex(column).map { values[$0] }
    }

    /// The value at an index converted to `T`, nil when NULL or not convertible.
    public subscript<T: SQLValueConvertible>(index: Int, as type: T.Type) -> T? {
        T(sqlValue: values[index])
    }

    /// The value of a named column converted to `T`, nil when absent, NULL or not convertible.
    public subscript<T: SQLValueConvertible>(column: String, as type: T.Type) -> T? {
        self[column].flatMap { T(sqlValue: $0) }
    }

    /// The index of the first column with this name.
    public func columnIndex(_ name: String) -> Int? {
        columnNames.firstIndex(of: name)
            ?? columnNames.firstIndex { $0.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// The named column as Int64; nil when absent, NULL or of another type.
    public func int64(_ column: String) -> Int64? { self[column, as: Int64.self] }
    /// The named column as Int; nil when absent, NULL or of another type.
    public func int(_ column: String) -> Int? { self[column, as: Int.self] }
    /// The named column as Double (integers widen); nil when absent, NULL or of another type.
    public func double(_ column: String) -> Double? { self[column, as: Double.self] }
    /// The named column as text; nil when absent, NULL or of another type.
    public func string(_ column: String) -> String? { self[column, as: String.self] }
    /// The named column as bytes (text reads as its UTF-8); nil when absent, NULL or of another type.
    public func blob(_ column: String) -> [UInt8]? { self[column, as: [UInt8].self] }
    /// The named column as Data; nil when absent, NULL or of another type.
    public func data(_ column: String) -> Data? { self[column, as: Data.self] }
    /// True when the column is NULL or absent.
    public func isNull(_ column: String) -> Bool { self[column]?.isNull ?? true }

    /// The column at `index` as Int64; nil when NULL or of another type.
    public func int64(at index: Int) -> Int64? { self[index, as: Int64.self] }
    /// The column at `index` as Int; nil when NULL or of another type.
    public func int(at index: Int) -> Int? { self[index, as: Int.self] }
    /// The column at `index` as Double (integers widen); nil when NULL or of another type.
    public func double(at index: Int) -> Double? { self[index, as: Double.self] }
    /// The column at `index` as text; nil when NULL or of another type.
    public func string(at index: Int) -> String? { self[index, as: String.self] }
    /// The column at `index` as bytes (text reads as its UTF-8); nil when NULL or of another type.
    public func blob(at index: Int) -> [UInt8]? { self[index, as: [UInt8].self] }
    /// The column at `index` as Data; nil when NULL or of another type.
    public func data(at index: Int) -> Data? { self[index, as: Data.self] }
    /// True when the column at `index` is NULL.
    public func isNull(at index: Int) -> Bool { values[index].isNull }
}
