import Foundation
import TroveSQLite

/// Encodes a model straight into the values of its row (`id, <fields in schema order>`), the
/// mirror of ``ModelRowDecoder``: through the type's plan (``Slots``), keys are matched by
/// position, and the common types become their stored value directly, checked as ``FieldCodec``
/// checks a document's (text, integers, finite reals, booleans, dates, `[String]` as JSON);
/// anything else is bound by ``FieldCodec`` from its ``Value``, the general path, with the same
/// result (the differential tests). Nested containers and super encoders make the model go
/// through a document instead.
final class ModelRowEncoder: Encoder {
    /// Where each property goes in the row, in the order `encode(to:)` writes them.
    struct Slots: Sendable {
        var byProperty: [String: Int]
        var definitions: [FieldDefinition]
        /// The slot of each property in the order `encode(to:)` was seen writing them (the
        /// order `init(from:)` reads them; synthesized conformances use one order for both).
        var order: [(name: String, slot: Int)]

        /// Each field's type when its value is bound as it is (nil for a reference, which
        /// checks its value first): what the direct writes compare with, cheaper to read than
        /// the definition.
        var plainTypes: [FieldType?]
        /// The slots of the fields that must not be NULL.
        var required: [Int]

        init(byProperty: [String: Int], definitions: [FieldDefinition], order: [String]) {
            self.byProperty = byProperty
            self.definitions = definitions
            self.plainTypes = definitions.map { $0.reference == nil ? $0.type : nil }
            self.required = definitions.indices.filter { !definitions[$0].isOptional }
            self.order = order.compactMap { name in byProperty[name].map { (name, $0) } }
        }
    }

    let slots: Slots
    /// The row: the id's value (set last), then one per field, each NULL until encoded.
    var row: [SQLValue]
    /// Set when `encode(to:)` asks for something other than one flat keyed container (nested
    /// containers, super encoders): such models are encoded through a document instead.
    var needsDocument = false
    /// The next planned slot.
    fileprivate var next = 0
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(slots: Slots) {
        self.slots = slots
        row = Array(repeating: .null, count: slots.definitions.count + 1)
    }

    /// The row of `model`, id first; nil when the model must be encoded through a document.
    static func row<M: PersistentModel>(_ model: M, slots: Slots) throws -> [SQLValue]? {
        let encoder = ModelRowEncoder(slots: slots)
        try model.encode(to: encoder)
        if encoder.needsDocument { return nil }
        try complete(&encoder.row, id: model.id, slots: slots)
        return encoder.row
    }

    /// Checks that every required field of `row` was written and sets the id's value: what
    /// every encoding of a row (this one, ``MemberwiseEncoding``) ends with.
    static func complete<ID: ModelID>(_ row: inout [SQLValue], id: ID, slots: Slots) throws {
        // A required field still NULL was never encoded, or encoded as nil.
        for slot in slots.required {
            if case .null = row[slot + 1] {
                throw TroveError.missingField(field: slots.definitions[slot].name)
            }
        }
        // NULL: an unassigned id, chosen in the write (DocumentStore.assignIDs).
        row[0] = id.isUnassigned ? .null : id.documentID.sqlValue
    }

    /// A `[String]` as the JSON array text a `.json` field stores.
    static func jsonText(_ strings: [String]) -> String {
        var text = "["
        for (offset, item) in strings.enumerated() {
            if offset > 0 { text += "," }
            JSONCoding.quote(item, into: &text)
        }
        return text + "]"
    }

    /// The stored value of the types written straight into their column that `encode<T>` sees
    /// only at run time; nil when the general path must decide (and name any error).
    static func direct<T: Encodable>(_ value: T, _ type: FieldType) -> SQLValue? {
        switch type {
        case .date where ObjectIdentifier(T.self) == dateType:
            return .real(unsafeBitCast(value, to: Date.self).timeIntervalSince1970)
        case .json where ObjectIdentifier(T.self) == stringArrayType:
            return .text(ModelRowEncoder.jsonText(unsafeBitCast(value, to: [String].self)))
        default:
            return nil
        }
    }

    /// The general path: `value` as a ``Value``, bound by ``FieldCodec`` for `definition`
    /// (which checks it: references, vector sizes, ranges).
    static func general<T: Encodable>(_ value: T, for definition: FieldDefinition) throws
        -> SQLValue
    {
        let encoded: Value
        if let scalar = ValueEncoder.scalar(value, inJSON: false) {
            encoded = scalar
        } else if definition.type.vectorDimension != nil, let vector = value as? [Float] {
            encoded = .vector(vector)
        } else {
            encoded = try ValueEncoder.json(value)
        }
        return try FieldCodec.bind(encoded, for: definition)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsDocument = true
        return ValueEncoder().unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        needsDocument = true
        return ValueEncoder().singleValueContainer()
    }

