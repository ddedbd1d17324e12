import Foundation
import TroveEmbeddings
import TroveSQLite

/// A typed handle on the collection that stores one model type: writes, fetches by
/// `#Predicate`, counts and search, each call one transaction (or one read snapshot). Cheap to
/// copy and Sendable.
///
/// ```swift
/// let notes = try await database.models(Note.self)
/// try await notes.insert([Note(id: 1, title: "Dentist", year: 2026), Note(id: 2, title: "Taxes", year: 2025)])
/// let id = try await notes.insert(Note(id: .unassigned, title: "Eye test", year: 2026))  // a new id
/// let n = try await notes.count(where: #Predicate { $0.year >= 2026 })
/// try await notes.delete(where: #Predicate { $0.title.starts(with: "Tax") })
/// ```
public struct ModelCollection<M: Model>: RecordCollection {
    /// The document collection underneath (for aggregates, explain, verify and raw access).
    public let documents: DocumentCollection
    let schema: ModelSchema<M>
    /// Embeds the model's embedded text property on save and the query of a text search.
    let embedder: (any Embedder)?

    /// The database it belongs to.
    public var database: Database { documents.database }

    // MARK: Writing (`insert` is ``RecordCollection``'s)

    public func _insert(_ models: [M], expiry: Expiry) async throws -> [M.ID] {
        // Models do not expire: anything but `.never` is refused, as by a schema without expiry.
        _ = try documents.store.expirySecond(expiry)
        return try await write(models, mode: .insert)
    }

    /// Inserts models, replacing those whose id exists (an upsert); a model whose id is
    /// ``ModelID/unassigned`` is inserted under a new one.
    ///
    /// - Returns: their ids, in order.
    @discardableResult
    public func save(_ models: [M]) async throws -> [M.ID] {
        try await write(models, mode: .upsert)
    }

    /// Inserts a model, or replaces the one with its id.
    ///
    /// - Returns: its id (a new one when it was ``ModelID/unassigned``).
    @discardableResult
    public func save(_ model: M) async throws -> M.ID { try await save([model])[0] }

    /// Replaces a stored model. - Throws: ``TroveError/documentNotFound(_:)`` when none has its id.
    public func update(_ model: M) async throws { try await update([model]) }

    /// Replaces stored models, all or nothing.
    public func update(_ models: [M]) async throws {
        let rows = try await self.rows(models)
        let (store, schema) = (documents.store, self.schema)
        try await database.writing { connection in
            for (model, row) in zip(models, rows) {
                try store.update(row: row, id: model.id.documentID, ifVersion: nil, on: connection)
                {
                    try schema.encode(model)
                }
            }
        }
    }

    private func write(_ models: [M], mode: WriteMode) async throws -> [M.ID] {
        let rows = try await self.rows(models)
        let (store, schema) = (documents.store, self.schema)
        return try await database.writing { connection in
            var rows = rows
            return try schema.write(models, rows: &rows, mode: mode, to: store, on: connection)
        }
    }

    /// Deletes the model with this id. - Returns: whether it existed.
    @discardableResult
    public func delete(id: M.ID) async throws -> Bool {
        try await documents.delete(id: id.documentID)
    }

    /// Deletes models by id. - Returns: how many existed.
    @discardableResult
    public func delete(ids: [M.ID]) async throws -> Int {
        try await documents.delete(ids: ids.map(\.documentID))
    }

    /// Deletes every model the predicate accepts. - Returns: how many.
    @discardableResult
    public func delete(where predicate: Predicate<M>) async throws -> Int {
        try await documents.delete(where: PredicateTranslator.filter(predicate, schema: schema))
    }

    // MARK: Reading

    /// The model with this id, or nil.
    public func fetch(id: M.ID) async throws -> M? {
        try await documents.fetch(id: id.documentID).map(schema.decode)
    }

    /// The models a descriptor selects, in its order.
    public func fetch(_ descriptor: FetchDescriptor<M> = FetchDescriptor()) async throws -> [M] {
        try await rows(descriptor, wantsCursor: false).models
    }

    /// One page of models and the cursor for the next.
    ///
    /// ```swift
    /// var descriptor = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)], fetchLimit: 100)
    /// var page = try await notes.page(descriptor)
    /// while let next = page.next { descriptor.cursor = next; page = try await notes.page(descriptor) }
    /// ```
    public func page(_ descriptor: FetchDescriptor<M>) async throws -> ModelPage<M> {
        try await rows(descriptor, wantsCursor: true)
    }

    /// Runs the descriptor on a reader, decoding models straight from the rows.
    private func rows(_ descriptor: FetchDescriptor<M>, wantsCursor: Bool) async throws
        -> ModelPage<M>
    {
        let query = try descriptor.query(schema)
        let (name, schema) = (documents.name, self.schema)
        return try await database.reading(transaction: false) { connection, lookup in
            let (models, next) = try schema.fetch(
                query, in: lookup(name), on: connection, wantsCursor: wantsCursor)
            return ModelPage(models: models, next: next)
        }
    }

    /// How many models the predicate accepts (all when nil).
    public func count(where predicate: Predicate<M>? = nil) async throws -> Int {
        try await documents.count(
            where: predicate.map { try PredicateTranslator.filter($0, schema: schema) } ?? .all)
    }

    // MARK: Embedding

    /// The rows of `models`, with their embedded text property embedded into their vector
    /// property when the collection has an embedder (one batch for all of them).
    func rows(_ models: [M]) async throws -> [[SQLValue]] {
        let store = documents.store
        var rows = try schema.rows(models, in: store)
        guard let embedder, let text = schema.embeddedText, let vector = schema.embeddedVector,
            let textSlot = schema.rowSlots.byProperty[text],
            let vectorSlot = schema.rowSlots.byProperty[vector]
        else { return rows }
        let texts = rows.map { row -> String in
            if case .text(let s) = row[1 + textSlot] { return s }
            return ""
        }
        let vectors = try await embedder.embed(texts)
        let definition = schema.rowSlots.definitions[vectorSlot]
        for i in rows.indices {
            rows[i][1 + vectorSlot] = try FieldCodec.bind(.vector(vectors[i]), for: definition)
        }
        return rows
    }

    /// The documents of `models`, embedded like ``rows(_:)``.
    func encode(_ models: [M]) async throws -> [Document] {
        var documents = try models.map(schema.encode)
        guard let embedder, let text = schema.embeddedText, let vector = schema.embeddedVector,
            let textColumn = schema.propertiesByName[text]?.column,
            let vectorColumn = schema.propertiesByName[vector]?.column
        else { return documents }
        let vectors = try await embedder.embed(documents.map { $0[textColumn]?.stringValue ?? "" })
        for i in documents.indices { documents[i][vectorColumn] = .vector(vectors[i]) }
        return documents
    }

    /// The models with their embedded vector property filled by the collection's embedder, for
    /// writes inside `database.write { }` (which cannot wait for an embedder).
    public func embedded(_ models: [M]) async throws -> [M] {
        try await encode(models).map(schema.decode)
    }
}
