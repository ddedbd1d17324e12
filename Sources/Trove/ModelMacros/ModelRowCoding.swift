import Foundation
import TroveSQLite

/// The row a context's fetch is on, as the code ``Model()`` writes reads it (`init(_$row:)`):
/// each property straight from its column, found by its position in the type's plan (the
/// order `init(from:)` decodes in), with no Codable container, no key matched and no generic
/// type looked up for the common types. The reads are ``ModelRowDecoder``'s, so a model reads
/// the same either way (the differential tests). Made by the context for one fetch.
///
/// Not Sendable: valid only while its statement stays on the row.
public struct _ModelRowReader {
    let reader: ModelRowDecoder.Reader

    init(_ reader: ModelRowDecoder.Reader) { self.reader = reader }

    @inline(__always)
    func read<T: Decodable>(_ type: T.Type, _ position: Int) throws -> T {
        try reader.read(type, reader.columns[position])
    }

    @inline(__always)
    func readIfPresent<T: Decodable>(_ type: T.Type, _ position: Int) throws -> T? {
        try reader.readIfPresent(type, reader.columns[position])
    }
}

/// The row a save writes for a model (`id, <fields in schema order>`), as the code ``Model()``
/// writes fills it (`_$write(to:)`): each property into its slot, the common types as their
/// stored value directly, anything else through ``FieldCodec`` as ``ModelRowEncoder`` binds it,
/// so a row is the same either way (the differential tests).
///
/// Memory: the row's values (one per column); the plan's arrays are shared with the schema.
public struct _ModelRowWriter {
    var row: [SQLValue]
    let plainTypes: [FieldType?]
    let definitions: [FieldDefinition]
    /// The property of each slot (pending references are kept by property name).
    let names: [String]

    init(slots: ModelRowEncoder.Slots, names: [String]) {
        row = Array(repeating: .null, count: slots.definitions.count + 1)
        plainTypes = slots.plainTypes
        definitions = slots.definitions
        self.names = names
    }

    mutating func general<T: Encodable>(_ value: T, _ slot: Int) throws {
        row[slot + 1] = try ModelRowEncoder.general(value, for: definitions[slot])
    }

    /// What ``ModelRowEncoder`` does with a value of a type it sees only at run time.
    mutating func encode<T: Encodable>(_ value: T, _ slot: Int) throws {
        if let type = plainTypes[slot], let direct = ModelRowEncoder.direct(value, type) {
            row[slot + 1] = direct
        } else {
            try general(value, slot)
        }
    }

    mutating func integer<T: Encodable>(_ value: Int64, _ original: T, _ slot: Int) throws {
        if plainTypes[slot] == .integer {
            row[slot + 1] = .integer(value)
        } else {
            try general(original, slot)
        }
    }
}

/// The typed row coding ``Model()`` writes out: one call per property, resolved when compiled
/// by the property's type, so the common types are read and written by code made for them.
/// Any other type goes through the general path (``ValueDecoder``, ``FieldCodec``), as it does
/// through Codable. Called only by generated code.
extension _ModelCoding {
    // MARK: Reading a row

