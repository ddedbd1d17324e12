import CSQLite

/// A scalar SQL function of numbers: receives its arguments as doubles and returns a double, or
/// nil for SQL NULL. Called only with non-null arguments (any NULL argument gives NULL).
public typealias SQLNumericFunction =
    @Sendable (_ arguments: UnsafeBufferPointer<Double>) -> Double?

extension Connection {
    /// Registers a deterministic scalar function of numbers under `name` on this connection.
    ///
    /// Only this connection knows it: schema objects that other connections (or the `sqlite3`
    /// shell) run, such as triggers and CHECK constraints, must not call it.
    ///
    /// ```swift
    /// try connection.registerFunction(named: "half", argumentCount: 1) { $0[0] / 2 }
    /// let half = try connection.scalar("SELECT half(3)")   // .real(1.5)
    /// ```
    ///
    /// - Parameters:
    ///   - name: The SQL name (registering it again replaces it).
    ///   - argumentCount: How many arguments it takes (1...8).
    ///   - body: The function.
    /// - Throws: ``SQLiteError`` when the connection is closed or SQLite refuses the name.
    public func registerFunction(
        named name: String, argumentCount: Int, _ body: @escaping SQLNumericFunction
    ) throws {
        guard let handle else {
            throw SQLiteError(extendedCode: .misuse, message: "the connection is closed")
        }
        precondition((1...8).contains(argumentCount), "1 to 8 arguments")
        // Owned by SQLite once passed: released by `numericFunctionDestroy` when the connection
        // closes, the name is registered again, or registration fails (SQLite calls it then too).
        let box = Unmanaged.passRetained(NumericFunctionBox(body)).toOpaque()
        let rc = sqlite3_create_function_v2(
            handle, name, Int32(argumentCount), SQLITE_UTF8 | SQLITE_DETERMINISTIC, box,
            numericFunctionCall, nil, nil, numericFunctionDestroy)
        guard rc == SQLITE_OK else {
            throw SQLiteError(
                extendedCode: ResultCode(rawValue: rc),
                message: "could not register the SQL function \(name)")
        }
    }
}

private final class NumericFunctionBox {
    let body: SQLNumericFunction
    init(_ body: @escaping SQLNumericFunction) { self.body = body }
}

private func numericFunctionCall(
    _ context: OpaquePointer?, _ count: Int32, _ values: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let context, let values, let data = sqlite3_user_data(context) else { return }
    let function = Unmanaged<NumericFunctionBox>.fromOpaque(data).takeUnretainedValue()
    // A fixed stack buffer: the function runs once per row, so no allocation per call.
    withUnsafeTemporaryAllocation(of: Double.self, capacity: Int(count)) { buffer in
        for i in 0..<Int(count) {
            guard sqlite3_value_type(values[i]) != SQLITE_NULL else {
                sqlite3_result_null(context)
                return
            }
            buffer[i] = sqlite3_value_double(values[i])
        }
        if let result = function.body(UnsafeBufferPointer(buffer)) {
            sqlite3_result_double(context, result)
        } else {
            sqlite3_result_null(context)
        }
    }
}

private func numericFunctionDestroy(_ data: UnsafeMutableRawPointer?) {
    guard let data else { return }
    Unmanaged<NumericFunctionBox>.fromOpaque(data).release()
}

extension Connection {
    /// Whether a write transaction is open on this connection (`BEGIN IMMEDIATE`, or a deferred
    /// transaction that has written): its uncommitted changes are visible only here.
    public var isInWriteTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_txn_state(handle, nil) == SQLITE_TXN_WRITE
    }
}
