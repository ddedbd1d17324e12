import Foundation
import Trove

/// A JSON value of no fixed shape: a record's metadata (read from .jsonl files, stored, and
/// given back inside results), and the JSON-RPC messages of `trove mcp`. Results with a shape
/// are `Encodable` types written through ``JSONOutput``, which builds this tree.
///
/// Unlike the store's ``Value``, object keys keep their insertion order, so output is stable and
/// reads like the input, and vectors print as `Float`s. Parsing is the store's own JSON reader.
///
/// ```swift
/// let value = try JSONValue.parse(#"{"id": "n1", "tags": ["a"]}"#)
/// value["id"]?.string    // "n1"
/// value.serialized()     // {"id":"n1","tags":["a"]}
/// ```
enum JSONValue: Sendable, Equatable, JSONTree {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case float(Float)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.float(let a), .float(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// A repeated key keeps its first position and its last value, as in most parsers.
    static func jsonObject(_ members: [(String, JSONValue)]) -> JSONValue {
        var unique: [(String, JSONValue)] = []
        unique.reserveCapacity(members.count)
        for (key, value) in members {
            if let existing = unique.firstIndex(where: { $0.0 == key }) {
                unique[existing].1 = value
            } else {
                unique.append((key, value))
            }
        }
        return .object(unique)
    }

    /// The member `key` of an object (nil for other values or a missing key).
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first { $0.0 == key }?.1 }
        return nil
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// Elements of an array, nil for other values.
    var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// Members of an object, nil for other values.
    var members: [(String, JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// An id-like rendering: strings as they are, whole numbers without a fraction.
    var idString: String? {
        switch self {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number) where number == number.rounded() && abs(number) < 1e15:
            return String(Int64(number))
        default: return nil
        }
    }

    /// Parses one JSON text (RFC 8259), keeping the order of object keys.
    /// - Throws: `JSONParseError` with the byte offset when `text` is not valid JSON.
    /// - Complexity: O(n).
    static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONCoding.parse(text)
    }

    /// Compact JSON text (no spaces, keys in stored order, non-ASCII kept as UTF-8).
    func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value): out += JSONCoding.number(value)
        case .float(let value): out += JSONCoding.number(value)
        case .string(let value): JSONCoding.quote(value, into: &out)
        case .array(let values):
            out += "["
            for (index, value) in values.enumerated() {
                if index > 0 { out += "," }
                value.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { out += "," }
                JSONCoding.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }
}

/// A JSON value inside a result (a record's metadata, a record id) encodes as itself and reads
/// back from any JSON (object keys then in sorted order: `JSONDecoder` does not keep theirs).
extension JSONValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .float(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .object(let members):
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in members {
                try container.encode(value, forKey: Key(stringValue: key))
            }
        }
    }

    init(from decoder: any Decoder) throws {
        if let container = try? decoder.container(keyedBy: Key.self) {
            self = .object(
                try container.allKeys.sorted { $0.stringValue < $1.stringValue }.map {
                    ($0.stringValue, try container.decode(JSONValue.self, forKey: $0))
                })
            return
        }
        if var container = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !container.isAtEnd { items.append(try container.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int64.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }
}
