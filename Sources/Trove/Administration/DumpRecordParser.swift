import Foundation
import TroveSQLite

/// Reads a record line in the exact shape the dump writes (`{"c":"name","v":[...]}` without
/// spaces) straight from its bytes: the load's inner loop. Returns nil for anything else, which
/// the general JSON parser then reads (or reports).
struct DumpRecordParser {
    private let bytes: ArraySlice<UInt8>
    private var i: Int

    private init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        i = bytes.startIndex
    }

    static func parse(_ line: ArraySlice<UInt8>) -> (section: String, values: [SQLValue])? {
        var parser = DumpRecordParser(line)
        return parser.record()
    }

    private mutating func literal(_ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard bytes.endIndex - i >= count else { return false }
        let matches = text.withUTF8Buffer { expected in
            bytes[i..<(i + count)].elementsEqual(expected)
        }
        if matches { i += count }
        return matches
    }

    private mutating func record() -> (section: String, values: [SQLValue])? {
        guard literal("{\"c\":"), let section = string(), literal(",\"v\":[") else { return nil }
        var values: [SQLValue] = []
        if literal("]}") { return i == bytes.endIndex ? (section, values) : nil }
        while true {
            guard let value = value() else { return nil }
            values.append(value)
            if literal(",") { continue }
            guard literal("]}"), i == bytes.endIndex else { return nil }
            return (section, values)
        }
    }

    private mutating func value() -> SQLValue? {
        guard i < bytes.endIndex else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "n"): return literal("null") ? .null : nil
        case UInt8(ascii: "\""): return string().map(SQLValue.text)
        case UInt8(ascii: "{"):
            if literal("{\"base64\":\"") {
                let start = i
                while i < bytes.endIndex, bytes[i] != UInt8(ascii: "\"") { i += 1 }
                guard let data = Data(base64Encoded: Data(bytes[start..<i])) else { return nil }
                return literal("\"}") ? .blob([UInt8](data)) : nil
            }
            if literal("{\"real\":\"inf\"}") { return .real(.infinity) }
            if literal("{\"real\":\"-inf\"}") { return .real(-.infinity) }
            return nil
        default:
            let start = i
            var isInteger = true
            while i < bytes.endIndex {
                let byte = bytes[i]
                if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
                    || byte == UInt8(ascii: "-")
                {
                } else if byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e")
                    || byte == UInt8(ascii: "+")
                {
                    isInteger = false
                } else {
                    break
                }
                i += 1
            }
            guard i > start else { return nil }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            if isInteger { return Int64(text).map(SQLValue.integer) }
            return Double(text).map(SQLValue.real)
        }
    }

    /// A JSON string; escapes decoded (`\uXXXX` with surrogate pairs included).
    private mutating func string() -> String? {
        guard i < bytes.endIndex, bytes[i] == UInt8(ascii: "\"") else { return nil }
        i += 1
        let start = i
        while i < bytes.endIndex, bytes[i] != UInt8(ascii: "\""), bytes[i] != UInt8(ascii: "\\") {
            i += 1
        }
        guard i < bytes.endIndex else { return nil }
        if bytes[i] == UInt8(ascii: "\"") {
            defer { i += 1 }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }
        var out = [UInt8](bytes[start..<i])
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") {
                i += 1
                return String(decoding: out, as: UTF8.self)
            }
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                i += 1
                continue
            }
            i += 1
            guard i < bytes.endIndex else { return nil }
            let escape = bytes[i]
            i += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard var scalar = hex4() else { return nil }
                if (0xD800..<0xDC00).contains(scalar) {
                    guard literal("\\u"), let low = hex4(), (0xDC00..<0xE000).contains(low) else {
                        return nil
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: Array(String(Character(unicode)).utf8))
            default: return nil
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard bytes.endIndex - i >= 4,
            let value = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16)
        else {
            return nil
        }
        i += 4
        return value
    }
}
