import Foundation

/// Results as JSON: what `--json` prints and what an MCP tool returns (its structured content,
/// and the same text as its text content) come from one `Encodable` value through here.
///
/// Keys come out in the order the type declares them, and every key it declares is written, a
/// nil as `null`: a result's shape does not depend on its values, and `rank` reads before
/// `content`. (Foundation's `JSONEncoder` orders keys by hash on Linux unless it sorts them.)
/// Numbers are written as the rest of the tool writes them (``JSONValue/serialized()``).
///
/// ```swift
/// let text = try JSONOutput.text(CollectionListResult(collections: []))
/// // {"collections":[]}
/// let back = try JSONOutput.decode(CollectionListResult.self, from: text)
/// ```
enum JSONOutput {
    /// `value` as an ordered JSON tree.
    /// - Throws: what the value's own `encode(to:)` throws (the encoder itself does not).
    static func value<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONTreeEncoder.node(for: value, codingPath: []).value
    }

    /// `value` as compact JSON text, one line.
    static func text<T: Encodable>(_ value: T) throws -> String {
        try Self.value(value).serialized()
    }

    /// Reads a result back (tests compare `--json` with a tool's answer this way).
    /// - Throws: `DecodingError` when `text` does not have the shape of `T`.
    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: Data(text.utf8))
    }

    /// Reads a JSON value into `T` (a tool's arguments).
    static func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try decode(type, from: value.serialized())
    }
}

extension CommandContext {
    /// Prints `result` as one line of JSON on stdout: the whole of `--json` output.
    func printJSON(_ result: some Encodable) throws {
        console.out.write(try JSONOutput.text(result) + "\n")
    }
}

/// The `Encoder` behind ``JSONOutput``: builds a tree of nodes that nested containers fill in
/// after their parent has placed them, then reads it as a ``JSONValue``.
final class JSONTreeEncoder: Encoder {
    /// One value being built. A class, so that a nested container handed out earlier still
    /// fills the node its parent holds.
    final class Node {
        enum Content {
            case empty
            case value(JSONValue)
            case object([(String, Node)])
            case array([Node])
        }
        var content: Content = .empty

        init(_ content: Content = .empty) { self.content = content }

        var value: JSONValue {
            switch content {
            // A type that encodes nothing is an empty object, as with JSONEncoder.
            case .empty: return .object([])
            case .value(let value): return value
            case .object(let members): return .object(members.map { ($0.0, $0.1.value) })
            case .array(let items): return .array(items.map(\.value))
            }
        }

        /// Sets `key`, keeping its first position when it is set again.
        func set(_ key: String, _ node: Node) {
            guard case .object(var members) = content else {
                content = .object([(key, node)])
                return
            }
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = node
            } else {
                members.append((key, node))
            }
            content = .object(members)
        }

