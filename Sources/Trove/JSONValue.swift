import Foundation

/// A JSON value, for metadata read from .jsonl files and for `--json` output.
///
/// Object keys keep their insertion order, so output is stable and reads like the input.
///
/// ```swift
/// let value = try JSONValue.parse(#"{"id": "n1", "tags": ["a"]}"#)
/// value["id"]?.string    // "n1"
/// value.serialized()     // {"id":"n1","tags":["a"]}
/// ```
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case float(Float)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
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

    /// The member `key` of an object (nil for other values or a missing key).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first { $0.0 == key }?.1 }
        return nil
    }

    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// Elements of an array, nil for other values.
    public var array: [JSONValue]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// Members of an object, nil for other values.
    public var members: [(String, JSONValue)]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// An id-like rendering: strings as they are, whole numbers without a fraction.
    public var idString: String? {
        switch self {
        case .string(let text): return text
        case .int(let number): return String(number)
        case .double(let number) where number == number.rounded() && abs(number) < 1e15:
            return String(Int64(number))
        default: return nil
        }
    }

    /// Parses one JSON text (RFC 8259), keeping the order of object keys.
    /// - Throws: ``JSONValue/ParseError`` with the byte offset when `text` is not valid JSON.
    /// - Complexity: O(n).
    public static func parse(_ text: String) throws -> JSONValue {
        var parser = JSONParser(bytes: Array(text.utf8))
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else {
            throw parser.error("unexpected text after the JSON value")
        }
        return value
    }

    /// Why a text is not JSON.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var reason: String
        public var description: String { reason }
    }

    /// Compact JSON text (no spaces, keys in stored order, non-ASCII kept as UTF-8).
    public func serialized() -> String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .double(let value):
            // Swift's description is the shortest text that reads back as the same Double.
            out += value.isFinite ? Self.number(value.description) : "null"
        case .float(let value):
            out += value.isFinite ? Self.number(value.description) : "null"
        case .string(let value): Self.quote(value, into: &out)
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
                Self.quote(key, into: &out)
                out += ":"
                value.write(to: &out)
            }
            out += "}"
        }
    }

    /// Swift prints `1e-05` and `5e+20`; JSON wants no `+` and accepts `e-05`. `inf` never
    /// reaches here.
    private static func number(_ text: String) -> String {
        text.replacingOccurrences(of: "e+", with: "e")
    }

    private static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// A small recursive-descent JSON parser over UTF-8 bytes.
private struct JSONParser {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ reason: String) -> JSONValue.ParseError {
        JSONValue.ParseError(reason: "\(reason) at byte \(position + 1)")
    }

    mutating func skipWhitespace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) {
            position += 1
        }
    }

    mutating func expect(_ literal: String, _ value: JSONValue) throws -> JSONValue {
        let expected = Array(literal.utf8)
        guard bytes.count - position >= expected.count,
            Array(bytes[position..<position + expected.count]) == expected
        else { throw error("invalid literal") }
        position += expected.count
        return value
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < 512 else { throw error("nesting too deep") }
        guard position < bytes.count else { throw error("unexpected end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                    throw error("expected a string key")
                }
                let key = try string()
                skipWhitespace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                    throw error("expected ':'")
                }
                position += 1
                skipWhitespace()
                let member = try value(depth: depth + 1)
                if let existing = members.firstIndex(where: { $0.0 == key }) {
                    members[existing].1 = member  // last one wins, as in most parsers
                } else {
                    members.append((key, member))
                }
                skipWhitespace()
                guard position < bytes.count else { throw error("unterminated object") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
                position += 1
                return .object(members)
            }
        case UInt8(ascii: "["):
            position += 1
            var values: [JSONValue] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
                return .array(values)
            }
            while true {
                skipWhitespace()
                values.append(try value(depth: depth + 1))
                skipWhitespace()
                guard position < bytes.count else { throw error("unterminated array") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
                position += 1
                return .array(values)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        default: return try number()
        }
    }

    mutating func number() throws -> JSONValue {
        let start = position
        var isInteger = true
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let digitsStart = position
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        guard position > digitsStart else { throw error("invalid value") }
        if bytes[digitsStart] == 0x30, position - digitsStart > 1 {
            throw error("leading zero in a number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            let fraction = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position > fraction else { throw error("digits expected after '.'") }
        }
        if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            let exponent = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position > exponent else { throw error("digits expected in exponent") }
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text) else { throw error("invalid number") }
        return .double(double)
    }

    mutating func string() throws -> String {
        position += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = position
        func flush(_ end: Int) {
            scalars.append(contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                flush(position)
                position += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            flush(position)
            position += 1
            guard position < bytes.count else { break }
            let escape = bytes[position]
            position += 1
            switch escape {
            case UInt8(ascii: "\""): scalars.append("\"")
            case UInt8(ascii: "\\"): scalars.append("\\")
            case UInt8(ascii: "/"): scalars.append("/")
            case UInt8(ascii: "b"): scalars.append("\u{08}")
            case UInt8(ascii: "f"): scalars.append("\u{0C}")
            case UInt8(ascii: "n"): scalars.append("\n")
            case UInt8(ascii: "r"): scalars.append("\r")
            case UInt8(ascii: "t"): scalars.append("\t")
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), position + 1 < bytes.count,
                    bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u")
                {
                    position += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default: throw error("invalid escape")
            }
            runStart = position
        }
        throw error("unterminated string")
    }

    mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count,
            let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw error("invalid \\u escape") }
        position += 4
        return code
    }
}
