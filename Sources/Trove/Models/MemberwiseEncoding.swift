import Foundation
import TroveSQLite

/// Encodes a value model by reading each stored property straight from the instance, the mirror
/// of ``MemberwiseDecoding``: an insert or update then skips `encode(to:)` and its containers,
/// whose forwarding and generic lookups cost more than binding the row.
///
/// A type qualifies when, checked once per type (``init(_:decoding:slots:)``):
/// - it is decoded memberwise (its stored properties are exactly its columns, each of a kind
///   ``MemberwiseDecoding`` reads), and
/// - its `encode(to:)` writes what the properties hold: ``ModelProbe``'s instances (unique
///   values, large negative numbers, then empty values with every optional absent) encoded both
///   ways give the same rows. An `encode(to:)` that changes, renames or leaves out a value keeps
///   the Codable path for every model.
///
/// Each property becomes what ``ModelRowEncoder`` makes of it through a synthesized
/// `encode(to:)`: its stored value when the field is the plain column of its kind, else
/// ``ModelRowEncoder/general(_:for:)`` (references, UUIDs, vectors, reals that are not finite),
/// which checks it and names any error; an absent optional is NULL. The differential tests hold
/// both paths equal.
struct MemberwiseEncoding: Sendable {
    struct Field: Sendable {
        /// Where the property is in an instance.
        let offset: Int
        /// The field's place in the row after the id (``ModelRowEncoder/Slots``).
        let slot: Int
        let kind: MemberwiseDecoding.Kind
        let isOptional: Bool
        /// Whether the field is the plain column of the property's kind (no reference), so the
        /// value is stored as it is.
        let isPlain: Bool
    }

    let fields: [Field]
    let slots: ModelRowEncoder.Slots

    /// The plan for `M`, or nil when `M` keeps `encode(to:)`.
    init?<M: PersistentModel>(
        _ type: M.Type, decoding: MemberwiseDecoding, slots: ModelRowEncoder.Slots
    ) {
        var fields: [Field] = []
        for (field, name) in zip(decoding.fields, decoding.names) {
            guard let slot = slots.byProperty[name] else {
                // The id is the row's first value, set from `model.id`.
                if name == "id" { continue }
                return nil
            }
            let plain = Self.plainType(field.kind)
            fields.append(
                Field(
                    offset: field.offset, slot: slot, kind: field.kind,
                    isOptional: field.isOptional,
                    isPlain: plain != nil && slots.plainTypes[slot] == plain))
        }
        self.fields = fields
        self.slots = slots
        guard agreesWithEncode(M.self) else { return nil }
    }

    /// The column type whose values a property of `kind` is stored as, as it is; nil for the
    /// kinds always bound through the general path.
    private static func plainType(_ kind: MemberwiseDecoding.Kind) -> FieldType? {
        switch kind {
        case .string: .text
        case .int, .int64: .integer
        case .double: .real
        case .bool: .bool
        case .date: .date
        case .strings: .json
        case .uuid, .floats: nil
        }
    }

    /// Whether `M`'s `encode(to:)` gives the rows read here for each probe instance.
    private func agreesWithEncode<M: PersistentModel>(_ type: M.Type) -> Bool {
        for mode in [ModelProbe.Mode.unique(round: 0), .unique(round: 1), .empty] {
            guard var instance = try? M(from: ModelProbe(mode)) else { return false }
            fitVectors(&instance)
            guard let encoded = try? ModelRowEncoder.row(instance, slots: slots),
                let read = try? withUnsafeBytes(
                    of: instance, { try row(at: $0.baseAddress!, id: instance.id) }),
                encoded == read
            else { return false }
        }
        return true
    }

    /// Gives each vector property present in `instance` its field's size: the probe hands every
    /// `[Float]` the same few values, which a vector field of another size refuses, both ways.
    private func fitVectors<M>(_ instance: inout M) {
        withUnsafeMutableBytes(of: &instance) { base in
            for field in fields {
                guard case .floats(let dimension) = field.kind else { continue }
                let vector = (0..<dimension).map { Float($0) + 0.25 }
                let p = base.baseAddress! + field.offset
                if !field.isOptional {
                    p.assumingMemoryBound(to: [Float].self).pointee = vector
                } else if p.assumingMemoryBound(to: [Float]?.self).pointee != nil {
                    p.assumingMemoryBound(to: [Float]?.self).pointee = vector
                }
            }
        }
    }

    /// The row of the model at `base`, whose id is `id`: `id`, then each field's value.
    func row<ID: ModelID>(at base: UnsafeRawPointer, id: ID) throws -> [SQLValue] {
        var row = [SQLValue](repeating: .null, count: slots.definitions.count + 1)
        for field in fields { row[field.slot + 1] = try value(field, at: base + field.offset) }
        try ModelRowEncoder.complete(&row, id: id, slots: slots)
        return row
    }

    /// The stored value of `field`, whose property is at `p`: as ``ModelRowEncoder``'s keyed
    /// container stores what a synthesized `encode(to:)` hands it.
    private func value(_ field: Field, at p: UnsafeRawPointer) throws -> SQLValue {
        func read<T: Encodable>(_: T.Type, _ plain: (T) -> SQLValue?) throws -> SQLValue {
            let value: T
            if field.isOptional {
                // Absent: a synthesized encode(to:) leaves the key out, and the row its NULL.
                guard let present = p.assumingMemoryBound(to: T?.self).pointee else { return .null }
                value = present
            } else {
                value = p.assumingMemoryBound(to: T.self).pointee
            }
            if field.isPlain, let stored = plain(value) { return stored }
            return try ModelRowEncoder.general(value, for: slots.definitions[field.slot])
        }
        return switch field.kind {
        case .string: try read(String.self) { .text($0) }
        case .int: try read(Int.self) { .integer(Int64($0)) }
        case .int64: try read(Int64.self) { .integer($0) }
        case .double: try read(Double.self) { $0.isFinite ? .real($0) : nil }
        case .bool: try read(Bool.self) { .integer($0 ? 1 : 0) }
        case .date: try read(Date.self) { .real($0.timeIntervalSince1970) }
        case .strings: try read([String].self) { .text(ModelRowEncoder.jsonText($0)) }
        case .uuid: try read(UUID.self) { _ in nil }
        case .floats: try read([Float].self) { _ in nil }
        }
    }
}