        func append(_ node: Node) {
            guard case .array(var items) = content else {
                content = .array([node])
                return
            }
            items.append(node)
            content = .array(items)
        }
    }

    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(node: Node, codingPath: [any CodingKey]) {
        (self.node, self.codingPath) = (node, codingPath)
    }

    /// The node of `value`: scalars and ``JSONValue``s directly, anything else through its
    /// `encode(to:)`. Dates are ISO 8601 text (UTC), as the tool prints them everywhere.
    static func node<T: Encodable>(for value: T, codingPath: [any CodingKey]) throws -> Node {
        switch value {
        case let json as JSONValue: return Node(.value(json))
        case let text as String: return Node(.value(.string(text)))
        case let flag as Bool: return Node(.value(.bool(flag)))
        case let number as Int: return Node(.value(.int(Int64(number))))
        case let number as Int64: return Node(.value(.int(number)))
        case let number as Int32: return Node(.value(.int(Int64(number))))
        case let number as Double: return Node(.value(.double(number)))
        case let number as Float: return Node(.value(.float(number)))
        case let date as Date:
            return Node(.value(.string(ISO8601DateFormatter().string(from: date))))
        default:
            let node = Node()
            try value.encode(to: JSONTreeEncoder(node: node, codingPath: codingPath))
            return node
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([]) }
        return KeyedEncodingContainer(Keyed<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return Unkeyed(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        Single(node: node, codingPath: codingPath)
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let node: Node
        let codingPath: [any CodingKey]

        private func put<T: Encodable>(_ value: T, _ key: Key) throws {
            node.set(
                key.stringValue,
                try JSONTreeEncoder.node(for: value, codingPath: codingPath + [key]))
        }
        private func put<T: Encodable>(optional value: T?, _ key: Key) throws {
            if let value {
                try put(value, key)
            } else {
                node.set(key.stringValue, Node(.value(.null)))
            }
        }

        mutating func encodeNil(forKey key: Key) throws {
            node.set(key.stringValue, Node(.value(.null)))
        }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            try put(value, key)
        }
        mutating func encode(_ value: Bool, forKey key: Key) throws { try put(value, key) }
        mutating func encode(_ value: String, forKey key: Key) throws { try put(value, key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try put(value, key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try put(value, key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try put(value, key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try put(Int(value), key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try put(Int(value), key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try put(Int(value), key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try put(value, key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            try put(Int64(clamping: value), key)
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try put(Int(value), key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try put(Int(value), key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try put(Int(value), key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            try put(Int64(clamping: value), key)
        }

        // Synthesized conformances write optionals with encodeIfPresent, which by default
        // leaves a nil out; here every declared key is written, a nil as null.
        mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
            try put(optional: value.map(Int.init), key)
        }
        mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
            try put(optional: value.map(Int.init), key)
        }
        mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
            try put(optional: value.map(Int.init), key)
        }
        mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
            try put(optional: value, key)
        }
        mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
            try put(optional: value.map { Int64(clamping: $0) }, key)
        }
        mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
            try put(optional: value.map(Int.init), key)
        }
        mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
            try put(optional: value.map(Int.init), key)
        }
        mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
            try put(optional: value.map(Int.init), key)
        }
        mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
            try put(optional: value.map { Int64(clamping: $0) }, key)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            let child = Node(.object([]))
            node.set(key.stringValue, child)
            return KeyedEncodingContainer(
                Keyed<NestedKey>(node: child, codingPath: codingPath + [key]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            let child = Node(.array([]))
            node.set(key.stringValue, child)
            return Unkeyed(node: child, codingPath: codingPath + [key])
        }
        mutating func superEncoder() -> any Encoder { superEncoder(named: "super") }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            superEncoder(named: key.stringValue)
        }
        private func superEncoder(named name: String) -> any Encoder {
            let child = Node()
            node.set(name, child)
            return JSONTreeEncoder(node: child, codingPath: codingPath)
        }
    }

    private struct Unkeyed: UnkeyedEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]
        var count: Int {
            if case .array(let items) = node.content { return items.count }
            return 0
        }

        mutating func encodeNil() throws { node.append(Node(.value(.null))) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encode(generic: value) }
        private func encode<T: Encodable>(generic value: T) throws {
            node.append(try JSONTreeEncoder.node(for: value, codingPath: codingPath))
        }
        mutating func encode(_ value: Bool) throws { try encode(generic: value) }
        mutating func encode(_ value: String) throws { try encode(generic: value) }
        mutating func encode(_ value: Double) throws { try encode(generic: value) }
        mutating func encode(_ value: Float) throws { try encode(generic: value) }
        mutating func encode(_ value: Int) throws { try encode(generic: value) }
        mutating func encode(_ value: Int8) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: Int16) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: Int32) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: Int64) throws { try encode(generic: value) }
        mutating func encode(_ value: UInt) throws { try encode(generic: Int64(clamping: value)) }
        mutating func encode(_ value: UInt8) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: UInt16) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: UInt32) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: UInt64) throws { try encode(generic: Int64(clamping: value)) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
            -> KeyedEncodingContainer<NestedKey>
        {
            let child = Node(.object([]))
            node.append(child)
            return KeyedEncodingContainer(Keyed<NestedKey>(node: child, codingPath: codingPath))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            let child = Node(.array([]))
            node.append(child)
            return Unkeyed(node: child, codingPath: codingPath)
        }
        mutating func superEncoder() -> any Encoder {
            let child = Node()
            node.append(child)
            return JSONTreeEncoder(node: child, codingPath: codingPath)
        }
    }

    private struct Single: SingleValueEncodingContainer {
        let node: Node
        let codingPath: [any CodingKey]

        mutating func encodeNil() throws { node.content = .value(.null) }
        mutating func encode<T: Encodable>(_ value: T) throws { try encode(generic: value) }
        private func encode<T: Encodable>(generic value: T) throws {
            node.content = try JSONTreeEncoder.node(for: value, codingPath: codingPath).content
        }
        mutating func encode(_ value: Bool) throws { try encode(generic: value) }
        mutating func encode(_ value: String) throws { try encode(generic: value) }
        mutating func encode(_ value: Double) throws { try encode(generic: value) }
        mutating func encode(_ value: Float) throws { try encode(generic: value) }
        mutating func encode(_ value: Int) throws { try encode(generic: value) }
        mutating func encode(_ value: Int8) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: Int16) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: Int32) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: Int64) throws { try encode(generic: value) }
        mutating func encode(_ value: UInt) throws { try encode(generic: Int64(clamping: value)) }
        mutating func encode(_ value: UInt8) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: UInt16) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: UInt32) throws { try encode(generic: Int(value)) }
        mutating func encode(_ value: UInt64) throws { try encode(generic: Int64(clamping: value)) }
    }
}
