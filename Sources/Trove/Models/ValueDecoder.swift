import Foundation

/// Decodes Codable values from ``Value``s: a model from its document's fields, and nested
/// values, arrays and dictionaries from their JSON. The mirror of ``ValueEncoder``.
struct ValueDecoder: Decoder {
    let value: Value
    /// Whether the value was read from JSON (dates as seconds since 1970, bytes as base64).
    let inJSON: Bool
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(_ value: Value, inJSON: Bool = true, codingPath: [any CodingKey] = []) {
        self.value = value
        self.inJSON = inJSON
        self.codingPath = codingPath
    }

    static func decode<T: Decodable>(
        _ type: T.Type, from value: Value, inJSON: Bool, codingPath: [any CodingKey]
    )
        throws -> T
    {
        if let scalar = try scalar(type, from: value, inJSON: inJSON, codingPath: codingPath) {
            return scalar
        }
        return try T(from: ValueDecoder(value, inJSON: inJSON, codingPath: codingPath))
    }

    /// The value as a type with a fixed representation; nil when `T` is not one of them.
    static func scalar<T>(
        _ type: T.Type, from value: Value, inJSON: Bool, codingPath: [any CodingKey]
    ) throws -> T? {
        func fail() -> DecodingError {
            .typeMismatch(
                T.self,
                .init(codingPath: codingPath, debugDescription: "found a \(value.kindName) value"))
        }
        let result: Any
        switch type {
        case is String.Type:
            guard case .string(let v) = value else { throw fail() }
            result = v
        case is Int.Type:
            guard let v = value.intValue, let i = Int(exactly: v) else { throw fail() }
            result = i
        case is Int64.Type:
            guard let v = value.intValue else { throw fail() }
            result = v
        case is Double.Type:
            guard let v = value.doubleValue else { throw fail() }
            result = v
        case is Bool.Type:
            switch value {
            case .bool(let v): result = v
            case .int(let v) where v == 0 || v == 1: result = v == 1
            default: throw fail()
            }
        case is Date.Type:
            switch value {
            case .date(let v): result = v
            case .int, .double: result = Date(timeIntervalSince1970: value.doubleValue!)
            default: throw fail()
            }
        case is Data.Type:
            switch value {
            case .data(let v): result = v
            case .string(let s):
                guard let v = Data(base64Encoded: s) else { throw fail() }
                result = v
            default: throw fail()
            }
        case is URL.Type:
            guard case .string(let s) = value, let v = URL(string: s) else { throw fail() }
            result = v
        case is UUID.Type:
            guard case .string(let s) = value, let v = UUID(uuidString: s) else { throw fail() }
            result = v
        case is Decimal.Type:
            switch value {
            case .int(let v): result = Decimal(v)
            case .double(let v):
                guard let d = Decimal(string: "\(v)") else { throw fail() }
                result = d
            default: throw fail()
            }
        case is [Float].Type:
            switch value {
            case .vector(let v): result = v
            case .array(let items):
                result = try items.map { item -> Float in
                    guard let d = item.doubleValue else { throw fail() }
                    return Float(d)
                }
            default: throw fail()
            }
        case is Float.Type:
            guard let v = value.doubleValue else { throw fail() }
            result = Float(v)
        default:
            guard let integer = try integer(type, from: value, fail: fail) else { return nil }
            result = integer
        }
        return (result as! T)
    }

