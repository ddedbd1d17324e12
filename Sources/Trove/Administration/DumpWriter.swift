import Foundation
import TroveSQLite

/// Buffers dump lines, hands them to the output in chunks, and checksums every byte.
final class DumpWriter {
    private let output: (Data) throws -> Void
    private var buffer: [UInt8] = []  // up to DumpFormat.bufferSize bytes, then flushed
    private(set) var bytesWritten = 0
    private var checksum = FNV1a64()

    init(_ output: @escaping (Data) throws -> Void) {
        self.output = output
        buffer.reserveCapacity(DumpFormat.bufferSize + 4096)
    }

    func line(_ text: String) throws {
        let start = buffer.count
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        checksum.add(buffer[start...])
        if buffer.count >= DumpFormat.bufferSize { try flush() }
    }

    var checksumHex: String { checksum.hex }

    /// Writes `{"c":"<section>","v":[...]}` for the row `statement` is on, straight into the
    /// buffer (no intermediate JSON tree: this is the dump's inner loop).
    func record(section: String, columns: Int, row statement: Statement) throws {
        let start = buffer.count
        append("{\"c\":")
        quote(section)
        append(",\"v\":[")
        for column in 0..<columns {
            if column > 0 { buffer.append(UInt8(ascii: ",")) }
            switch statement.value(at: column) {
            case .null: append("null")
            case .integer(let v): append(String(v))
            case .real(let v) where v.isFinite:
                // Swift's description is the shortest text that reads back as the same Double.
                append(v.description.replacingOccurrences(of: "e+", with: "e"))
            case .real(let v): append(v > 0 ? "{\"real\":\"inf\"}" : "{\"real\":\"-inf\"}")
            case .text(let v): quote(v)
            case .blob(let v):
                append("{\"base64\":\"")
                append(Data(v).base64EncodedString())
                append("\"}")
            }
        }
        append("]}\n")
        checksum.add(buffer[start...])
        if buffer.count >= DumpFormat.bufferSize { try flush() }
    }

    private func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
    }

    /// A JSON string: quote, backslash and control characters escaped, everything else as UTF-8.
    private func quote(_ text: String) {
        var text = text
        buffer.append(UInt8(ascii: "\""))
        text.withUTF8 { bytes in
            var runStart = 0
            for (i, byte) in bytes.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                switch byte {
                case 0x22: buffer.append(contentsOf: [0x5C, 0x22])
                case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
                case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
                case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
                case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
                default: buffer.append(contentsOf: Array(String(format: "\\u%04x", byte).utf8))
                }
                runStart = i + 1
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        buffer.append(UInt8(ascii: "\""))
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        try output(Data(buffer))
        bytesWritten += buffer.count
        buffer.removeAll(keepingCapacity: true)
    }
}

/// FNV-1a, 64 bits: a checksum against truncation and corruption (not against tampering).
package struct FNV1a64 {
    package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func add(_ bytes: some Sequence<UInt8>) {
        var h = value
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        value = h
    }

    package var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
