import Foundation
import TroveSQLite

/// One stored property of a model: its name in code, its column, its declared field.
struct ModelProperty: Hashable, Sendable {
    var name: String
    var kind: PropertyKind
    var definition: FieldDefinition
    var column: String { definition.name }
}

/// A model key path resolved onto the collection: the engine's field reference, and what the
/// translators need to know about it.
struct ModelField: Hashable, Sendable {
    var field: Field
    /// The declared type when the key path names a column itself (nil inside JSON and for the id).
    var type: FieldType?
    /// Whether the stored value can be null (an optional column, or any JSON path).
    var isNullable: Bool
    /// Whether values compare as they are stored in a column (dates as dates) or inside JSON
    /// (dates as seconds since 1970).
    var isInJSON: Bool { field.path != nil }
}

/// Resolves key paths of one model type onto fields, for ``PredicateTranslator``.
protocol ModelFieldResolver: Sendable {
    func field(_ keyPath: AnyKeyPath) throws -> ModelField
    func extend(_ base: ModelField, with names: [String], printed: Any) throws -> ModelField
}

/// A model type's schema, derived once from its Codable shape and its ``ModelOptions``: the
/// document schema it is stored with, its key paths resolved to fields, and the coding between
/// models and documents.
final class ModelSchema<M: PersistentModel>: ModelFieldResolver {
    let documentSchema: DocumentSchema
    /// The stored properties other than `id`, in the order `init(from:)` decodes them.
    let properties: [ModelProperty]
    let propertiesByName: [String: ModelProperty]
    /// Whether any property is stored under another column name.
    let hasRenames: Bool
    /// The text property embedded on save and the vector property it fills.
    let embeddedText: String?
    let embeddedVector: String?
    /// Where each property is in a fetched row, and the order they are decoded in, for
    /// ``ModelRowDecoder``.
    let rowColumns: ModelRowDecoder.Plan
    /// Where each property goes in a written row, for ``ModelRowEncoder``.
    let rowSlots: ModelRowEncoder.Slots
    /// How a fetched row is written straight into the model's properties, when `init(from:)`
    /// does nothing else (nil: every row goes through `init(from:)`).
    let memberwiseDecoding: MemberwiseDecoding?
    /// How a written model's row is read straight from its properties, when `encode(to:)` does
    /// nothing else (nil: every model goes through `encode(to:)`).
    let memberwiseEncoding: MemberwiseEncoding?

