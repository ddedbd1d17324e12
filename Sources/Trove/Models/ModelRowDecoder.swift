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
        /// One property's column, the id's included (column 0): trivial to copy, so a read
        /// retains nothing.
        struct Column: Sendable {
            let index: Int
            /// What the column stores (the id: an integer or text, as its kind says).
            let type: FieldType
            /// The property's place in ``Plan/names``.
            let position: Int
            var isID: Bool { index == 0 }
        }

        /// The property names in the order `init(from:)` decodes them, and their columns.
        var names: [String]
        var columns: [Column]
        var byProperty: [String: Column]
        var idKind: IDKind

        /// - Parameters:
        ///   - order: the property names in the order `init(from:)` decodes them, `id` included.
        ///   - columns: each stored property's column and field, by property name.
        init(
            order: [String], columns: [String: (index: Int, definition: FieldDefinition)],
            idKind: IDKind
        ) {
            var types: [String: (index: Int, type: FieldType)] = [
                "id": (0, idKind == .int64 ? .integer : .text)
            ]
            for (name, column) in columns {
                precondition(column.index > 0, "column 0 is the id's")
                types[name] = (column.index, column.definition.type)
            }
            names = order.filter { types[$0] != nil }
            self.columns = names.enumerated().map {
                Column(index: types[$1]!.index, type: types[$1]!.type, position: $0)
            }
            byProperty = Dictionary(
                zip(names, self.columns), uniquingKeysWith: { first, _ in first })
            self.idKind = idKind
        }
    }

    /// What the reads need: the statement on its row, the plan, the next planned step. Kept
    /// apart from the decoder so the keyed container the decoder keeps for every row of a fetch
    /// (``container(keyedBy:)``) holds this and not the decoder: no reference cycle.
    final class Reader {
        /// A `let`: the same statement serves every row of a fetch, and a constant reference
        /// is read without retaining it at each column.
        let statement: Statement
        let plan: Plan
        /// ``Plan/names`` and ``Plan/columns``, kept here as well so a read reaches them directly.
        let names: [String]
        let columns: [Plan.Column]
        /// The next planned step: where the next key is expected.
        var next = 0

        init(statement: Statement, plan: Plan) {
            self.statement = statement
            self.plan = plan
            names = plan.names
            columns = plan.columns
        }

        /// The column of property `name`: the expected one, the one just taken, or, for an
        /// `init(from:)` with an order of its own, the one looked up.
        func column(_ name: String) -> Plan.Column? {
            if next < names.count, names[next] == name {
                next += 1
                return columns[next - 1]
            }
            if next > 0, names[next - 1] == name { return columns[next - 1] }
            return plan.byProperty[name]
        }

        /// The coding path of errors about `column`'s property.
        private func codingPath(_ column: Plan.Column) -> [any CodingKey] {
            [PropertyKey(stringValue: names[column.position])]
        }

        /// The value of `type` in `column`, read straight from the statement when the column
        /// stores it as the type wants; nil when the column is NULL or when the general path must
        /// decide (and name any error). One switch for every kind, so each read costs one check of
        /// what the plan says is stored there.
        func direct<T>(_ type: T.Type, _ column: Plan.Column) -> T? {
            let i = column.index
            switch column.type {
            case .text:
                if T.self == String.self {
                    return statement.string(at: i).map { unsafeBitCast($0, to: T.self) }
                }
                if T.self == UUID.self {
                    return statement.string(at: i).flatMap(UUID.init(uuidString:)).map {
                        unsafeBitCast($0, to: T.self)
                    }
                }
            case .integer where !statement.isNull(at: i):
                if T.self == Int.self {
                    return unsafeBitCast(Int(statement.int64(at: i)), to: T.self)
                }
                if T.self == Int64.self { return unsafeBitCast(statement.int64(at: i), to: T.self) }
            case .real where !statement.isNull(at: i):
                if T.self == Double.self {
                    return unsafeBitCast(statement.double(at: i), to: T.self)
                }
            case .bool where !statement.isNull(at: i):
                if T.self == Bool.self {
                    return unsafeBitCast(statement.int64(at: i) != 0, to: T.self)
                }
            case .date where !statement.isNull(at: i):
                if T.self == Date.self {
                    return unsafeBitCast(
                        Date(timeIntervalSince1970: statement.double(at: i)), to: T.self)
                }
            case .json:
                if ObjectIdentifier(T.self) == stringArrayType, let bytes = statement.bytes(at: i),
                    let strings = JSONStringArray.strings(bytes)
                {
                    return unsafeBitCast(strings, to: T.self)
                }
            case .vector(let dimension, _):
                if ObjectIdentifier(T.self) == floatArrayType, let bytes = statement.bytes(at: i),
                    let vector = VectorBlob.vector(bytes, dimension: dimension)
                {
                    return unsafeBitCast(vector, to: T.self)
                }
            default:
                break
            }
            return nil
        }

        /// The column as a ``Value``, for the general path.
        func value(_ column: Plan.Column) -> Value {
            guard !column.isID else {
                return
                    (DocumentID.read(statement.value(at: 0), kind: plan.idKind)
                    ?? .int(statement.int64(at: 0)))
                    .value
            }
            return FieldCodec.read(statement, column: column.index, as: column.type)
        }

        /// Every value goes through here: straight from its column (``direct(_:_:)``), or else
        /// through the general path: the column as a ``Value``, decoded by ``ValueDecoder``, with
        /// the same results (the differential tests). Generic over the type only (not the coding
        /// key), so each typed call is compiled for its type and the checks in `direct` fold away.
        func read<T: Decodable>(_ type: T.Type, _ column: Plan.Column) throws -> T {
            if let value = direct(type, column) { return value }
            if statement.isNull(at: column.index) {
                throw DecodingError.valueNotFound(
                    type,
                    .init(
                        codingPath: codingPath(column),
                        debugDescription: "\(names[column.position]) is null"))
            }
            return try ValueDecoder.decode(
                type, from: value(column), inJSON: false, codingPath: codingPath(column))
        }

        func readIfPresent<T: Decodable>(_ type: T.Type, _ column: Plan.Column) throws
            -> T?
        {
            if let value = direct(type, column) { return value }
            if statement.isNull(at: column.index) { return nil }
            return try ValueDecoder.decode(
                type, from: value(column), inJSON: false, codingPath: codingPath(column))
        }

        /// ``read(_:_:)`` for a type known only at run time (`decode<T>`): the ones `direct`
        /// reads are made concrete first, so their reads are the compiled ones.
        func readAny<T: Decodable>(_ type: T.Type, _ column: Plan.Column) throws -> T {
            switch ObjectIdentifier(T.self) {
            case dateType: unsafeBitCast(try read(Date.self, column), to: T.self)
            case uuidType: unsafeBitCast(try read(UUID.self, column), to: T.self)
            case stringArrayType: unsafeBitCast(try read([String].self, column), to: T.self)
            case floatArrayType: unsafeBitCast(try read([Float].self, column), to: T.self)
            default: try read(type, column)
            }
        }

        func readAnyIfPresent<T: Decodable>(_ type: T.Type, _ column: Plan.Column)
            throws -> T?
        {
            switch ObjectIdentifier(T.self) {
            case dateType:
                try readIfPresent(Date.self, column).map { unsafeBitCast($0, to: T.self) }
            case uuidType:
                try readIfPresent(UUID.self, column).map { unsafeBitCast($0, to: T.self) }
            case stringArrayType:
                try readIfPresent([String].self, column).map { unsafeBitCast($0, to: T.self) }
            case floatArrayType:
                try readIfPresent([Float].self, column).map { unsafeBitCast($0, to: T.self) }
            default: try readIfPresent(type, column)
            }
        }

    }

    private var reader: Reader
    var plan: Plan { reader.plan }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    /// The keyed container of the last row, reused by the next (a synthesized `init(from:)`
    /// asks for one per row with the same key type): making one allocates its box and looks up
    /// its generic types, a cost of every row otherwise. Stored as its one reference (the
    /// container is a struct around its box), with the key type it was made for.
    private var cachedContainer: AnyObject?
    private var cachedKeyType: ObjectIdentifier?

    init(statement: Statement, plan: Plan) {
        reader = Reader(statement: statement, plan: plan)
    }

    /// Moves on to the row `statement` is on now.
    func reset(to statement: Statement) {
        if statement === reader.statement {
            reader.next = 0
        } else {
            reader = Reader(statement: statement, plan: reader.plan)
            cachedContainer = nil
            cachedKeyType = nil
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if cachedKeyType == ObjectIdentifier(Key.self), let cachedContainer {
            return unsafeBitCast(cachedContainer, to: KeyedDecodingContainer<Key>.self)
        }
        let container = KeyedDecodingContainer(Keyed<Key>(decoder: reader))
        // Cached only while the standard library keeps the container one reference wide.
        if MemoryLayout<KeyedDecodingContainer<Key>>.size == MemoryLayout<AnyObject>.size {
            cachedContainer = unsafeBitCast(container, to: AnyObject.self)
            cachedKeyType = ObjectIdentifier(Key.self)
        }
        return container
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: [], debugDescription: "a model is a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Any.self, .init(codingPath: [], debugDescription: "a model is a keyed container"))
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: Reader
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { decoder.plan.names.compactMap { Key(stringValue: $0) } }

        func contains(_ key: Key) -> Bool { decoder.plan.byProperty[key.stringValue] != nil }

        private func column(_ key: Key) throws -> Plan.Column {
            guard let column = decoder.column(key.stringValue) else {
                throw DecodingError.keyNotFound(
                    key,
                    .init(codingPath: [key], debugDescription: "no column for \(key.stringValue)"))
            }
            return column
        }

        func decodeNil(forKey key: Key) throws -> Bool {
            decoder.statement.isNull(at: try column(key).index)
        }

        // @forward(keyed-decode) begin (one per primitive type, each forwarding to the generic helper)
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
            try decoder.read(type, column(key))
        }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
            try decoder.readIfPresent(type, column(key))
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try decoder.readAny(type, column(key))
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try decoder.readAnyIfPresent(type, column(key))
        }
        // @forward end

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
            throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try ValueDecoder(decoder.value(try column(key)), inJSON: false, codingPath: [key])
                .container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ValueDecoder(decoder.value(try column(key)), inJSON: false, codingPath: [key])
                .unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder {
            throw DecodingError.keyNotFound(
                Key(stringValue: "super")!,
                .init(codingPath: [], debugDescription: "models have no super"))
        }
        func superDecoder(forKey key: Key) throws -> any Decoder {
            ValueDecoder(decoder.value(try column(key)), inJSON: false, codingPath: [key])
        }
    }
}

/// A property's name as a coding key, for the coding paths of errors.
private struct PropertyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// The types ``ModelRowDecoder/direct(_:_:)`` reads that `decode<T>` sees only at run time,
/// identified once (a generic type's metatype is otherwise looked up at every use).
private let dateType = ObjectIdentifier(Date.self)
private let uuidType = ObjectIdentifier(UUID.self)
private let stringArrayType = ObjectIdentifier([String].self)
private let floatArrayType = ObjectIdentifier([Float].self)
