import Foundation
import TroveEmbeddings

extension Database {
    /// Opens the collection of a model type (``PersistentModel/collectionName``), creating it with the
    /// schema derived from the type when it does not exist.
    ///
    /// ```swift
    /// let notes = try await database.models(Note.self)
    /// let searchable = try await database.models(Note.self, embedder: embedder)  // embeds on save
    /// ```
    /// - Parameters:
    ///   - type: the model type.
    ///   - embedder: embeds the text property named by ``ModelOptions/embedding(of:into:)`` on
    ///     every save, and the query of a text search.
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` when the type cannot be stored,
    ///   ``TroveError/schemaMismatch(collection:details:)`` when the collection exists with
    ///   another shape (a migration is needed), ``TroveError/dimensionMismatch(expected:actual:)``
    ///   when the embedder's vectors do not fit the vector property,
    ///   ``TroveError/embeddingMismatch(collection:stored:requested:)`` when the collection's vectors
    ///   came from another embedding model (recorded the first time it is opened with one).
    public func models<M: Model>(_ type: M.Type, embedder: (any Embedder)? = nil) throws
        -> ModelCollection<M>
    {
        let schema = try ModelSchema<M>.shared()
        if let embedder, let vector = schema.embeddedVector,
            let dimension = schema.propertiesByName[vector]?.definition.type.vectorDimension,
            dimension != embedder.dimension
        {
            throw TroveError.dimensionMismatch(expected: dimension, actual: embedder.dimension)
        }
        try openReferencedModels(of: M.self)
        let documents = try self.documents(M.collectionName, schema: schema.documentSchema)
        if let embedder, schema.embeddedVector != nil {
            try recordEmbedder(embedder.manifest, for: M.collectionName)
        }
        return ModelCollection(documents: documents, schema: schema, embedder: embedder)
    }

    /// Records the model whose vectors a collection holds the first time it is opened with an
    /// embedder, and refuses another one later (their vectors would not be comparable).
    private func recordEmbedder(_ manifest: EmbeddingManifest, for name: String) throws {
        let key = "models.\(name).embedder"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try connection.transaction(.immediate) {
            if let stored = try connection.scalar(
                "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(key)])?
                .stringValue
            {
                let recorded = try JSONDecoder().decode(
                    EmbeddingManifest.self, from: Data(stored.utf8))
                guard recorded == manifest else {
                    throw TroveError.embeddingMismatch(
                        collection: name, stored: recorded, requested: manifest)
                }
            } else {
                try connection.execute(
                    "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?)",
                    [
                        .text(key),
                        .text(String(decoding: try encoder.encode(manifest), as: UTF8.self)),
                    ])
            }
        }
    }
}

extension Transaction {
    /// The collection of a model type, for reads and writes inside this transaction, composing
    /// with document collections and raw SQL in the same transaction.
    ///
    /// ```swift
    /// try await database.write { tx in
    ///     try tx.models(Note.self).insert(Note(id: 3, title: "Call mum", year: 2026))
    ///     try tx.execute("UPDATE counters SET n = n + 1")
    /// }
    /// ```
    /// - Throws: ``TroveError/collectionNotFound(_:)`` when the collection was never opened
    ///   with ``Database/models(_:embedder:)`` (tables are not created inside a transaction),
    ///   ``TroveError/schemaMismatch(collection:details:)`` when it holds another shape.
    public func models<M: Model>(_ type: M.Type) throws -> ModelWriter<M> {
        let schema = try ModelSchema<M>.shared()
        let writer = try documents(M.collectionName)
        try Self.check(writer.store, against: schema)
        return ModelWriter(writer: writer, schema: schema)
    }

    static func check<M: Model>(_ store: DocumentStore, against schema: ModelSchema<M>) throws {
        let differences = store.schema.differences(from: schema.documentSchema)
        guard differences.isEmpty else {
            throw TroveError.schemaMismatch(
                collection: store.name, details: differences.joined(separator: "; "))
        }
    }
}

extension ReadTransaction {
    /// The collection of a model type, read on this snapshot.
    ///
    /// ```swift
    /// let (open, done) = try await database.read { r in
    ///     let notes = try r.models(Note.self)
    ///     return (try notes.count(where: #Predicate { !$0.done }), try notes.count(where: #Predicate { $0.done }))
    /// }
    /// ```
    public func models<M: Model>(_ type: M.Type) throws -> ModelReader<M> {
        let schema = try ModelSchema<M>.shared()
        let reader = try documents(M.collectionName)
        try Transaction.check(reader.store, against: schema)
        return ModelReader(reader: reader, schema: schema)
    }
}