    // Each read names its property by a closure over the storage (`{ (model: Trip) in
    // model._name }`), never called: its type picks the overload when compiled, which a result
    // type alone cannot do among generic overloads, and a closure costs nothing at run time (a
    // key path would be made on every call).

    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> String
    ) throws -> String { try row.read(String.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> String?
    ) throws -> String? { try row.readIfPresent(String.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Int
    ) throws -> Int { try row.read(Int.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Int?
    ) throws -> Int? { try row.readIfPresent(Int.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Int64
    ) throws -> Int64 { try row.read(Int64.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Int64?
    ) throws -> Int64? { try row.readIfPresent(Int64.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Double
    ) throws -> Double { try row.read(Double.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Double?
    ) throws -> Double? { try row.readIfPresent(Double.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Bool
    ) throws -> Bool { try row.read(Bool.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Bool?
    ) throws -> Bool? { try row.readIfPresent(Bool.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Date
    ) throws -> Date { try row.read(Date.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> Date?
    ) throws -> Date? { try row.readIfPresent(Date.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> UUID
    ) throws -> UUID { try row.read(UUID.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> UUID?
    ) throws -> UUID? { try row.readIfPresent(UUID.self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> [String]
    ) throws -> [String] { try row.read([String].self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> [String]?
    ) throws -> [String]? { try row.readIfPresent([String].self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> [Float]
    ) throws -> [Float] { try row.read([Float].self, position) }
    public static func read<Root>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> [Float]?
    ) throws -> [Float]? { try row.readIfPresent([Float].self, position) }

    /// Any other type: as `decode<T>` reads it.
    public static func read<Root, V: Decodable>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> V
    ) throws -> V {
        try row.reader.readAny(V.self, row.reader.columns[position])
    }

    public static func read<Root, V: Decodable>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> V?
    ) throws -> V? {
        try row.reader.readAnyIfPresent(V.self, row.reader.columns[position])
    }

    /// A to-one relationship: the other model's id, kept until first access.
    public static func read<Root, T: _ReferenceModel>(
        _ row: _ModelRowReader, _ position: Int, references: inout _PendingReferences,
        _ property: (Root) -> T?
    ) throws -> T? {
        if let id = try row.reader.readAnyIfPresent(T.ID.self, row.reader.columns[position]) {
            references.ids[row.reader.names[position]] = id.documentID
        }
        return nil
    }

    // MARK: Writing a row

    public static func write(
        _ value: String, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if row.plainTypes[slot] == .text {
            row.row[slot + 1] = .text(value)
        } else {
            try row.general(value, slot)
        }
    }

    public static func write(
        _ value: Int, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        try row.integer(Int64(value), value, slot)
    }

    public static func write(
        _ value: Int64, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        try row.integer(value, value, slot)
    }

    public static func write(
        _ value: Double, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if row.plainTypes[slot] == .real, value.isFinite {
            row.row[slot + 1] = .real(value)
        } else {
            try row.general(value, slot)
        }
    }

    public static func write(
        _ value: Bool, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if row.plainTypes[slot] == .bool {
            row.row[slot + 1] = .integer(value ? 1 : 0)
        } else {
            try row.general(value, slot)
        }
    }

    public static func write(
        _ value: Date, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if row.plainTypes[slot] == .date {
            row.row[slot + 1] = .real(value.timeIntervalSince1970)
        } else {
            try row.general(value, slot)
        }
    }

    public static func write(
        _ value: [String], _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if row.plainTypes[slot] == .json {
            row.row[slot + 1] = .text(ModelRowEncoder.jsonText(value))
        } else {
            try row.general(value, slot)
        }
    }

    // Optionals: the value, or nothing (the slot stays NULL), as `encodeIfPresent` does.
    public static func write(
        _ value: String?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }
    public static func write(
        _ value: Int?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }
    public static func write(
        _ value: Int64?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }
    public static func write(
        _ value: Double?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }
    public static func write(
        _ value: Bool?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }
    public static func write(
        _ value: Date?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }
    public static func write(
        _ value: [String]?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try write(value, slot, to: &row, backing: backing) }
    }

    /// Any other type: as `encode<T>` writes it.
    public static func write<V: Encodable>(
        _ value: V, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        try row.encode(value, slot)
    }

    public static func write<V: Encodable>(
        _ value: V?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value { try row.encode(value, slot) }
    }

    /// A to-one relationship: the other model's id, or the one read and not resolved yet.
    public static func write<T: _ReferenceModel>(
        _ value: T?, _ slot: Int, to row: inout _ModelRowWriter, backing: _ModelBacking
    ) throws {
        if let value {
            try row.general(value.id, slot)
        } else if let pending = backing.pending.ids[row.names[slot]],
            let id = T.ID(documentID: pending)
        {
            try row.general(id, slot)
        }
    }

    // MARK: Change tracking

    /// A property's value as a tracked model's snapshot keeps it (the storage's value).
    @inlinable
    public static func snapshot<V>(_ value: V, _ name: String, _ backing: _ModelBacking) -> Any {
        value
    }

    /// A to-one relationship's: the other model's id, or the one read and not resolved yet.
    public static func snapshot<T: _ReferenceModel>(
        _ value: T?, _ name: String, _ backing: _ModelBacking
    ) -> Any {
        let id: DocumentID? = value?.id.documentID ?? backing.pending.ids[name]
        return id as Any
    }

    /// Whether the value is bit for bit the one in the snapshot's `slot` (then unchanged;
    /// false for class-typed values, whose contents can change behind the same reference).
    /// Compiled for the property's type: a value an `Any` holds inline is compared where it
    /// lies, its type by the `Any`'s metadata word (the existential layout, part of Swift's ABI).
    @inlinable
    public static func isCurrent<V>(
        _ value: V, _ saved: UnsafePointer<Any>, _ slot: Int, _ name: String,
        _ backing: _ModelBacking
    ) -> Bool {
        if V.self is AnyObject.Type { return false }
        let saved = UnsafeRawPointer(saved + slot)
        let size = MemoryLayout<V>.size
        let word = MemoryLayout<Int>.size
        if size <= 3 * word, MemoryLayout<V>.alignment <= MemoryLayout<Int>.alignment {
            guard
                saved.load(fromByteOffset: 3 * word, as: UnsafeRawPointer.self)
                    == unsafeBitCast(V.self as Any.Type, to: UnsafeRawPointer.self)
            else { return false }
            return withUnsafeBytes(of: value) { _sameBytes($0.baseAddress, saved, size) }
        }
        guard let savedValue = saved.load(as: Any.self) as? V else { return false }
        return withUnsafeBytes(of: value) { x in
            withUnsafeBytes(of: savedValue) { y in _sameBytes(x.baseAddress, y.baseAddress!, size) }
        }
    }

    public static func isCurrent<T: _ReferenceModel>(
        _ value: T?, _ saved: UnsafePointer<Any>, _ slot: Int, _ name: String,
        _ backing: _ModelBacking
    ) -> Bool {
        (value?.id.documentID ?? backing.pending.ids[name])
            == ((saved + slot).pointee as? DocumentID?) ?? nil
    }

    /// Whether `size` bytes at `a` and `b` are the same (for values holding references: the
    /// same storage).
    @inlinable
    static func _sameBytes(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer, _ size: Int) -> Bool {
        guard size > 0, let a else { return true }
        var i = 0
        while i + 8 <= size {
            guard
                a.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                    == b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            else { return false }
            i += 8
        }
        while i < size {
            guard
                a.load(fromByteOffset: i, as: UInt8.self)
                    == b.load(fromByteOffset: i, as: UInt8.self)
            else { return false }
            i += 1
        }
        return true
    }
}
