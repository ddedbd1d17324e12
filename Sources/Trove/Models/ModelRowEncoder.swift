import Foundation
import TroveSQLite

/// Encodes a model straight into the values of its row (`id, <fields in schema order>`), the
/// mirror of ``ModelRowDecoder``: each property's value is checked and bound by ``FieldCodec``
/// as a document's would be, without building a ``Document`` first.
final class ModelRowEncoder: Encoder {
    /// Property name -> position among the schema's fields.
    struct Slots: Sendable {
        var byProperty: [String: Int]
        var definitions: [FieldDefinition]
    }

    let slots: Slots
    var values: [Value?]
    /// Set when `encode(to:)` asks for something other than one flat keyed container (nested
    /// containers, super encoders): such models are encoded through a document instead.
    var needsDocument = false
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(slots: Slots) {
        self.slots = slots
        values = Array(repeating: nil, count: slots.definitions.count)
    }

    /// The row of `model`, id first; nil when the model must be encoded through a document.
    static func row<M: PersistentModel>(_ model: M, slots: Slots) throws -> [SQLValue]? {
        let encoder = ModelRowEncoder(slots: slots)
        try model.encode(to: encoder)
        if encoder.needsDocument { return nil }
        var row: [SQLValue] = [model.id.documentID.sqlValue]
        row.reserveCapacity(slots.definitions.count + 1)
        for (value, definition) in zip(encoder.values, slots.definitions) {
            if let value {
                row.append(try FieldCodec.bind(value, for: definition))
            } else if definition.isOptional {
                row.append(.null)
            } else {
                throw TroveError.missingField(field: definition.name)
            }
        }
        if case .string(let s) = model.id.documentID, s.isEmpty {
            throw TroveError.invalidValue(field: "id", reason: "a string id cannot be empty")
        }
        return row
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

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: ModelRowEncoder
        var codingPath: [any CodingKey] { [] }

        private func slot(_ key: Key) throws -> Int? {
            if key.stringValue == "id" { return nil }
            guard let slot = encoder.slots.byProperty[key.stringValue] else {
                throw TroveError.unknownField(field: key.stringValue, known: ["id"] + encoder.slots.definitions.map(\.name))
            }
            return slot
        }

        mutating func encodeNil(forKey key: Key) throws {
            if let slot = try slot(key) { encoder.values[slot] = .null }
        }

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try encodeValue(value, forKey: key) }

        private func encodeValue<T: Encodable>(_ value: T, forKey key: Key) throws {
            guard let slot = try slot(key) else { return }  // the id is bound from model.id
            if let scalar = ValueEncoder.scalar(value, inJSON: false) {
                encoder.values[slot] = scalar
            } else if encoder.slots.definitions[slot].type.vectorDimension != nil, let vector = value as? [Float] {
                encoder.values[slot] = .vector(vector)
            } else {
                encoder.values[slot] = try ValueEncoder.json(value)
            }
        }

        // @forward(keyed-encode) begin (one per primitive type, each forwarding to the generic helper)
        mutating func encode(_ value: Bool, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: String, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Double, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Float, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Int, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeValue(value, forKey: key) }
        // @forward end

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
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
