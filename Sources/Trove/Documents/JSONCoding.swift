import Foundation

/// JSON text <-> ``Value`` for json fields, undeclared document fields and JSON-path values.
///
/// SQLite stores JSON as text, so every json field read or written passes through here. Numbers
/// keep their kind (`2` reads as `.int`, `2.0` as `.double`), which `JSONDecoder` would not tell
/// apart; that is why the store reads JSON itself.
package enum JSONCoding {
    /// Canonical JSON text of a JSON-representable value (sorted keys, no spaces).
    ///
    /// - Throws: ``TroveError/invalidValue(field:reason:)`` for dates, data, vectors or
    ///   non-finite numbers, which JSON cannot hold.
    static func text(_ value: Value, field: String = "json") throws -> String {
        var out = ""
        try write(value, into: &out, field: field)
        return out
    }

    /// Object members sorted by key, so equal values store equal text.
    private static func write(_ value: Value, into out: inout String, field: String) throws {
        switch value {
        case .null: out += "null"
        case .bool(let v): out += v ? "true" : "false"
        case .int(let v): out += String(v)
        case .double(let v):
            guard v.isFinite else {
                throw TroveError.invalidValue(field: field, reason: "JSON cannot hold \(v)")
            }
            out += number(v)
        case .string(let v): quote(v, into: &out)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                try write(item, into: &out, field: field)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += "," }
                quote(key, into: &out)
                out += ":"
                try write(members[key]!, into: &out, field: field)
            }
            out += "}"
        case .date, .data, .vector:
            throw TroveError.invalidValue(
                field: field, reason: "a \(value.kindName) cannot be stored inside JSON")
        }
    }

    /// Parses JSON text (as stored by SQLite) into a value.
    /// - Throws: ``JSONParseError`` with the byte offset when `text` is not valid JSON.
    package static func value(_ text: String) throws(JSONParseError) -> Value {
        try parse(text)
    }

    /// Parses one JSON text (RFC 8259) into any ``JSONTree``: the store's ``Value``, or the
    /// command-line tool's ordered tree.
    /// - Throws: ``JSONParseError`` with the byte offset when `text` is not valid JSON.
    /// - Complexity: O(n).
    package static func parse<Tree: JSONTree>(_ text: String, as tree: Tree.Type = Tree.self)
        throws(JSONParseError)
        -> Tree
    {
        try parse(bytes: Array(text.utf8))
    }

    /// Parses JSON text read in place from a column (one copy of its bytes, no `String`).
    /// - Throws: ``JSONParseError`` with the byte offset when the bytes are not valid JSON.
    static func value(bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> Value {
        try parse(bytes: Array(bytes))
    }

    private static func parse<Tree: JSONTree>(bytes: [UInt8]) throws(JSONParseError) -> Tree {
        var parser = JSONParser<Tree>(bytes: bytes)
        parser.skipWhitespace()
        let value = try parser.value(depth: 0)
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else {
            throw parser.error("unexpected text after the JSON value")
        }
        return value
    }

    /// A finite number as JSON text: Swift's description is the shortest text that reads back as
    /// the same number; JSON wants `1e5`, not `1e+05`. Non-finite numbers are `null`.
    package static func number<F: BinaryFloatingPoint & LosslessStringConvertible>(_ value: F)
        -> String
    {
        value.isFinite ? value.description.replacingOccurrences(of: "e+", with: "e") : "null"
    }

    /// Appends `text` as a JSON string (non-ASCII kept as UTF-8).
    package static func quote(_ text: String, into out: inout String) {
        out += "\""
        // Most text needs no escape: appended whole, not scalar by scalar.
        if !text.utf8.contains(where: {
            $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\")
        }) {
            out += text
            out += "\""
            return
        }
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

/// What the JSON parser builds. Enum cases named like the requirements witness them.
package protocol JSONTree {
    static var null: Self { get }
    static func bool(_ value: Bool) -> Self
    static func int(_ value: Int64) -> Self
    static func double(_ value: Double) -> Self
    static func string(_ value: String) -> Self
    static func array(_ items: [Self]) -> Self
    /// An object from its members in text order (a key may repeat; the last one should win).
    static func jsonObject(_ members: [(String, Self)]) -> Self
}

extension Value: JSONTree {
    package static func jsonObject(_ members: [(String, Value)]) -> Value {
        .object(Dictionary(members, uniquingKeysWith: { _, last in last }))
    }
}

/// Why a text is not JSON.
package struct JSONParseError: Error, Sendable, CustomStringConvertible {
    package var reason: String
    package var description: String { reason }
}

/// A small recursive-descent JSON parser over UTF-8 bytes.
private struct JSONParser<Tree: JSONTree> {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ reason: String) -> JSONParseError {
        JSONParseError(reason: "\(reason) at byte \(position + 1)")
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            let byte = bytes[position]
            guard byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D else { return }
            position += 1
        }
    }

    mutating func expect(_ literal: String, _ value: Tree) throws(JSONParseError) -> Tree {
        let expected = Array(literal.utf8)
        guard bytes.count - position >= expected.count,
            Array(bytes[position..<position + expected.count]) == expected
        else { throw error("invalid literal") }
        position += expected.count
        return value
    }

    mutating func value(depth: Int) throws(JSONParseError) -> Tree {
        guard depth < 512 else { throw error("nesting too deep") }
        guard position < bytes.count else { throw error("unexpected end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var members: [(String, Tree)] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
                return .jsonObject(members)
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
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                guard position < bytes.count else { throw error("unterminated object") }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    continue
                }
                guard bytes[position] == UInt8(ascii: "}") else {
                    throw error("expected ',' or '}'")
                }
                position += 1
                return .jsonObject(members)
            }
        case UInt8(ascii: "["):
            position += 1
            var values: [Tree] = []
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
                guard bytes[position] == UInt8(ascii: "]") else {
                    throw error("expected ',' or ']'")
                }
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

    mutating func number() throws(JSONParseError) -> Tree {
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
            if position < bytes.count,
                bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")
            {
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

    mutating func string() throws(JSONParseError) -> String {
        position += 1  // opening quote
        var scalars = String.UnicodeScalarView()
        var runStart = position
        func flush(_ end: Int) {
            scalars.append(
                contentsOf: String(decoding: bytes[runStart..<end], as: UTF8.self).unicodeScalars)
        }
        var escaped = false
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                // Most strings have no escape: one String straight from their bytes.
                if !escaped {
                    position += 1
                    return String(decoding: bytes[runStart..<(position - 1)], as: UTF8.self)
                }
                flush(position)
                position += 1
                return String(scalars)
            }
            if byte < 0x20 { throw error("control character in a string") }
            if byte != UInt8(ascii: "\\") {
                position += 1
                continue
            }
            escaped = true
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

    mutating func hex4() throws(JSONParseError) -> UInt32 {
        guard position + 4 <= bytes.count,
            let code = UInt32(
                String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw error("invalid \\u escape") }
        position += 4
        return code
    }
}

/// A JSON array of strings (`["a","b"]`, as ``JSONCoding`` writes it, whitespace allowed)
/// parsed straight from its bytes, each string made into an element by `element`; nil for
/// anything else, escapes included, which the general parser then reads.
enum JSONStringArray {
    /// The strings of a JSON array of plain strings (no escapes, no control characters), nil for
    /// anything else: the general parser's job. Checked first, then the array made at its size
    /// with each string in place (no growth, no uniqueness check per element).
    static func parse<Element>(_ bytes: UnsafeRawBufferPointer, _ element: (String) -> Element)
        -> [Element]?
    {
        guard let count = count(bytes) else { return nil }
        guard count > 0 else { return [] }
        let quote = UInt8(ascii: "\"")
        return [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
            // Checked above: quotes only open and close the strings.
            var i = 0
            while initialized < count {
                while bytes[i] != quote { i += 1 }
                var end = i + 1
                while bytes[end] != quote { end += 1 }
                let text = String(
                    decoding: UnsafeRawBufferPointer(rebasing: bytes[(i + 1)..<end]), as: UTF8.self)
                (buffer.baseAddress! + initialized).initialize(to: element(text))
                initialized += 1
                i = end + 1
            }
        }
    }

    /// ``parse(_:_:)`` into `[String]`, in a function of its own: model decoders call it from
    /// code specialized per property type, which the optimizer may merge across types into one
    /// body that makes the array through unspecialized code (a metadata lookup per row).
    @inline(never)
    static func strings(_ bytes: UnsafeRawBufferPointer) -> [String]? {
        parse(bytes) { $0 }
    }

    /// How many strings `bytes` holds when it is a JSON array of plain strings, else nil.
    static func count(_ bytes: UnsafeRawBufferPointer) -> Int? {
        let quote = UInt8(ascii: "\"")
        let backslash = UInt8(ascii: "\\")
        var i = 0
        let n = bytes.count
        func skipSpace() {
            while i < n,
                bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09
            { i += 1 }
        }
        skipSpace()
        guard i < n, bytes[i] == UInt8(ascii: "[") else { return nil }
        i += 1
        skipSpace()
        if i < n, bytes[i] == UInt8(ascii: "]") {
            i += 1
            skipSpace()
            return i == n ? 0 : nil
        }
        var count = 0
        while true {
            skipSpace()
            guard i < n, bytes[i] == quote else { return nil }
            var end = i + 1
            while end < n, bytes[end] != quote {
                // Escapes and control characters: the general parser's job.
                if bytes[end] == backslash || bytes[end] < 0x20 { return nil }
                end += 1
            }
            guard end < n else { return nil }
            count += 1
            i = end + 1
            skipSpace()
            guard i < n else { return nil }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard bytes[i] == UInt8(ascii: "]") else { return nil }
            i += 1
            skipSpace()
            return i == n ? count : nil
        }
    }
}
