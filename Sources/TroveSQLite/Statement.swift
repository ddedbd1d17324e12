import CSQLite
import Foundation

/// A prepared SQL statement: bind values, step through rows, read typed columns.
///
/// A statement belongs to the connection that prepared it and must be used on the same
/// thread/actor. Not `Sendable`: it wraps a `sqlite3_stmt*`.
///
/// ```swift
/// let insert = try connection.prepare("INSERT INTO t(a) VALUES (?)")
/// for a in 0..<10 { try insert.execute([.integer(Int64(a))]) }
/// ```
public final class Statement {
    // Owned: finalized in deinit. The connection handle stays valid at least as long as this
    // statement because connections close with sqlite3_close_v2, which defers the close until the
    // last statement is finalized.
    let handle: OpaquePointer
    let db: OpaquePointer
    /// The SQL text this statement was prepared from.
    public let sql: String

    init(db: OpaquePointer, sql: String) throws {
        var statement: OpaquePointer?
        // The tail pointer points into the C string, so it must be read while the string is alive.
        let (rc, rest): (Int32, String) = sql.withCString { cSQL in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(
                db, cSQL, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            return (rc, tail.map { String(cString: $0) } ?? "")
        }
        guard rc == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw SQLiteError.from(rc, db: db, sql: sql)
        }
        guard let statement else {
            // Empty SQL or only comments: nothing to run.
            throw SQLiteError(extendedCode: .misuse, message: "empty SQL statement", sql: sql)
        }
        if !rest.allSatisfy({ $0.isWhitespace || $0 == ";" }) {
            sqlite3_finalize(statement)
            throw SQLiteError(
                extendedCode: .misuse,
                message: "more than one statement; use Connection.execute(script:) for scripts",
                sql: sql)
        }
        self.handle = statement
        self.db = db
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// The number of `?` parameters.
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }
    /// The number of result columns.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }
    /// The result column names.
    public var columnNames: [String] {
        (0..<Int32(columnCount)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }
    /// Whether the statement only reads (`sqlite3_stmt_readonly`).
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    // MARK: Binding

    /// Resets the statement and binds values to its parameters in order.
    ///
    /// - Throws: ``SQLiteError`` with code `.range` when the count differs from ``parameterCount``.
    public func bind(_ values: [SQLValue]) throws {
        reset()
        guard values.count == parameterCount else {
            throw SQLiteError(
                extendedCode: .range,
                message: "statement has \(parameterCount) parameters, \(values.count) values given",
                sql: sql)
        }
        for (offset, value) in values.enumerated() { try bind(value, at: offset + 1) }
    }

    /// Binds one value to the 1-based parameter `index`.
    public func bind(_ value: SQLValue, at index: Int) throws {
        let i = Int32(index)
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, i)
        case .integer(let v): rc = sqlite3_bind_int64(handle, i, v)
        case .real(let v): rc = sqlite3_bind_double(handle, i, v)
        case .text(let v): rc = bindText(v, at: i)
        case .blob(let v): rc = bindBytes(v, at: i)
        }
        try check(rc)
    }

    /// Binds an integer to the 1-based parameter `index`.
    public func bind(_ value: Int64, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(index), value))
    }
    /// Binds a double to the 1-based parameter `index`.
    public func bind(_ value: Double, at index: Int) throws {
        try check(sqlite3_bind_double(handle, Int32(index), value))
    }
    /// Binds text to the 1-based parameter `index` (copied by SQLite, every byte of it: a NUL
    /// inside the string is stored, not taken as its end).
    public func bind(_ value: String, at index: Int) throws {
        try check(bindText(value, at: Int32(index)))
    }

    private func bindText(_ value: String, at index: Int32) -> Int32 {
        var value = value
        return value.withUTF8 { bytes in
            // An empty buffer may have no address, and a NULL pointer would bind NULL.
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                return sqlite3_bind_text(handle, index, "", 0, trove_sqlite_transient())
            }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                sqlite3_bind_text64(
                    handle, index, $0, sqlite3_uint64(bytes.count), trove_sqlite_transient(),
                    UInt8(SQLITE_UTF8))
            }
        }
    }
    /// Binds NULL to the 1-based parameter `index`.
    public func bindNull(at index: Int) throws {
        try check(sqlite3_bind_null(handle, Int32(index)))
    }

    /// Binds raw bytes (e.g. `[Float]` memory) as a blob without an intermediate array.
    public func bind(bytes: UnsafeRawBufferPointer, at index: Int) throws {
        // Zero-length blobs need a non-nil pointer, or SQLite stores NULL.
        if bytes.isEmpty {
            try check(sqlite3_bind_zeroblob(handle, Int32(index), 0))
        } else {
            try check(
                sqlite3_bind_blob(
                    handle, Int32(index), bytes.baseAddress, Int32(bytes.count),
                    trove_sqlite_transient()))
        }
    }

    private func bindBytes(_ bytes: [UInt8], at index: Int32) -> Int32 {
        if bytes.isEmpty { return sqlite3_bind_zeroblob(handle, index, 0) }
        return bytes.withUnsafeBytes {
            sqlite3_bind_blob(
                handle, index, $0.baseAddress, Int32($0.count), trove_sqlite_transient())
        }
    }

    /// Resets the statement so it can run again; bindings are kept.
    public func reset() { sqlite3_reset(handle) }

    /// Sets every parameter back to NULL.
    public func clearBindings() { sqlite3_clear_bindings(handle) }

    // MARK: Stepping

    /// Advances to the next row. Returns true when a row is available, false when done.
    ///
    /// - Throws: ``SQLiteError``; the statement is reset so it can be reused.
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError.from(rc, db: db, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Binds `values`, runs the statement to completion and resets it.
    public func execute(_ values: [SQLValue] = []) throws {
        try bind(values)
        defer { reset() }
        while try step() {}
    }

    /// Binds `values` and collects every row.
    ///
    /// - Complexity: O(rows × columns); values are copied out of SQLite.
    public func rows(_ values: [SQLValue] = []) throws -> [Row] {
        try bind(values)
        defer { reset() }
        let names = columnNames
        var result: [Row] = []
        while try step() { result.append(Row(columnNames: names, values: currentValues())) }
        return result
    }

    /// Binds `values` and calls `body` for each row, reading columns straight from the statement
    /// (no copies beyond what `body` reads).
    public func forEachRow(_ values: [SQLValue] = [], _ body: (Statement) throws -> Void) throws {
        try bind(values)
        defer { reset() }
        while try step() { try body(self) }
    }

    /// The current row's values.
    public func currentValues() -> [SQLValue] {
        (0..<columnCount).map { value(at: $0) }
    }

    // MARK: Column reads (valid after `step()` returned true)

    /// The column's value with its storage type.
    public func value(at column: Int) -> SQLValue {
        let i = Int32(column)
        switch sqlite3_column_type(handle, i) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, i))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, i))
        case SQLITE_TEXT: return .text(string(at: column) ?? "")
        case SQLITE_BLOB: return .blob(blob(at: column) ?? [])
        default: return .null
        }
    }

    /// Whether the current row's column holds exactly `value`: the same storage type and the
    /// same bytes (reals compared bit for bit), read in place without copying the column.
    ///
    /// ```swift
    /// let changed = !statement.holds(.text(newTitle), at: 2)
    /// ```
    ///
    /// - Parameters:
    ///   - value: the value to compare with.
    ///   - column: the 0-based column of the current row.
    /// - Returns: true when storing `value` would leave the column as it is.
    /// - Complexity: O(n) in the value's length.
    public func holds(_ value: SQLValue, at column: Int) -> Bool {
        let i = Int32(column)
        let type = sqlite3_column_type(handle, i)
        switch value {
        case .null: return type == SQLITE_NULL
        case .integer(let v): return type == SQLITE_INTEGER && sqlite3_column_int64(handle, i) == v
        case .real(let v):
            return type == SQLITE_FLOAT
                && sqlite3_column_double(handle, i).bitPattern == v.bitPattern
        case .text(var v):
            guard type == SQLITE_TEXT, let text = sqlite3_column_text(handle, i) else {
                return false
            }
            let stored = UnsafeRawBufferPointer(
                start: text, count: Int(sqlite3_column_bytes(handle, i)))
            return v.withUTF8 {
                $0.count == stored.count
                    && ($0.isEmpty || memcmp($0.baseAddress!, stored.baseAddress!, $0.count) == 0)
            }
        case .blob(let v):
            guard type == SQLITE_BLOB else { return false }
            let count = Int(sqlite3_column_bytes(handle, i))
            guard count == v.count else { return false }
            guard count > 0, let pointer = sqlite3_column_blob(handle, i) else { return count == 0 }
            return v.withUnsafeBytes { memcmp($0.baseAddress!, pointer, count) == 0 }
        }
    }

    /// Whether the current row's column is NULL.
    public func isNull(at column: Int) -> Bool {
        sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL
    }
    /// The column as an integer (SQLite's conversion rules; NULL reads as 0).
    public func int64(at column: Int) -> Int64 { sqlite3_column_int64(handle, Int32(column)) }
    /// The column as a double (SQLite's conversion rules; NULL reads as 0).
    public func double(at column: Int) -> Double { sqlite3_column_double(handle, Int32(column)) }

    /// The column as text, nil when NULL.
    public func string(at column: Int) -> String? {
        let i = Int32(column)
        guard let text = sqlite3_column_text(handle, i) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, i))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as bytes, nil when NULL.
    public func blob(at column: Int) -> [UInt8]? {
        let i = Int32(column)
        if sqlite3_column_type(handle, i) == SQLITE_NULL { return nil }
        let pointer = sqlite3_column_blob(handle, i)
        let count = Int(sqlite3_column_bytes(handle, i))
        guard let pointer, count > 0 else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// The column as `Data`, nil when NULL.
    public func data(at column: Int) -> Data? { blob(at: column).map { Data($0) } }

    /// The column's bytes in place (text or blob, no copy), nil when NULL: valid until the
    /// statement moves on or the column is read as another type. Not generic, unlike
    /// ``withBlob(at:_:)``, so a caller in another module pays no generic dispatch per row.
    package func bytes(at column: Int) -> UnsafeRawBufferPointer? {
        let i = Int32(column)
        if sqlite3_column_type(handle, i) == SQLITE_NULL { return nil }
        let pointer = sqlite3_column_blob(handle, i)
        return UnsafeRawBufferPointer(
            start: pointer, count: pointer == nil ? 0 : Int(sqlite3_column_bytes(handle, i)))
    }

    /// Calls `body` with the column's bytes in place (no copy), or nil when NULL.
    /// The buffer is valid only inside `body`.
    public func withBlob<T>(at column: Int, _ body: (UnsafeRawBufferPointer?) throws -> T) rethrows
        -> T
    {
        let i = Int32(column)
        if sqlite3_column_type(handle, i) == SQLITE_NULL { return try body(nil) }
        let pointer = sqlite3_column_blob(handle, i)
        let count = Int(sqlite3_column_bytes(handle, i))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    private func check(_ rc: Int32) throws {
        guard rc == SQLITE_OK else { throw SQLiteError.from(rc, db: db, sql: sql) }
    }
}