    private static func integer<T>(_ type: T.Type, from value: Value, fail: () -> DecodingError)
        throws -> Any?
    {
        func exact<I: FixedWidthInteger>(_: I.Type) throws -> I {
            guard let v = value.intValue, let i = I(exactly: v) else { throw fail() }
            return i
        }
        return switch type {
        case is Int32.Type: try exact(Int32.self)
        case is Int16.Type: try exact(Int16.self)
        case is Int8.Type: try exact(Int8.self)
        case is UInt.Type: try exact(UInt.self)
        case is UInt64.Type: try exact(UInt64.self)
        case is UInt32.Type: try exact(UInt32.self)
        case is UInt16.Type: try exact(UInt16.self)
        case is UInt8.Type: try exact(UInt8.self)
        default: nil
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw DecodingError.typeMismatch(
                [String: Any].self,
                .init(codingPath: codingPath, debugDescription: "found a \(value.kindName) value"))
        }
        return KeyedDecodingContainer(
            Keyed<Key>(members: members, inJSON: inJSON, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch value {
        case .array(let items): return Unkeyed(items: items, inJSON: inJSON, codingPath: codingPath)
        case .vector(let items):
            return Unkeyed(
                items: items.map { .double(Double($0)) }, inJSON: inJSON, codingPath: codingPath)
        default:
            throw DecodingError.typeMismatch(
                [Any].self,
                .init(codingPath: codingPath, debugDescription: "found a \(value.kindName) value"))
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let members: [String: Value]
        let inJSON: Bool
        let codingPath: [any CodingKey]
        var allKeys: [Key] { members.keys.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool { members[key.stringValue]?.isNull ?? true }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try decodeValueIfPresent(type, forKey: key)
        }

        private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let value = members[key.stringValue] else {
                throw DecodingError.keyNotFound(
                    key,
                    .init(
                        codingPath: codingPath, debugDescription: "no value for \(key.stringValue)")
                )
            }
            return try ValueDecoder.decode(
                type, from: value, inJSON: inJSON, codingPath: codingPath + [key])
        }

        private func decodeValueIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws
            -> T?
        {
            guard let value = members[key.stringValue], !value.isNull else { return nil }
            return try ValueDecoder.decode(
                type, from: value, inJSON: inJSON, codingPath: codingPath + [key])
        }

        // @forward(keyed-decode) begin (one per primitive type, each forwarding to the generic helper)
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
            try decodeValueIfPresent(type, forKey: key)
        }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
            try decodeValueIfPresent(type, forKey: key)
        }
        // @forward end

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
            throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try ValueDecoder(
                members[key.stringValue] ?? .null, inJSON: inJSON, codingPath: codingPath + [key]
            )
            .container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ValueDecoder(
                members[key.stringValue] ?? .null, inJSON: inJSON, codingPath: codingPath + [key]
            )
            .unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            ValueDecoder(members["super"] ?? .null, inJSON: inJSON, codingPath: codingPath)
        }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            ValueDecoder(
                members[key.stringValue] ?? .null, inJSON: inJSON, codingPath: codingPath + [key])
        }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let items: [Value]
        let inJSON: Bool
        let codingPath: [any CodingKey]
        var currentIndex = 0
        var count: Int? { items.count }
        var isAtEnd: Bool { currentIndex >= items.count }

        init(items: [Value], inJSON: Bool, codingPath: [any CodingKey]) {
            self.items = items
            self.inJSON = inJSON
            self.codingPath = codingPath
        }

        private struct Index: CodingKey {
            var intValue: Int?
            var stringValue: String { "\(intValue!)" }
            init(_ i: Int) { intValue = i }
            init?(stringValue: String) { nil }
            init?(intValue: Int) { self.intValue = intValue }
        }

        private mutating func next() throws -> (Value, [any CodingKey]) {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    Any.self, .init(codingPath: codingPath, debugDescription: "no more elements"))
            }
            defer { currentIndex += 1 }
            return (items[currentIndex], codingPath + [Index(currentIndex)])
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, items[currentIndex].isNull else { return false }
            currentIndex += 1
            return true
        }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
        private mutating func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, path) = try next()
            return try ValueDecoder.decode(type, from: value, inJSON: inJSON, codingPath: path)
        }
        // @forward(unkeyed-decode) begin (one per primitive type, each forwarding to the generic helper)
        mutating func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
        mutating func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
        mutating func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
        mutating func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
        mutating func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
        mutating func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
        mutating func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
        mutating func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
        mutating func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
        mutating func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
        mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
        mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
        mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
        mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
        // @forward end

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            let (value, path) = try next()
            return try ValueDecoder(value, inJSON: inJSON, codingPath: path).container(
                keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let (value, path) = try next()
            return try ValueDecoder(value, inJSON: inJSON, codingPath: path).unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder {
            let (value, path) = try next()
            return ValueDecoder(value, inJSON: inJSON, codingPath: path)
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let decoder: ValueDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool { decoder.value.isNull }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
        private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
            try ValueDecoder.decode(
                type, from: decoder.value, inJSON: decoder.inJSON, codingPath: codingPath)
        }
        // @forward(single-decode) begin (one per primitive type, each forwarding to the generic helper)
        func decode(_ type: Bool.Type) throws -> Bool { try decodeValue(type) }
        func decode(_ type: String.Type) throws -> String { try decodeValue(type) }
        func decode(_ type: Double.Type) throws -> Double { try decodeValue(type) }
        func decode(_ type: Float.Type) throws -> Float { try decodeValue(type) }
        func decode(_ type: Int.Type) throws -> Int { try decodeValue(type) }
        func decode(_ type: Int8.Type) throws -> Int8 { try decodeValue(type) }
        func decode(_ type: Int16.Type) throws -> Int16 { try decodeValue(type) }
        func decode(_ type: Int32.Type) throws -> Int32 { try decodeValue(type) }
        func decode(_ type: Int64.Type) throws -> Int64 { try decodeValue(type) }
        func decode(_ type: UInt.Type) throws -> UInt { try decodeValue(type) }
        func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeValue(type) }
        func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeValue(type) }
        func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeValue(type) }
        func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeValue(type) }
        // @forward end
    }
}
