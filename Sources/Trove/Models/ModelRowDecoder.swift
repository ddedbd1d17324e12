import Foundation
import TroveSQLite

/// Decodes a model straight from the statement row of a fetch (the store's full selection:
/// `id, _version, <fields in schema order>`), without building a ``Document`` first: scalars are
/// read from their columns, JSON and vectors through ``FieldCodec`` and ``ValueDecoder``.
///
/// Valid only while the statement stays on the row.
struct ModelRowDecoder: Decoder {
    /// Where each property's column is in the row.
    struct Columns: Sendable {
        var byProperty: [String: (index: Int, definition: FieldDefinition)]
        var idKind: IDKind
    }

    let statement: Statement
    let columns: Columns
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(statement: statement, columns: columns))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a model is a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a model is a keyed container"))
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let statement: Statement
        let columns: Columns
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { (["id"] + columns.byProperty.keys).compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { key.stringValue == "id" || columns.byProperty[key.stringValue] != nil }

        private func column(_ key: Key) throws -> (index: Int, definition: FieldDefinition?) {
            if key.stringValue == "id" { return (0, nil) }
            guard let column = columns.byProperty[key.stringValue] else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no column for \(key.stringValue)"))
            }
            return column
        }

        func decodeNil(forKey key: Key) throws -> Bool { statement.isNull(at: try column(key).index) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decodeValue(type, forKey: key) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try decodeValueIfPresent(type, forKey: key) }

        private func decodeValueIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard !statement.isNull(at: try column(key).index) else { return nil }
            return try decodeValue(type, forKey: key)
        }

        private func decodeValue<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let (index, definition) = try column(key)
            if statement.isNull(at: index) {
                throw DecodingError.valueNotFound(T.self, .init(codingPath: [key], debugDescription: "\(key.stringValue) is null"))
            }
            // The common scalars straight from their columns (the schema fixed their types).
            switch type {
            case is String.Type where definition?.type == .text || definition == nil: return statement.string(at: index)! as! T
            case is Int.Type where definition?.type == .integer || definition == nil: return Int(statement.int64(at: index)) as! T
            case is Int64.Type where definition?.type == .integer || definition == nil: return statement.int64(at: index) as! T
            case is Double.Type where definition?.type == .real: return statement.double(at: index) as! T
            case is Bool.Type where definition?.type == .bool: return (statement.int64(at: index) != 0) as! T
            default: break
            }
            let value: Value
            if let definition {
                value = FieldCodec.read(statement, column: index, as: definition)
            } else {
                value = (DocumentID.read(statement.value(at: 0), kind: columns.idKind) ?? .int(statement.int64(at: 0))).value
            }
            return try ValueDecoder.decode(type, from: value, inJSON: false, codingPath: [key])
        }

        // @forward(keyed-decode) begin (one per primitive type, each forwarding to the generic helper)
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try decodeValueIfPresent(type, forKey: key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeValue(type, forKey: key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try decodeValueIfPresent(type, forKey: key) }
        // @forward end

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try ValueDecoder(try value(key), inJSON: false, codingPath: [key]).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ValueDecoder(try value(key), inJSON: false, codingPath: [key]).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            throw DecodingError.keyNotFound(Key(stringValue: "super")!, .init(codingPath: [], debugDescription: "models have no super"))
        }
        func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(try value(key), inJSON: false, codingPath: [key]) }

        private func value(_ key: Key) throws -> Value {
            let (index, definition) = try column(key)
            guard let definition else { return statement.value(at: 0).isNull ? .null : .string(statement.string(at: 0) ?? "") }
            return FieldCodec.read(statement, column: index, as: definition)
        }
    }
}
