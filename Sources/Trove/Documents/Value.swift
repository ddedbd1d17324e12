import Foundation
import TroveSQLite

/// A field's value in a document: a scalar, a date, bytes, a vector, or a JSON array or object.
///
/// Literals work where a value is expected:
///
/// ```swift
/// let note: Document = ["title": "Dentist", "year": 2026, "done": false, "tags": ["health"]]
/// let filter = Field("year") >= 2020
/// ```
public enum Value: Hashable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case date(Date)
    case data(Data)
    case vector([Float])
    case array([Value])
    case object([String: Value])

    /// Whether this is `.null`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The integer, when this is `.int` (or a `.double` with an integral value).
    public var intValue: Int64? {
        switch self {
        case .int(let v): v
        case .double(let v): Int64(exactly: v)
        default: nil
        }
    }
    /// The number, when this is `.int` or `.double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let v): v
        default: nil
        }
    }
    /// The text, when this is `.string`.
    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    /// The flag, when this is `.bool`.
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    /// The date, when this is `.date`.
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    /// The bytes, when this is `.data`.
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    /// The vector, when this is `.vector`.
    public var vectorValue: [Float]? { if case .vector(let v) = self { v } else { nil } }
    /// The elements, when this is `.array`.
    public var arrayValue: [Value]? { if case .array(let v) = self { v } else { nil } }
    /// The members, when this is `.object`.
    public var objectValue: [String: Value]? { if case .object(let v) = self { v } else { nil } }

    /// A short name of the value's kind, for error messages.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "integer"
        case .double: "real"
        case .string: "text"
        case .date: "date"
        case .data: "data"
        case .vector: "vector"
        case .array: "array"
        case .object: "object"
        }
    }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: Value...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Value)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let v): String(v)
        case .int(let v): String(v)
        case .double(let v): String(v)
        case .string(let v): "\"\(v)\""
        case .date(let v): v.formatted(.iso8601)
        case .data(let v): "<\(v.count) bytes>"
        case .vector(let v): "<vector of \(v.count)>"
        case .array, .object: (try? JSONCoding.text(self)) ?? "<json>"
        }
    }
}

// MARK: Vectors as blobs

enum VectorBlob {
    /// Little-endian float32, the native layout on every supported platform.
    static func bytes(_ vector: [Float]) -> [UInt8] {
        vector.withUnsafeBytes { Array($0) }
    }

    static func vector(_ bytes: UnsafeRawBufferPointer, dimension: Int) -> [Float]? {
        guard bytes.count == 4 * dimension else { return nil }
        let vector = [Float](unsafeUninitializedCapacity: dimension) { buffer, count in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: bytes)
            count = dimension
        }
        return vector.allSatisfy(\.isFinite) ? vector : nil
    }
}
