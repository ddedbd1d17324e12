import Foundation

/// How one property of a model is stored, as seen by ``ShapeRecorder``.
enum PropertyKind: Hashable, Sendable {
    case text, integer, real, bool, date, data, url, uuid, decimal
    /// `[Float]`: JSON unless declared a vector field.
    case floats
    /// Anything with keys or elements (nested values, arrays, dictionaries), stored as JSON.
    case json
}

/// One top-level property recorded from a model's `init(from:)`.
struct RecordedProperty: Hashable, Sendable {
    var name: String
    var kind: PropertyKind
    var isOptional: Bool
}

/// A decoder that decodes nothing real: it hands every `init(from:)` placeholder values and
/// records which keys were asked for, with which types and whether through `decodeIfPresent`.
/// Decoding a model type with it once gives the model's Codable shape (its schema), with no
/// instance and no macro.
///
/// RawRepresentable enums cannot be built from a placeholder raw value; their first case is used
/// (`CaseIterable`), or else the all-zero bit pattern, which for a payload-free enum of at most
/// two bytes is its first case.
final class ShapeRecorder: Decoder {
    enum Shape {
        case none, keyed, unkeyed
        case single(PropertyKind)
    }

    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] = [:]
    var shape: Shape = .none
    var properties: [RecordedProperty] = []
    let depth: Int

    init(depth: Int = 0) { self.depth = depth }

    /// The kind a type is stored as, and a placeholder value of it.
    static func record<T: Decodable>(_ type: T.Type, depth: Int) throws -> (
        value: T, kind: PropertyKind
    ) {
        if let special = special(type) { return special }
        guard depth < 32 else {
            throw TroveError.invalidModel(
                type: String(describing: T.self),
                reason: "nested more than 32 levels (a recursive type?)")
        }
        let child = ShapeRecorder(depth: depth + 1)
        let kind: () -> PropertyKind = {
            switch child.shape {
            case .single(let kind): kind
            case .none, .keyed, .unkeyed: .json
            }
        }
        do {
            return (try T(from: child), kind())
        } catch {
            guard T.self is any RawRepresentable.Type, case .single = child.shape else {
                throw error
            }
            if let iterable = T.self as? any CaseIterable.Type,
                let first = firstCase(iterable) as? T
            {
                return (first, kind())
            }
            guard MemoryLayout<T>.size <= 2 else { throw error }
            let zero = withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer -> T in
                UnsafeMutableRawBufferPointer(buffer).initializeMemory(as: UInt8.self, repeating: 0)
                return buffer.baseAddress!.pointee
            }
            return (zero, kind())
        }
    }

    private static func firstCase<C: CaseIterable>(_ type: C.Type) -> Any? { C.allCases.first }

    private static func special<T>(_ type: T.Type) -> (value: T, kind: PropertyKind)? {
        let pair: (Any, PropertyKind)
        switch type {
        case is Date.Type: pair = (Date(timeIntervalSince1970: 0), .date)
        case is Data.Type: pair = (Data(), .data)
        case is URL.Type: pair = (URL(string: "trove:placeholder")!, .url)
        case is UUID.Type: pair = (UUID(), .uuid)
        case is Decimal.Type: pair = (Decimal(0), .decimal)
        case is [Float].Type: pair = ([Float](), .floats)
        case is String.Type: pair = ("", .text)
        case is Bool.Type: pair = (false, .bool)
        case is Double.Type: pair = (0.0, .real)
        case is Float.Type: pair = (Float(0), .real)
        default:
            guard let integer = placeholderInteger(type) else { return nil }
            pair = (integer, .integer)
        }
        return (pair.0 as! T, pair.1)
    }

    private static func placeholderInteger<T>(_ type: T.Type) -> Any? {
        switch type {
        case is Int.Type: Int(0)
        case is Int64.Type: Int64(0)
        case is Int32.Type: Int32(0)
        case is Int16.Type: Int16(0)
        case is Int8.Type: Int8(0)
        case is UInt.Type: UInt(0)
        case is UInt64.Type: UInt64(0)
        case is UInt32.Type: UInt32(0)
        case is UInt16.Type: UInt16(0)
        case is UInt8.Type: UInt8(0)
        default: nil
        }
    }

    func record(_ key: any CodingKey, _ kind: PropertyKind, optional: Bool) {
        guard depth == 0, !properties.contains(where: { $0.name == key.stringValue }) else {
            return
        }
        properties.append(RecordedProperty(name: key.stringValue, kind: kind, isOptional: optional))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if case .none = shape { shape = .keyed }
        return KeyedDecodingContainer(Keyed<Key>(recorder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        if case .none = shape { shape = .unkeyed }
        return Unkeyed(recorder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        Single(recorder: self)
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let recorder: ShapeRecorder
        var codingPath: [any CodingKey] { recorder.codingPath }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decodeValue(type, forKey: key)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try decodeValueIfPresent(type, forKey: key)
        }

        private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let (value, kind) = try ShapeRecorder.record(type, depth: recorder.depth)
            // A lazy field's column is null until a fetch that skipped it is saved with a value.
            recorder.record(key, kind, optional: type is any LazyFieldValue.Type)
            return value
        }

        private func decodeValueIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws
            -> T?
        {
            let (value, kind) = try ShapeRecorder.record(type, depth: recorder.depth)
            recorder.record(key, kind, optional: true)
            return value
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
            recorder.record(key, .json, optional: false)
            return KeyedDecodingContainer(
                Keyed<NestedKey>(recorder: ShapeRecorder(depth: recorder.depth + 1)))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            recorder.record(key, .json, optional: false)
            return Unkeyed(recorder: ShapeRecorder(depth: recorder.depth + 1))
        }

        func superDecoder() throws -> any Decoder { ShapeRecorder(depth: recorder.depth + 1) }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            recorder.record(key, .json, optional: false)
            return ShapeRecorder(depth: recorder.depth + 1)
        }
    }

    /// Always empty: arrays and sets are recorded as JSON without looking at their elements.
    private struct Unkeyed: UnkeyedDecodingContainer {
        let recorder: ShapeRecorder
        var codingPath: [any CodingKey] { recorder.codingPath }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }

        private func end() -> DecodingError {
            .valueNotFound(
                Any.self,
                .init(codingPath: codingPath, debugDescription: "shape recording reads no elements")
            )
        }
        mutating func decodeNil() throws -> Bool { throw end() }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
        private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
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
        { throw end() }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw end()
        }
        mutating func superDecoder() throws -> any Decoder { throw end() }
    }

    /// A single value: the type it decodes is the kind the enclosing property is stored as.
    private struct Single: SingleValueDecodingContainer {
        let recorder: ShapeRecorder
        var codingPath: [any CodingKey] { recorder.codingPath }

        func decodeNil() -> Bool { false }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }

        private func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
            let (value, kind) = try ShapeRecorder.record(type, depth: recorder.depth)
            if case .none = recorder.shape { recorder.shape = .single(kind) }
            return value
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
