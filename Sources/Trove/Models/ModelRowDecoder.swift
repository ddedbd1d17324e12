import Foundation
import TroveSQLite

/// Decodes models straight from the statement rows of a fetch (the store's full selection:
/// `id, _version, <fields in schema order>`), without building a ``Document`` first, through
/// the model type's plan (``Plan``): where each property's column is and what is stored there,
/// computed once per type. `init(from:)` stays the contract; the plan only makes its calls
/// cheap:
///
/// - keys are matched by position: a synthesized `init(from:)` asks for its properties in the
///   same order every time (the order the ``ShapeRecorder`` saw), so the n-th call is checked
///   against the n-th planned name, a comparison of two short strings, not a dictionary lookup;
///   a custom `init(from:)` asking in another order falls back to the lookup and decodes the
///   same;
/// - the common types are read from their columns directly (text, integers, reals, booleans,
///   dates, UUIDs, `[String]` JSON arrays, vectors); anything else goes through ``FieldCodec``
///   and ``ValueDecoder``, the general path, with the same results (the differential tests).
///
/// One decoder serves every row of a fetch (``reset(to:)``): it is valid only while its
/// statement stays on the row, and used by one thread at a time.
final class ModelRowDecoder: Decoder {
    /// Where each property's column is in the row, and the order `init(from:)` asks for them.
    struct Plan: Sendable {
        /// What a column stores, as far as the direct reads care (trivial to copy, unlike the
        /// field definition the general path reads from ``Plan/definitions``).
        enum Stored: Equatable, Sendable {
            case id, text, integer, real, bool, date, json, vector(dimension: Int), other
        }

        /// One property, the id included (its column is 0, with no field definition).
        struct Step: Sendable {
            let name: String
            let index: Int
            let stored: Stored
            /// Its field in ``Plan/definitions``; -1 for the id.
            let field: Int
        }

        var byProperty: [String: Step]
        var steps: [Step]
        var definitions: [FieldDefinition]
        var idKind: IDKind

        /// - Parameters:
        ///   - order: the property names in the order `init(from:)` decodes them, `id` included.
        ///   - columns: each stored property's column and field, by property name.
        init(order: [String], columns: [String: (index: Int, definition: FieldDefinition)], idKind: IDKind) {
            var byProperty: [String: Step] = ["id": Step(name: "id", index: 0, stored: .id, field: -1)]
            var definitions: [FieldDefinition] = []
            for (name, column) in columns.sorted(by: { $0.value.index < $1.value.index }) {
                let stored: Stored = switch column.definition.type {
                case .text: .text
                case .integer: .integer
                case .real: .real
                case .bool: .bool
                case .date: .date
                case .json: .json
                case .vector(let dimension, _): .vector(dimension: dimension)
                case .data, .point: .other
                }
                byProperty[name] = Step(name: name, index: column.index, stored: stored, field: definitions.count)
                definitions.append(column.definition)
            }
            self.byProperty = byProperty
            self.steps = order.compactMap { byProperty[$0] }
            self.definitions = definitions
            self.idKind = idKind
        }
    }

    private(set) var statement: Statement
    let plan: Plan
    /// The next planned step: where the next key is expected.
    fileprivate var next = 0
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(statement: Statement, plan: Plan) {
        self.statement = statement
        self.plan = plan
    }

    /// Moves on to the row `statement` is on now.
    func reset(to statement: Statement) {
        self.statement = statement
        next = 0
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a model is a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a model is a keyed container"))
    }

    /// The planned step of `name`: the expected one, the one just taken (`decodeIfPresent`
    /// asks twice), or, for an `init(from:)` with an order of its own, the one looked up.
    fileprivate func step(_ name: String) -> Plan.Step? {
        let steps = plan.steps
        if next < steps.count, steps[next].name == name {
            next += 1
            return steps[next - 1]
        }
        if next > 0, steps[next - 1].name == name { return steps[next - 1] }
        return plan.byProperty[name]
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: ModelRowDecoder
        var statement: Statement { decoder.statement }
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { decoder.plan.steps.compactMap { Key(stringValue: $0.name) } }

        func contains(_ key: Key) -> Bool { decoder.plan.byProperty[key.stringValue] != nil }

        private func column(_ key: Key) throws -> Plan.Step {
            guard let step = decoder.step(key.stringValue) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no column for \(key.stringValue)"))
            }
            return step
        }

        /// The column of a required value, which must not be null.
        private func present(_ key: Key, _ type: Any.Type) throws -> Plan.Step {
            let step = try column(key)
            if statement.isNull(at: step.index) {
                throw DecodingError.valueNotFound(type, .init(codingPath: [key], debugDescription: "\(key.stringValue) is null"))
            }
            return step
        }

