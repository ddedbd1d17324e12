import Foundation

/// A query parameter, sent in PostgreSQL's binary format: payloads travel as raw bytes (no hex
/// text doubling their size) and arrays as one value, so a push of a thousand change sets is one
/// round trip with three array parameters.
enum PostgresValue: Sendable {
    case text(String)
    case int64(Int64)
    case int32(Int32)
    case bytea(Data)
    case textArray([String])
    case int64Array([Int64])
    case byteaArray([Data])

    /// The type OID the server reads the bytes as (pg_type.oid; stable across versions).
    var typeOID: UInt32 {
        switch self {
        case .text: return PostgresType.text
        case .int64: return PostgresType.int8
        case .int32: return PostgresType.int4
        case .bytea: return PostgresType.bytea
        case .textArray: return PostgresType.textArray
        case .int64Array: return PostgresType.int8Array
        case .byteaArray: return PostgresType.byteaArray
        }
    }

    /// The value in binary format.
    var binary: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .text(let string): out.append(contentsOf: string.utf8)
        case .int64(let value): out.appendBigEndian(value)
        case .int32(let value): out.appendBigEndian(value)
        case .bytea(let value): out.append(contentsOf: value)
        case .textArray(let values):
            Self.appendArray(&out, element: PostgresType.text, values.map { Array($0.utf8) })
        case .int64Array(let values):
            out.reserveCapacity(20 + values.count * 12)
            Self.appendArrayHeader(&out, element: PostgresType.int8, count: values.count)
            for value in values {
                out.appendBigEndian(Int32(8))
                out.appendBigEndian(value)
            }
        case .byteaArray(let values):
            out.reserveCapacity(20 + values.reduce(0) { $0 + 4 + $1.count })
            Self.appendArrayHeader(&out, element: PostgresType.bytea, count: values.count)
            for value in values {
                out.appendBigEndian(Int32(value.count))
                out.append(contentsOf: value)
            }
        }
        return out
    }

    /// A one-dimensional array without nulls: dimensions, flags, element type, then (for a
    /// non-empty array) its length and lower bound 1 (array_send's layout).
    private static func appendArrayHeader(_ out: inout [UInt8], element: UInt32, count: Int) {
        out.appendBigEndian(Int32(count == 0 ? 0 : 1))
        out.appendBigEndian(Int32(0))
        out.appendBigEndian(element)
        if count > 0 {
            out.appendBigEndian(Int32(count))
            out.appendBigEndian(Int32(1))
        }
    }

    private static func appendArray(_ out: inout [UInt8], element: UInt32, _ values: [[UInt8]]) {
        appendArrayHeader(&out, element: element, count: values.count)
        for value in values {
            out.appendBigEndian(Int32(value.count))
            out.append(contentsOf: value)
        }
    }
}

/// The type OIDs Trove sends and reads (fixed in PostgreSQL's catalog, pg_type.dat).
enum PostgresType {
    static let bool: UInt32 = 16
    static let bytea: UInt32 = 17
    static let int8: UInt32 = 20
    static let int4: UInt32 = 23
    static let text: UInt32 = 25
    static let name: UInt32 = 19
    static let byteaArray: UInt32 = 1001
    static let textArray: UInt32 = 1009
    static let int8Array: UInt32 = 1016
}

extension Array where Element == UInt8 {
    mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
