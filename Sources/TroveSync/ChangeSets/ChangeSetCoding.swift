import Foundation
import TroveSQLite

/// The binary form of a ``ChangeSet`` (before sealing): compact and fast to read, since a pull
/// decodes every change set of the feed.
///
/// ```
/// "TSC1"  schemaVersion  collections
///   collection: name  manifestCount (field manifest)*  recordCount
///     record: id(value)  cl  fieldCount
///       field: name  cl  hlc  value  baseHLC(0: none)  baseDevice
/// numbers: LEB128 varints (signed ones zig-zag); strings: length + UTF-8;
/// values: tag (0 null, 1 integer, 2 real, 3 text, 4 blob) + payload
/// ```
enum ChangeSetCoding {
    static let magic: [UInt8] = Array("TSC1".utf8)

    static func encode(_ set: ChangeSet) -> [UInt8] {
        var out = ByteWriter()
        out.bytes += magic
        out.varint(UInt64(set.schemaVersion))
        out.varint(UInt64(set.collections.count))
        for collection in set.collections {
            out.string(collection.name)
            out.varint(UInt64(collection.manifests.count))
            for (field, manifest) in collection.manifests.sorted(by: { $0.key < $1.key }) {
                out.string(field)
                out.string(manifest)
            }
            out.varint(UInt64(collection.records.count))
            for record in collection.records {
                out.value(record.id)
                out.signed(record.cl)
                out.varint(UInt64(record.fields.count))
                for field in record.fields {
                    out.string(field.name)
                    out.signed(field.cl)
                    out.signed(field.hlc)
                    out.value(field.value)
                    out.signed(field.baseHLC ?? 0)
                    out.string(field.baseDevice ?? "")
                }
            }
        }
        return out.bytes
    }

    struct Malformed: Error { var reason: String }

    static func decode(_ bytes: [UInt8]) throws -> ChangeSet {
        var input = ByteReader(bytes: bytes)
        guard Array(try input.take(magic.count)) == magic else {
            throw Malformed(reason: "not a change set of this format")
        }
        let schemaVersion = Int(try input.varint())
        var collections: [ChangeSet.Collection] = []
        for _ in 0..<(try input.count()) {
            let name = try input.string()
            var manifests: [String: String] = [:]
            for _ in 0..<(try input.count()) {
                let field = try input.string()
                manifests[field] = try input.string()
            }
            var records: [ChangeSet.Record] = []
            let recordCount = try input.count()
            records.reserveCapacity(recordCount)
            for _ in 0..<recordCount {
                let id = try input.value()
                let cl = try input.signed()
                var fields: [ChangeSet.FieldChange] = []
                let fieldCount = try input.count()
                fields.reserveCapacity(fieldCount)
                for _ in 0..<fieldCount {
                    let fieldName = try input.string()
                    let fieldCL = try input.signed()
                    let hlc = try input.signed()
                    let value = try input.value()
                    let baseHLC = try input.signed()
                    let baseDevice = try input.string()
                    fields.append(
                        ChangeSet.FieldChange(
                            name: fieldName, cl: fieldCL, hlc: hlc, value: value,
                            baseHLC: baseHLC == 0 ? nil : baseHLC,
                            baseDevice: baseDevice.isEmpty ? nil : baseDevice))
                }
                records.append(ChangeSet.Record(id: id, cl: cl, fields: fields))
            }
            collections.append(
                ChangeSet.Collection(name: name, manifests: manifests, records: records))
        }
        guard input.isAtEnd else { throw Malformed(reason: "bytes after the end") }
        return ChangeSet(schemaVersion: schemaVersion, collections: collections)
    }
}

struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func signed(_ value: Int64) {
        varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8)
        varint(UInt64(utf8.count))
        bytes += utf8
    }

    mutating func value(_ value: SQLValue) {
        switch value {
        case .null: bytes.append(0)
        case .integer(let v):
            bytes.append(1)
            signed(v)
        case .real(let v):
            bytes.append(2)
            withUnsafeBytes(of: v.bitPattern.littleEndian) { bytes += $0 }
        case .text(let v):
            bytes.append(3)
            string(v)
        case .blob(let v):
            bytes.append(4)
            varint(UInt64(v.count))
            bytes += v
        }
    }
}

struct ByteReader {
    let bytes: [UInt8]
    var offset = 0

    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - offset else {
            throw ChangeSetCoding.Malformed(reason: "truncated")
        }
        defer { offset += count }
        return bytes[offset..<(offset + count)]
    }

    mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < bytes.count, shift < 64 else {
                throw ChangeSetCoding.Malformed(reason: "bad number")
            }
            let byte = bytes[offset]
            offset += 1
            result |= UInt64(byte & 0x7f) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// A count, bounded by the bytes left (every element takes at least one byte), so a
    /// corrupt count cannot make a huge allocation.
    mutating func count() throws -> Int {
        let n = try varint()
        guard n <= UInt64(bytes.count - offset) else {
            throw ChangeSetCoding.Malformed(reason: "count past the end")
        }
        return Int(n)
    }

    mutating func signed() throws -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func string() throws -> String {
        let utf8 = try take(count())
        guard let text = String(validating: utf8, as: UTF8.self) else {
            throw ChangeSetCoding.Malformed(reason: "bad UTF-8")
        }
        return text
    }

    mutating func value() throws -> SQLValue {
        let tag = try take(1).first!
        switch tag {
        case 0: return .null
        case 1: return .integer(try signed())
        case 2:
            var bits: UInt64 = 0
            for (i, byte) in try take(8).enumerated() { bits |= UInt64(byte) << (8 * UInt64(i)) }
            return .real(Double(bitPattern: bits))
        case 3: return .text(try string())
        case 4: return .blob(Array(try take(count())))
        default: throw ChangeSetCoding.Malformed(reason: "unknown value tag \(tag)")
        }
    }
}