    /// The schema of `M`, derived on first use and cached for the life of the process.
    ///
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` when the type cannot be stored, and
    ///   the errors of ``DocumentSchema/validate()``.
    static func shared() throws -> ModelSchema<M> {
        try ModelSchemaCache.shared.schema(for: M.self) { try ModelSchema<M>() }
    }

    init() throws {
        let typeName = String(describing: M.self)
        func invalid(_ reason: String) -> TroveError {
            .invalidModel(type: typeName, reason: reason)
        }
        let options = M.declaredOptions
        guard options.problems.isEmpty else {
            throw invalid(options.problems.joined(separator: "; "))
        }

        let recorder = ShapeRecorder()
        do {
            _ = try M(from: recorder)
        } catch let error as TroveError {
            throw error
        } catch {
            throw invalid(
                "its init(from:) fails on placeholder values (\(error)); a model's decoding must accept any stored value"
            )
        }
        guard case .keyed = recorder.shape else {
            throw invalid("a model is decoded from a keyed container (a struct with properties)")
        }
        guard let id = recorder.properties.first(where: { $0.name == "id" }) else {
            throw invalid("it has no stored property named id")
        }
        let idMatches =
            switch (M.ID.idKind, id.kind) {
            case (.int64, .integer), (.uuid, .uuid), (.string, .text): true
            default: false
            }
        guard idMatches, !id.isOptional else {
            throw invalid("id must be a non-optional Int64, UUID or String")
        }

        var properties: [ModelProperty] = []
        for recorded in recorder.properties where recorded.name != "id" {
            let column = options.columns[recorded.name] ?? recorded.name
            do {
                try DocumentSchema.validate(fieldName: column)
            } catch {
                throw invalid("property \(recorded.name) cannot be a column name: \(error)")
            }
            let type: FieldType
            if let vector = options.vectors[recorded.name] {
                guard recorded.kind == .floats else {
                    throw invalid("vector property \(recorded.name) must be [Float] or [Float]?")
                }
                type = .vector(dimension: vector.dimension, metric: vector.metric)
            } else {
                type =
                    switch recorded.kind {
                    case .text, .url, .uuid: .text
                    case .integer: .integer
                    case .real, .decimal: .real
                    case .bool: .bool
                    case .date: .date
                    case .data: .data
                    case .floats, .json: .json
                    }
            }
            properties.append(
                ModelProperty(
                    name: recorded.name, kind: recorded.kind,
                    definition: FieldDefinition(
                        column, type, optional: recorded.isOptional,
                        reference: options.references[recorded.name])))
        }
        for name in options.columns.keys where !properties.contains(where: { $0.name == name }) {
            throw invalid("column(_:named:) names \(name), which is not a stored property")
        }
        for name in options.references.keys where !properties.contains(where: { $0.name == name }) {
            throw invalid("reference(_:to:onDelete:) names \(name), which is not a stored property")
        }
        for name in options.vectors.keys where !properties.contains(where: { $0.name == name }) {
            throw invalid("vector(_:dimension:) names \(name), which is not a stored property")
        }
        let byName = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })

        func field(_ names: [String]) throws -> Field {
            guard let first = names.first, let property = byName[first] else {
                throw invalid("\(names.joined(separator: ".")) is not a stored property")
            }
            guard names.count > 1 else { return Field(property.column) }
            guard property.definition.type == .json else {
                throw invalid("\(first) is not a nested value; it has no \(names[1])")
            }
            return Field(property.column, path: "$." + names.dropFirst().joined(separator: "."))
        }
        var indexes: [IndexDefinition] = []
        for index in options.indexes {
            let keys = try index.keys.map(field)
            if keys.count == 1, keys[0].path == nil,
                let offset = properties.firstIndex(where: { $0.column == keys[0].name })
            {
                if index.unique {
                    properties[offset].definition.isUnique = true
                } else {
                    properties[offset].definition.isIndexed = true
                }
            } else {
                indexes.append(IndexDefinition(keys, unique: index.unique))
            }
        }
        var fullText: FullTextDefinition?
        if !options.fullTextNames.isEmpty {
            var definition = FullTextDefinition(
                fields: try options.fullTextNames.map { try field([$0]).name },
                tokenizer: options.tokenizer)
            definition.weights = options.fullTextNames.map { options.fullTextWeights[$0] ?? 1 }
            fullText = definition
        }
        var vectorIndexes: [String: IndexKind] = [:]
        for (name, vector) in options.vectors where vector.index != .flat {
            vectorIndexes[try field([name]).name] = vector.index
        }
        if let (text, vector) = options.embedding {
            guard byName[text]?.definition.type == .text else {
                throw invalid("embedding(of:) needs a text property; \(text) is not one")
            }
            guard byName[vector]?.definition.type.vectorDimension != nil else {
                throw invalid(
                    "embedding(into:) needs a property declared with vector(_:dimension:); \(vector) is not one"
                )
            }
        }
        let final = Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        self.properties = properties
        self.propertiesByName = final
        self.hasRenames = properties.contains { $0.name != $0.column }
        self.embeddedText = options.embedding?.text
        self.embeddedVector = options.embedding?.vector
        self.rowSlots = ModelRowEncoder.Slots(
            byProperty: Dictionary(
                properties.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a }),
            definitions: properties.map(\.definition), order: recorder.properties.map(\.name))
        let rowColumns = ModelRowDecoder.Plan(
            order: recorder.properties.map(\.name),
            columns: Dictionary(
                properties.enumerated().map { ($1.name, (2 + $0, $1.definition)) },
                uniquingKeysWith: { a, _ in a }),
            idKind: M.ID.idKind)
        self.rowColumns = rowColumns
        let memberwiseDecoding =
            options.codesThroughConformance ? nil : MemberwiseDecoding(M.self, columns: rowColumns)
        self.memberwiseDecoding = memberwiseDecoding
        self.memberwiseEncoding = memberwiseDecoding.flatMap { [rowSlots] in
            MemberwiseEncoding(M.self, decoding: $0, slots: rowSlots)
        }
        self.documentSchema = DocumentSchema(
            id: M.ID.idKind, fields: properties.map(\.definition), indexes: indexes,
            fullText: fullText,
            vectorIndexes: vectorIndexes)
        try documentSchema.validate()
    }

    // MARK: Key paths

    /// The field a model key path reads.
    ///
    /// - Throws: ``TroveError/unsupportedPredicate(node:reason:)`` for key paths through
    ///   computed properties or into values that are not stored as JSON.
    func field(_ keyPath: AnyKeyPath) throws -> ModelField {
        try field(KeyPathNames.components(keyPath), printed: keyPath)
    }

    func field(_ names: [String], printed: Any) throws -> ModelField {
        guard let first = names.first else {
            throw TroveError.unsupportedPredicate(
                node: "\(printed)", reason: "the model itself is not a field")
        }
        if first == "id" {
            guard names.count == 1 else {
                throw TroveError.unsupportedPredicate(
                    node: "\(printed)", reason: "the id has no properties")
            }
            return ModelField(field: .id, type: nil, isNullable: false)
        }
        guard let property = propertiesByName[first] else {
            throw TroveError.unsupportedPredicate(
                node: "\(printed)", reason: "\(first) is not a stored property of \(M.self)")
        }
        guard names.count > 1 else {
            return ModelField(
                field: Field(property.column), type: property.definition.type,
                isNullable: property.definition.isOptional)
        }
        return try extend(
            ModelField(
                field: Field(property.column), type: property.definition.type,
                isNullable: property.definition.isOptional),
            with: Array(names.dropFirst()), printed: printed)
    }

    /// A path further into a nested value: `address` + `city` -> `address.city`.
    func extend(_ base: ModelField, with names: [String], printed: Any) throws -> ModelField {
        if names.isEmpty { return base }
        if base.field.path == nil {
            guard base.type == .json else {
                throw TroveError.unsupportedPredicate(
                    node: "\(printed)",
                    reason:
                        "\(base.field.name) is not a nested value stored as JSON, so it has no \(names[0])"
                )
            }
        }
        let path = (base.field.path ?? "$") + "." + names.joined(separator: ".")
        try FieldResolver.validate(path: path, field: base.field.name)
        return ModelField(field: Field(base.field.name, path: path), type: nil, isNullable: true)
    }

    // MARK: Coding

    /// The document storing `model`.
    func encode(_ model: M) throws -> Document {
        let encoder = ValueEncoder(inJSON: false)
        try model.encode(to: encoder)
        guard case .object(var members) = encoder.value else {
            throw TroveError.invalidModel(
                type: String(describing: M.self),
                reason: "it does not encode into a keyed container")
        }
        members.removeValue(forKey: "id")
        var fields: [String: Value] = [:]
        fields.reserveCapacity(members.count)
        for (name, value) in members {
            guard let property = propertiesByName[name] else {
                // Caught by the store as an unknown field, named.
                fields[name] = value
                continue
            }
            if property.definition.type.vectorDimension != nil, case .array(let items) = value {
                fields[property.column] = .vector(items.map { Float($0.doubleValue ?? .nan) })
            } else {
                fields[property.column] = value
            }
        }
        return Document(id: model.id.documentID, fields)
    }

    /// The model a document stores.
    ///
    /// - Throws: `DecodingError` when the document does not fit the type.
    func decode(_ document: Document) throws -> M {
        var members: [String: Value]
        if hasRenames {
            members = [:]
            members.reserveCapacity(properties.count + 1)
            for property in properties { members[property.name] = document[property.column] }
        } else {
            members = document.fields
        }
        members["id"] = document.id.value
        return try M(from: ValueDecoder(.object(members), inJSON: false))
    }

    /// The values of `model`'s row in `store` (its ``DocumentStore/writeColumns``), checked as
    /// a document's would be; an unassigned id (``ModelID/unassigned``) is NULL, for the write
    /// to choose (``DocumentStore/assignIDs(_:on:)``).
    func row(_ model: M, in store: DocumentStore) throws -> [SQLValue] {
        if let memberwiseEncoding {
            return try withUnsafeBytes(of: model) {
                try memberwiseEncoding.row(at: $0.baseAddress!, id: model.id)
            }
        }
        if let row = try ModelRowEncoder.row(model, slots: rowSlots) { return row }
        return try store.newRowValues(try encode(model), unassigned: model.id.isUnassigned)
    }

    /// The ``row(_:in:)`` of each model, read in place: a `map` over the models, generic code
    /// here, copies each model first (retaining every property) and destroys the copy after, as
    /// `withUnsafeBytes(of:)` does; the properties are read where the array keeps them.
    func rows(_ models: [M], in store: DocumentStore) throws -> [[SQLValue]] {
        try models.withUnsafeBufferPointer { buffer in
            var rows: [[SQLValue]] = []
            rows.reserveCapacity(buffer.count)
            for i in buffer.indices {
                if let memberwiseEncoding {
                    // `pointee` lends the model (its address); `buffer[i]` would copy it.
                    let model = buffer.baseAddress! + i
                    rows.append(
                        try memberwiseEncoding.row(
                            at: UnsafeRawPointer(model), id: model.pointee.id))
                } else {
                    rows.append(try row(buffer[i], in: store))
                }
            }
            return rows
        }
    }

    /// Writes `models`, whose ``row(_:in:)``s are `rows`, inside the caller's transaction:
    /// unassigned ids are chosen first (``DocumentStore/assignIDs(_:on:)``).
    ///
    /// - Returns: every model's id, in order.
    func write(
        _ models: [M], rows: inout [[SQLValue]], mode: WriteMode, to store: DocumentStore,
        on connection: Connection
    ) throws -> [M.ID] {
        let fresh = try store.assignIDs(&rows, on: connection)
        try store.write(rows: rows, mode: mode, on: connection) { [self] i in
            var document = try encode(models[i])
            if let id = fresh[i] { document.id = id }
            return document
        }
        // Each id read in place (see rows(_:in:)).
        var ids = models.withUnsafeBufferPointer { buffer in buffer.indices.map { buffer[$0].id } }
        for (i, id) in fresh {
            guard let typed = M.ID(documentID: id) else {
                preconditionFailure("\(id) is not a \(M.ID.self)")
            }
            ids[i] = typed
        }
        return ids
    }

    /// The models of an unranked query, and the cursor for the next page: written straight
    /// into place where the type allows it (``memberwiseDecoding``), else each through `init(from:)`.
    func fetch(
        _ query: Query, in store: DocumentStore, on connection: Connection, wantsCursor: Bool
    ) throws -> (
        rows: [M], next: Cursor?
    ) {
        var decoder: ModelRowDecoder?
        guard let memberwise = memberwiseDecoding else {
            return try store.fetch(query, on: connection, wantsCursor: wantsCursor) { row, _ in
                try decode(row: row, reusing: &decoder)
            }
        }
        var rows = MemberwiseDecoding.Rows(of: M.self)
        defer { rows.free(as: M.self) }
        let next = try store.forEachRow(query, on: connection, wantsCursor: wantsCursor) { row, _ in
            let place = rows.next()
            if !memberwise.write(row, to: place) {
                place.initializeMemory(
                    as: M.self, repeating: try decode(row: row, reusing: &decoder), count: 1)
            }
            rows.commit()
        }
        return (rows.take(as: M.self), next)
    }

    /// The model in the row a fetch's statement is on (the store's full selection), through
    /// `init(from:)` and `decoder`: made on the first row of a fetch, moved to each next row.
    func decode(row statement: Statement, reusing decoder: inout ModelRowDecoder?) throws -> M {
        if let decoder {
            decoder.reset(to: statement)
            return try M(from: decoder)
        }
        let made = ModelRowDecoder(statement: statement, plan: rowColumns)
        decoder = made
        return try M(from: made)
    }
}

/// The derived schemas of every model type used in the process, by type.
///
/// `@unchecked Sendable`: `storage` is only touched while holding `lock`; the schemas in it are
/// immutable Sendable values.
final class ModelSchemaCache: @unchecked Sendable {
    static let shared = ModelSchemaCache()
    private let lock = NSLock()
    private var storage: [ObjectIdentifier: any Sendable] = [:]

    func schema<M: PersistentModel>(for type: M.Type, derive: () throws -> ModelSchema<M>) throws
        -> ModelSchema<M>
    {
        if let known = lock.withLock({ storage[ObjectIdentifier(type)] }) as? ModelSchema<M> {
            return known
        }
        let schema = try derive()
        lock.withLock { storage[ObjectIdentifier(type)] = schema }
        return schema
    }
}
