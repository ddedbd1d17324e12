import CLibPQ
import Foundation

/// The rows of one query, in binary format. Owns its `PGresult` (freed on deinit); columns are
/// read by position with their type checked, so a schema of another version is a typed error
/// rather than misread bytes.
final class PostgresResult {
    // Owned: PQclear on deinit. Its memory (all rows) is held until then.
    private let result: OpaquePointer

    init(owning result: OpaquePointer) { self.result = result }

    deinit { PQclear(result) }

    /// The number of rows.
    var count: Int { Int(PQntuples(result)) }

    /// The number of columns.
    var columnCount: Int { Int(PQnfields(result)) }

    /// Throws unless the result has these column types, in order.
    func expectColumns(_ types: [UInt32]) throws {
        let actual = (0..<columnCount).map { PQftype(result, Int32($0)) }
        guard actual == types else {
            throw PostgresError.unexpectedResult("columns of types \(actual), expected \(types)")
        }
    }

    func isNull(_ row: Int, _ column: Int) -> Bool {
        PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// A fixed-width column in network byte order: int8 as `Int64`, int4 as `Int32`, bool as
    /// `UInt8` (non-zero for true). Throws unless the value has exactly `T`'s width.
    func integer<T: FixedWidthInteger>(_ row: Int, _ column: Int, as type: T.Type) throws -> T {
        let bytes = try raw(row, column)
        guard bytes.count == MemoryLayout<T>.size else {
            throw PostgresError.unexpectedResult(
                "\(bytes.count) bytes for a \(MemoryLayout<T>.size)-byte \(T.self)")
        }
        return bytes.reduce(T.zero) { $0 << 8 | T(truncatingIfNeeded: $1) }
    }

    /// A text (or name) column.
    func string(_ row: Int, _ column: Int) throws -> String {
        String(decoding: try raw(row, column), as: UTF8.self)
    }

    /// A bytea column: the bytes as stored.
    func data(_ row: Int, _ column: Int) throws -> Data { Data(try raw(row, column)) }

    /// The value's bytes, valid while this result lives.
    private func raw(_ row: Int, _ column: Int) throws -> UnsafeRawBufferPointer {
        guard row < count, column < columnCount else {
            throw PostgresError.unexpectedResult("no value at row \(row), column \(column)")
        }
        guard !isNull(row, column) else {
            throw PostgresError.unexpectedResult("NULL at row \(row), column \(column)")
        }
        let length = Int(PQgetlength(result, Int32(row), Int32(column)))
        guard let pointer = PQgetvalue(result, Int32(row), Int32(column)) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: pointer, count: length)
    }
}