    /// The slot of `name`: the expected one, or looked up (nil for the id, bound from
    /// `model.id`).
    fileprivate func slot(_ name: String) throws -> Int? {
        let order = slots.order
        if next < order.count, order[next].name == name {
            next += 1
            return order[next - 1].slot
        }
        if name == "id" { return nil }
        guard let slot = slots.byProperty[name] else {
            throw TroveError.unknownField(
                field: name, known: ["id"] + slots.definitions.map(\.name))
        }
        return slot
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ModelRowEncoder
        var codingPath: [any CodingKey] { [] }

        /// The slot of `key` and its field's plain type (``Slots/plainTypes``), nil for the id.
        private func field(_ key: Key) throws -> (slot: Int, type: FieldType?)? {
            guard let slot = try encoder.slot(key.stringValue) else { return nil }
            return (slot, encoder.slots.plainTypes[slot])
        }

        mutating func encodeNil(forKey key: Key) throws {
            if let (slot, _) = try field(key) { encoder.row[slot + 1] = .null }
        }

        // The common scalars straight into their stored value when the field is the plain
        // column they map to (no reference); every other pairing takes the general path.

        mutating func encode(_ value: String, forKey key: Key) throws {
            guard let (slot, type) = try field(key) else { return }
            if type == .text {
                encoder.row[slot + 1] = .text(value)
            } else {
                try general(value, slot)
            }
        }

        mutating func encode(_ value: Int, forKey key: Key) throws {
            try integer(Int64(value), value, key)
        }
        mutating func encode(_ value: Int64, forKey key: Key) throws {
            try integer(value, value, key)
        }

        private func integer<T: Encodable>(_ value: Int64, _ original: T, _ key: Key) throws {
            guard let (slot, type) = try field(key) else { return }
            if type == .integer {
                encoder.row[slot + 1] = .integer(value)
            } else {
                try general(original, slot)
            }
        }

        mutating func encode(_ value: Double, forKey key: Key) throws {
            guard let (slot, type) = try field(key) else { return }
            if type == .real, value.isFinite {
                encoder.row[slot + 1] = .real(value)
            } else {
                try general(value, slot)
            }
        }

        mutating func encode(_ value: Bool, forKey key: Key) throws {
            guard let (slot, type) = try field(key) else { return }
            if type == .bool {
                encoder.row[slot + 1] = .integer(value ? 1 : 0)
            } else {
                try general(value, slot)
            }
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            guard let (slot, type) = try field(key) else { return }
            if let type, let direct = direct(value, type) {
                encoder.row[slot + 1] = direct
            } else {
                try general(value, slot)
            }
        }

        private func direct<T: Encodable>(_ value: T, _ type: FieldType) -> SQLValue? {
            ModelRowEncoder.direct(value, type)
        }

        /// The general path (``ModelRowEncoder/general(_:for:)``).
        private func general<T: Encodable>(_ value: T, _ slot: Int) throws {
            encoder.row[slot + 1] = try ModelRowEncoder.general(
                value, for: encoder.slots.definitions[slot])
        }

        // @forward(keyed-encode) begin (the other primitive types, each through the generic path)
        mutating func encode(_ value: Float, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: Int8, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: Int16, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: Int32, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: UInt, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: UInt8, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: UInt16, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: UInt32, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        mutating func encode(_ value: UInt64, forKey key: Key) throws {
            try encodeGeneric(value, key)
        }
        // @forward end

        private func encodeGeneric<T: Encodable>(_ value: T, _ key: Key) throws {
            guard let (slot, _) = try field(key) else { return }
            try general(value, slot)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        )
            -> KeyedEncodingContainer<NestedKey>
        {
            encoder.needsDocument = true
            return ValueEncoder().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.needsDocument = true
            return ValueEncoder().unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            encoder.needsDocument = true
            return ValueEncoder()
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            encoder.needsDocument = true
            return ValueEncoder()
        }
    }
}

/// The types ``ModelRowEncoder`` writes straight into their column that `encode<T>` sees only
/// at run time, identified once (a generic type's metatype is otherwise looked up at every use).
private let dateType = ObjectIdentifier(Date.self)
private let stringArrayType = ObjectIdentifier([String].self)
