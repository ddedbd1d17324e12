import Foundation

/// Encodes Codable values into ``Value``s: the fields of a model's document, and the JSON of
/// nested values, arrays and dictionaries inside it.
///
/// Top-level columns keep dates as `.date` and bytes as `.data`; inside JSON, which holds
/// neither, a date is its seconds since 1970 (so dates order and compare as numbers in both
/// places) and bytes are base64 text. URLs are their absolute string, UUIDs lowercase text,
/// Decimals numbers.
final class ValueEncoder: Encoder {
    private enum Entry {
        case value(Value)
        case nested(ValueEncoder)

        var resolved: Value {
            switch self {
            case .value(let v): v
            case .nested(let encoder): encoder.value
            }
        }
    }
    private final class Members { var entries: [String: Entry] = [:] }
    private final class Elements { var entries: [Entry] = [] }
    private enum Storage {
        case empty
        case single(Entry)
        case object(Members)
        case array(Elements)
    }

    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    private var storage: Storage = .empty
    /// Whether this level's scalars go into JSON (false only for a model's own fields).
    let inJSON: Bool

    init(inJSON: Bool = true) { self.inJSON = inJSON }

    /// The encoded value (`.null` when nothing was encoded).
    var value: Value {
        switch storage {
        case .empty: .null
        case .single(let entry): entry.resolved
        case .object(let members): .object(members.entries.mapValues(\.resolved))
        case .array(let elements): .array(elements.entries.map(\.resolved))
        }
    }

    /// The JSON value of `value`.
    static func json<T: Encodable>(_ value: T) throws -> Value {
        if let scalar = scalar(value, inJSON: true) { return scalar }
        let encoder = ValueEncoder()
        try value.encode(to: encoder)
        return encoder.value
    }

    /// The value of a type with a fixed representation (dates, data, URLs, UUIDs, decimals and
    /// the plain scalars), nil for anything else.
    static func scalar<T>(_ value: T, inJSON: Bool) -> Value? {
        switch value {
        case let v as String: return .string(v)
        case let v as Int: return .int(Int64(v))
        case let v as Int64: return .int(v)
        case let v as Double: return .double(v)
        case let v as Bool: return .bool(v)
        case let v as Date: return inJSON ? .double(v.timeIntervalSince1970) : .date(v)
        case let v as Data: return inJSON ? .string(v.base64EncodedString()) : .data(v)
        case let v as URL: return .string(v.absoluteString)
        case let v as UUID: return .string(v.uuidString.lowercased())
        case let v as Decimal: return .double(Double(v.description) ?? .nan)
        case let v as Float: return .double(Double(v))
        case let v as Int32: return .int(Int64(v))
        case let v as Int16: return .int(Int64(v))
        case let v as Int8: return .int(Int64(v))
        case let v as UInt8: return .int(Int64(v))
        case let v as UInt16: return .int(Int64(v))
        case let v as UInt32: return .int(Int64(v))
        case let v as UInt: return Int64(exactly: v).map(Value.int) ?? .double(Double(v))
        case let v as UInt64: return Int64(exactly: v).map(Value.int) ?? .double(Double(v))
        case let v as any LazyFieldValue: return v.storedValue(inJSON: inJSON)
        default: return nil
        }
    }

    private func entry<T: Encodable>(_ value: T) throws -> Entry {
        if let scalar = Self.scalar(value, inJSON: inJSON) { return .value(scalar) }
        let child = ValueEncoder()
        child.codingPath = codingPath
        try value.encode(to: child)
        return .nested(child)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let members: Members
        if case .object(let existing) = storage {
            members = existing
        } else {
            members = Members()
            storage = .object(members)
        }
        return KeyedEncodingContainer(Keyed<Key>(encoder: self, members: members))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let elements: Elements
        if case .array(let existing) = storage {
            elements = existing
        } else {
            elements = Elements()
            storage = .array(elements)
        }
        return Unkeyed(encoder: self, elements: elements)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { Single(encoder: self) }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ValueEncoder
        let members: Members
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil(forKey key: Key) throws {
            members.entries[key.stringValue] = .value(.null)
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        private func encodeValue<T: Encodable>(_ value: T, forKey key: Key) throws {
            members.entries[key.stringValue] = try encoder.entry(value)
        }
        // @forward(keyed-encode) begin (one per primitive type, each forwarding to the generic helper)
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: String, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Double, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Float, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            try encodeValue(value, forKey: key)
        }
        // @forward end

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        )
            -> KeyedEncodingContainer<NestedKey>
        {
            let child = ValueEncoder()
            members.entries[key.stringValue] = .nested(child)
            return child.container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = ValueEncoder()
            members.entries[key.stringValue] = .nested(child)
            return child.unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            let child = ValueEncoder()
            members.entries["super"] = .nested(child)
            return child
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            let child = ValueEncoder()
            members.entries[key.stringValue] = .nested(child)
            return child
        }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let encoder: ValueEncoder
        let elements: Elements
        var codingPath: [any CodingKey] { encoder.codingPath }
        var count: Int { elements.entries.count }

        mutating func encodeNil() throws { elements.entries.append(.value(.null)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encodeValue(value) }
        private func encodeValue<T: Encodable>(_ value: T) throws {
            elements.entries.append(try encoder.entry(value))
        }
        // @forward(unkeyed-encode) begin (one per primitive type, each forwarding to the generic helper)
        mutating func encode(_ value: Bool) throws { try encodeValue(value) }
        mutating func encode(_ value: String) throws { try encodeValue(value) }
        mutating func encode(_ value: Double) throws { try encodeValue(value) }
        mutating func encode(_ value: Float) throws { try encodeValue(value) }
        mutating func encode(_ value: Int) throws { try encodeValue(value) }
        mutating func encode(_ value: Int8) throws { try encodeValue(value) }
        mutating func encode(_ value: Int16) throws { try encodeValue(value) }
        mutating func encode(_ value: Int32) throws { try encodeValue(value) }
        mutating func encode(_ value: Int64) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt8) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt16) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt32) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt64) throws { try encodeValue(value) }
        // @forward end

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<
                NestedKey
            >
        {
            let child = ValueEncoder()
            elements.entries.append(.nested(child))
            return child.container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let child = ValueEncoder()
            elements.entries.append(.nested(child))
            return child.unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            let child = ValueEncoder()
            elements.entries.append(.nested(child))
            return child
        }
    }

    private struct Single: SingleValueEncodingContainer {
        let encoder: ValueEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil() throws { encoder.storage = .single(.value(.null)) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encodeValue(value) }
        private func encodeValue<T: Encodable>(_ value: T) throws {
            encoder.storage = .single(try encoder.entry(value))
        }
        // @forward(single-encode) begin (one per primitive type, each forwarding to the generic helper)
        mutating func encode(_ value: Bool) throws { try encodeValue(value) }
        mutating func encode(_ value: String) throws { try encodeValue(value) }
        mutating func encode(_ value: Double) throws { try encodeValue(value) }
        mutating func encode(_ value: Float) throws { try encodeValue(value) }
        mutating func encode(_ value: Int) throws { try encodeValue(value) }
        mutating func encode(_ value: Int8) throws { try encodeValue(value) }
        mutating func encode(_ value: Int16) throws { try encodeValue(value) }
        mutating func encode(_ value: Int32) throws { try encodeValue(value) }
        mutating func encode(_ value: Int64) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt8) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt16) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt32) throws { try encodeValue(value) }
        mutating func encode(_ value: UInt64) throws { try encodeValue(value) }
        // @forward end
    }
}
