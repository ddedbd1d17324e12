import Foundation
import TroveSQLite

/// The columns a field is read from: a statement on its row, or a row kept from one.
/// `FieldCodec.read` is written once against this, so a field decodes the same from either.
protocol FieldColumns {
    func isNull(at column: Int) -> Bool
    func int64(at column: Int) -> Int64
    func double(at column: Int) -> Double
    /// The text or blob bytes, nil when NULL; valid while the row is.
    func bytes(at column: Int) -> UnsafeRawBufferPointer?
    func string(at column: Int) -> String?
}

extension Statement: FieldColumns {}

/// A fetched document's fields as its row held them, in one allocation per row, each field
/// decoded when it is read.
///
/// A fetch of many documents used to build every document's dictionary, strings and arrays
/// up front: four heap objects a row, most of them never read by a caller that shows a title
/// or filters on one field. A row is now copied as SQLite returned it (after SQLite's own
/// conversion to the field's stored kind, so a later read gives exactly what an eager read
/// gave) and decoded on access by `FieldCodec.read`, the decoder eager reads use.
///
/// The bytes: a table of `columns + 1` offsets (`UInt32`), then one record per column: a flag
/// byte (0 NULL, 1 a value) and the value: 8 bytes for an integer or real, the bytes of text
/// or a blob.
struct StoredRow: Sendable {
    let layout: Layout
    let bytes: [UInt8]

    /// What the rows of one selection share: the fields' names and types, where each is, and
    /// the dictionary `fields` starts from (every field `.null`, values written in place, no
    /// key hashed again).
    final class Layout: Sendable {
        let names: [String]
        let types: [FieldType]
        let kinds: [Kind]
        let columns: [String: Int]
        /// Undeclared fields are read from a JSON column after the declared ones.
        let readsExtra: Bool
        /// Undeclared fields wanted by a projection (nil: all of them).
        let extraNames: Set<String>?
        let template: [String: Value]
        let slots: [Dictionary<String, Value>.Index]

        /// How a column is kept: what an eager read asked SQLite for.
        enum Kind { case integer, real, bytes }

        init(fields: [FieldDefinition], readsExtra: Bool, extraNames: Set<String>?) {
            names = fields.map(\.name)
            types = fields.map(\.type)
            kinds =
                fields.map {
                    switch $0.type {
                    case .integer, .bool: .integer
                    case .real, .date: .real
                    case .text, .json, .vector, .data, .point: .bytes
                    }
                } + (readsExtra ? [.bytes] : [])
            columns = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
            self.readsExtra = readsExtra
            self.extraNames = extraNames
            var template: [String: Value] = [:]
            template.reserveCapacity(fields.count + (readsExtra ? 4 : 0))
            for name in names { template[name] = .null }
            self.template = template
            slots = names.map { template.index(forKey: $0)! }
        }
    }

    /// Copies the current row's columns from `first` on.
    init(_ statement: Statement, first: Int, layout: Layout) {
        self.layout = layout
        let count = layout.kinds.count
        let table = (count + 1) * MemoryLayout<UInt32>.size
        bytes = withUnsafeTemporaryAllocation(of: Column.self, capacity: count) { columns in
            // First what each column holds and its size, then one array of the exact size.
            var size = table
            for (j, kind) in layout.kinds.enumerated() {
                let column = first + j
                var read = Column()
                switch kind {
                case .integer:
                    if !statement.isNull(at: column) {
                        (read.bits, read.size) = (
                            UInt64(bitPattern: statement.int64(at: column)), 8
                        )
                    }
                case .real:
                    if !statement.isNull(at: column) {
                        (read.bits, read.size) = (statement.double(at: column).bitPattern, 8)
                    }
                case .bytes:
                    if let bytes = statement.bytes(at: column) {
                        (read.pointer, read.size) = (bytes.baseAddress, bytes.count)
                    }
                }
                size += 1 + max(read.size, 0)
                columns[j] = read
            }
            return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
                let raw = UnsafeMutableRawBufferPointer(buffer)
                var offset = table
                for j in 0..<count {
                    raw.storeBytes(of: UInt32(offset), toByteOffset: j * 4, as: UInt32.self)
                    let read = columns[j]
                    raw[offset] = read.size < 0 ? 0 : 1
                    offset += 1
                    if read.size < 0 { continue }
                    if layout.kinds[j] == .bytes {
                        if let pointer = read.pointer, read.size > 0 {
                            (raw.baseAddress! + offset).copyMemory(
                                from: pointer, byteCount: read.size)
                        }
                    } else {
                        raw.storeBytes(of: read.bits, toByteOffset: offset, as: UInt64.self)
                    }
                    offset += read.size
                }
                raw.storeBytes(of: UInt32(offset), toByteOffset: count * 4, as: UInt32.self)
                initialized = size
            }
        }
    }

    /// One column as read in the first pass; `size` -1 for NULL.
    private struct Column {
        var bits: UInt64 = 0
        var pointer: UnsafeRawPointer?
        var size = -1
    }

    /// The kept row seen as columns, for `FieldCodec.read`.
    private struct Record: FieldColumns {
        let raw: UnsafeRawBufferPointer

        private func start(_ column: Int) -> Int {
            Int(raw.loadUnaligned(fromByteOffset: column * 4, as: UInt32.self))
        }
        func isNull(at column: Int) -> Bool { raw[start(column)] == 0 }
        func int64(at column: Int) -> Int64 {
            isNull(at: column)
                ? 0 : raw.loadUnaligned(fromByteOffset: start(column) + 1, as: Int64.self)
        }
        func double(at column: Int) -> Double {
            isNull(at: column)
                ? 0 : raw.loadUnaligned(fromByteOffset: start(column) + 1, as: Double.self)
        }
        func bytes(at column: Int) -> UnsafeRawBufferPointer? {
            let from = start(column)
            guard raw[from] != 0 else { return nil }
            return UnsafeRawBufferPointer(rebasing: raw[(from + 1)..<start(column + 1)])
        }
        func string(at column: Int) -> String? {
            bytes(at: column).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// A field by name, nil when the row does not have it.
    subscript(name: String) -> Value? {
        bytes.withUnsafeBytes { raw in
            let record = Record(raw: raw)
            if let column = layout.columns[name] {
                return FieldCodec.read(record, column: column, as: layout.types[column])
            }
            guard layout.readsExtra, layout.extraNames?.contains(name) ?? true else { return nil }
            return extra(record)?[name]
        }
    }

    /// Every field, as a dictionary.
    var fields: [String: Value] {
        bytes.withUnsafeBytes { raw in
            let record = Record(raw: raw)
            var fields = layout.template
            for (column, slot) in layout.slots.enumerated() {
                fields.values[slot] = FieldCodec.read(
                    record, column: column, as: layout.types[column])
            }
            for (key, value) in extra(record) ?? [:]
            where layout.columns[key] == nil && (layout.extraNames?.contains(key) ?? true) {
                fields[key] = value
            }
            return fields
        }
    }

    /// The undeclared fields, from the JSON column after the declared ones.
    private func extra(_ record: Record) -> [String: Value]? {
        guard layout.readsExtra, let text = record.string(at: layout.names.count),
            case .object(let members)? = try? JSONCoding.value(text)
        else { return nil }
        return members
    }

    /// Whether two rows hold the same bytes under the same layout (so the same fields).
    func isIdentical(to other: StoredRow) -> Bool {
        layout === other.layout && bytes == other.bytes
    }
}