        func decodeNil(forKey key: Key) throws -> Bool { statement.isNull(at: try column(key).index) }

        // The common scalars straight from their columns (the schema fixed their types); any
        // other pairing takes the general path.

        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            let step = try present(key, type)
            if step.stored == .text || (step.stored == .id && decoder.plan.idKind != .int64) {
                return statement.string(at: step.index)!
            }
            return try general(type, step, key)
        }

        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            let step = try present(key, type)
            if step.stored == .integer || (step.stored == .id && decoder.plan.idKind == .int64) {
                return Int(statement.int64(at: step.index))
            }
            return try general(type, step, key)
        }

        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            let step = try present(key, type)
            if step.stored == .integer || (step.stored == .id && decoder.plan.idKind == .int64) {
                return statement.int64(at: step.index)
            }
            return try general(type, step, key)
        }

        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            let step = try present(key, type)
            if step.stored == .real { return statement.double(at: step.index) }
            return try general(type, step, key)
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            let step = try present(key, type)
            if step.stored == .bool { return statement.int64(at: step.index) != 0 }
            return try general(type, step, key)
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let step = try present(key, type)
            if let direct = direct(type, step) { return direct }
            return try general(type, step, key)
        }

        /// The types read straight from their column when it holds what they need; nil when
        /// the general path must decide (and name any error).
        private func direct<T: Decodable>(_ type: T.Type, _ step: Plan.Step) -> T? {
            switch step.stored {
            case .date where T.self == Date.self:
                return unsafeBitCast(Date(timeIntervalSince1970: statement.double(at: step.index)), to: T.self)
            case .text where T.self == UUID.self:
                return statement.string(at: step.index).flatMap(UUID.init(uuidString:)).map { unsafeBitCast($0, to: T.self) }
            case .json where T.self == [String].self:
                return statement.withBlob(at: step.index) { bytes in
                    bytes.flatMap { JSONStringArray.parse($0) { $0 } }.map { unsafeBitCast($0, to: T.self) }
                }
            case .vector(let dimension) where T.self == [Float].self:
                return statement.withBlob(at: step.index) { bytes in
                    bytes.flatMap { VectorBlob.vector($0, dimension: dimension) }.map { unsafeBitCast($0, to: T.self) }
                }
            default:
                return nil
            }
        }

        /// The general path: the column as a ``Value``, decoded by ``ValueDecoder``.
        private func general<T: Decodable>(_ type: T.Type, _ step: Plan.Step, _ key: Key) throws -> T {
            try ValueDecoder.decode(type, from: value(step), inJSON: false, codingPath: [key])
        }

        private func value(_ step: Plan.Step) -> Value {
            guard step.field >= 0 else {
                return (DocumentID.read(statement.value(at: 0), kind: decoder.plan.idKind) ?? .int(statement.int64(at: 0))).value
            }
            return FieldCodec.read(statement, column: step.index, as: decoder.plan.definitions[step.field].type)
        }

        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try decodeNil(forKey: key) ? nil : decode(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try decodeNil(forKey: key) ? nil : decode(type, forKey: key)
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try decodeNil(forKey: key) ? nil : decode(type, forKey: key)
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try decodeNil(forKey: key) ? nil : decode(type, forKey: key)
        }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try decodeNil(forKey: key) ? nil : decode(type, forKey: key)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try decodeNil(forKey: key) ? nil : decode(type, forKey: key)
        }

        // @forward(keyed-decode) begin (the other primitive types, each through the generic path)
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try generic(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try genericIfPresent(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try generic(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try genericIfPresent(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try generic(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try genericIfPresent(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try generic(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try genericIfPresent(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try generic(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try genericIfPresent(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try generic(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try genericIfPresent(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try generic(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try genericIfPresent(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try generic(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try genericIfPresent(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try generic(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try genericIfPresent(type, key) }
        // @forward end

        private func generic<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
            try general(type, try present(key, type), key)
        }
        private func genericIfPresent<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
            try decodeNil(forKey: key) ? nil : generic(type, key)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            try ValueDecoder(value(try column(key)), inJSON: false, codingPath: [key]).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ValueDecoder(value(try column(key)), inJSON: false, codingPath: [key]).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            throw DecodingError.keyNotFound(Key(stringValue: "super")!, .init(codingPath: [], debugDescription: "models have no super"))
        }
        func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(value(try column(key)), inJSON: false, codingPath: [key]) }
    }
}