/// Typed reads on one snapshot (inside `database.read { }`, or a write transaction's own view).
///
/// ```swift
/// let titles = try await database.read { r in
///     try r.models(Note.self).fetch(FetchDescriptor(sortBy: [SortDescriptor(\.title)])).map(\.title)
/// }
/// ```
public struct ModelReader<M: Model> {
    let reader: DocumentReader
    let schema: ModelSchema<M>

    /// The model with this id, or nil.
    public func fetch(id: M.ID) throws -> M? {
        try reader.fetch(id: id.documentID).map(schema.decode)
    }
    /// The models a descriptor selects.
    public func fetch(_ descriptor: FetchDescriptor<M> = FetchDescriptor()) throws -> [M] {
        try rows(descriptor, wantsCursor: false).models
    }
    /// One page and the cursor for the next.
    public func page(_ descriptor: FetchDescriptor<M>) throws -> ModelPage<M> {
        try rows(descriptor, wantsCursor: true)
    }

    private func rows(_ descriptor: FetchDescriptor<M>, wantsCursor: Bool) throws -> ModelPage<M> {
        let (models, next) = try schema.fetch(
            descriptor.query(schema), in: reader.store, on: reader.connection,
            wantsCursor: wantsCursor)
        return ModelPage(models: models, next: next)
    }
    /// How many models the predicate accepts (all when nil).
    public func count(where predicate: Predicate<M>? = nil) throws -> Int {
        try reader.count(
            where: predicate.map { try PredicateTranslator.filter($0, schema: schema) } ?? .all)
    }
}

/// Typed writes inside `database.write { tx in ... }`: synchronous, part of the open transaction
/// (a throw anywhere in the body rolls all of it back).
///
/// Vectors are stored as the models carry them (an embedder cannot run inside a transaction);
/// fill them first with ``ModelCollection/embedded(_:)``.
///
/// ```swift
/// let ready = try await notes.embedded([Note(id: 9, title: "New", body: "buy stamps")])
/// try await database.write { tx in
///     let notes = try tx.models(Note.self)
///     try notes.insert(ready)
///     try notes.delete(where: #Predicate { $0.done })
/// }
/// ```
public struct ModelWriter<M: Model>: RecordWriter {
    let writer: DocumentWriter
    let schema: ModelSchema<M>

    /// Reads that see this transaction's own writes.
    public var reader: ModelReader<M> { ModelReader(reader: writer.reader, schema: schema) }

    public func _insert(_ models: [M], expiry: Expiry) throws -> [M.ID] {
        _ = try writer.store.expirySecond(expiry)
        return try write(models, mode: .insert)
    }
    /// Inserts or replaces models. - Returns: their ids, in order.
    @discardableResult
    public func save(_ models: [M]) throws -> [M.ID] { try write(models, mode: .upsert) }

    private func write(_ models: [M], mode: WriteMode) throws -> [M.ID] {
        let store = writer.store
        var rows = try schema.rows(models, in: store)
        return try writer.atomically {
            try schema.write(models, rows: &rows, mode: mode, to: store, on: writer.connection)
        }
    }
    /// Inserts or replaces one model. - Returns: its id.
    @discardableResult
    public func save(_ model: M) throws -> M.ID { try save([model])[0] }
    /// Replaces a stored model. - Throws: ``TroveError/documentNotFound(_:)``.
    public func update(_ model: M) throws {
        try writer.store.update(
            row: schema.row(model, in: writer.store), id: model.id.documentID, ifVersion: nil,
            on: writer.connection
        ) { try schema.encode(model) }
    }
    /// Deletes by id. - Returns: whether it existed.
    @discardableResult
    public func delete(id: M.ID) throws -> Bool { try writer.delete(ids: [id.documentID]) == 1 }
    /// Deletes by ids. - Returns: how many existed.
    @discardableResult
    public func delete(ids: [M.ID]) throws -> Int { try writer.delete(ids: ids.map(\.documentID)) }
    /// Deletes every model the predicate accepts. - Returns: how many.
    @discardableResult
    public func delete(where predicate: Predicate<M>) throws -> Int {
        try writer.delete(where: PredicateTranslator.filter(predicate, schema: schema))
    }

    /// The model with this id, or nil (seeing this transaction's writes).
    public func fetch(id: M.ID) throws -> M? { try reader.fetch(id: id) }
    /// The models a descriptor selects.
    public func fetch(_ descriptor: FetchDescriptor<M> = FetchDescriptor()) throws -> [M] {
        try reader.fetch(descriptor)
    }
    /// How many models the predicate accepts.
    public func count(where predicate: Predicate<M>? = nil) throws -> Int {
        try reader.count(where: predicate)
    }
}
