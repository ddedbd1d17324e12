import Foundation

/// A value SQLite can store: NULL, a 64-bit integer, a double, UTF-8 text or a blob.
///
/// Used to bind `?` parameters and to read columns of any type.
///
/// ```swift
/// try connection.execute("INSERT INTO t(a, b) VALUES (?, ?)", [.integer(1), "one"])
/// ```
public enum SQLValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// An integer value from a Swift `Int`.
    public static func int(_ value: Int) -> SQLValue { .integer(Int64(value)) }
    /// A real value.
    public static func double(_ value: Double) -> SQLValue { .real(value) }
    /// A blob value from `Data`.
    public static func data(_ value: Data) -> SQLValue { .blob([UInt8](value)) }

    /// Whether this is SQL NULL.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The integer, if this is an integer (reals with an exact integer value count too).
    public var int64Value: Int64? {
        switch self {
        case .integer(let v): v
        case .real(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The number, if this is an integer or a real.
    public var doubleValue: Double? {
        switch self {
        case .integer(let v): Double(v)
        case .real(let v): v
        default: nil
        }
    }

    /// The text, if this is text.
    public var stringValue: String? { if case .text(let v) = self { v } else { nil } }

    /// The bytes, if this is a blob (text is returned as its UTF-8 bytes, as SQLite would).
    public var blobValue: [UInt8]? {
        switch self {
        case .blob(let v): v
        case .text(let v): Array(v.utf8)
        default: nil
        }
    }
}

extension SQLValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral, ExpressibleByBooleanLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

extension SQLValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "NULL"
        case .integer(let v): String(v)
        case .real(let v): String(v)
        case .text(let v): "'\(v.replacingOccurrences(of: "'", with: "''"))'"
        case .blob(let v): "x'\(v.map { String(format: "%02x", $0) }.joined())'"
        }
    }
}

/// A Swift type that converts to and from ``SQLValue``.
///
/// ```swift
/// let n: Int64? = row[0, as: Int64.self]
/// ```
public protocol SQLValueConvertible {
    /// The value to bind.
    var sqlValue: SQLValue { get }
    /// Reads the type from a column value; nil when the value has another type or is NULL.
    init?(sqlValue: SQLValue)
}

extension SQLValue: SQLValueConvertible {
    public var sqlValue: SQLValue { self }
    public init?(sqlValue: SQLValue) { self = sqlValue }
}
extension Int64: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.int64Value else { return nil }
        self = v
    }
}
extension Int: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.int64Value, let i = Int(exactly: v) else { return nil }
        self = i
    }
}
extension Int32: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.int64Value, let i = Int32(exactly: v) else { return nil }
        self = i
    }
}
extension Bool: SQLValueConvertible {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.int64Value else { return nil }
        self = v != 0
    }
}
extension Double: SQLValueConvertible {
    public var sqlValue: SQLValue { .real(self) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.doubleValue else { return nil }
        self = v
    }
}
extension Float: SQLValueConvertible {
    public var sqlValue: SQLValue { .real(Double(self)) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.doubleValue else { return nil }
        self = Float(v)
    }
}
extension String: SQLValueConvertible {
    public var sqlValue: SQLValue { .text(self) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.stringValue else { return nil }
        self = v
    }
}
extension Array: SQLValueConvertible where Element == UInt8 {
    public var sqlValue: SQLValue { .blob(self) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.blobValue else { return nil }
        self = v
    }
}
extension Data: SQLValueConvertible {
    public var sqlValue: SQLValue { .blob([UInt8](self)) }
    public init?(sqlValue: SQLValue) {
        guard let v = sqlValue.blobValue else { return nil }
        self = Data(v)
    }
}
extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
    public init?(sqlValue: SQLValue) {
        if sqlValue.isNull {
            self = .none
            return
        }
        guard let v = Wrapped(sqlValue: sqlValue) else { return nil }
        self = .some(v)
    }
}
