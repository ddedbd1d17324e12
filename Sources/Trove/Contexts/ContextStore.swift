import Foundation
import TroveSQLite

/// The work of a context, whatever its isolation: the tracked models of each type, fetches
/// through the identity map, saves and rollbacks. ``ModelContext`` owns one and forwards to it
/// (on the main actor, or in a ``BackgroundModelContext``).
///
/// Not Sendable: its instances and models stay in the owning context's isolation; its async
/// methods run there too (`nonisolated(nonsending)`), sending only rows and documents to the
/// database.
final class ContextStore {
    let database: Database
    let registry: ContextRegistry
    private var tables: [String: any AnyTrackedModels] = [:]
    /// To-many relationships read so far: per child collection and column, the stored
    /// children of each parent asked for (``children(_:of:)``, ``prefetch(_:column:parents:)``).
    var loadedChildren: [RelationshipKey: [DocumentID: [DocumentID]]] = [:]
    /// How many fetches this context has run (each one statement), for tests of prefetching.
    var reads = 0
    /// The context that owns this store: what its models' `modelContext` is.
    weak var owner: ModelContext?
    /// What went wrong in a relationship's getter or setter (which cannot throw), thrown by the
    /// next save.
    var relationshipError: (any Error)?

    var allTables: [any AnyTrackedModels] { Array(tables.values) }

    init(database: Database, registry: ContextRegistry) {
        self.database = database
        self.registry = registry
    }

    func table<M: _ReferenceModel>(_ type: M.Type) throws -> TrackedModels<M> {
        if let known = tables[M.collectionName] as? TrackedModels<M> { return known }
        guard let collection = registry.collections[M.collectionName] else {
            throw TroveError.invalidModel(
                type: String(describing: M.self), reason: "it is not one of the container's schema's models")
        }
        let table = try TrackedModels<M>(collection: collection)
        tables[M.collectionName] = table
        return table
    }

    func insert<M: _ReferenceModel>(_ model: M) throws {
        try table(M.self).insert(model)
        model._$backing.context = owner
        try insertGraph(of: model)
    }

    /// Makes this context the one fetched models name (``_ReferenceModel/modelContext``).
    func own<M: _ReferenceModel>(_ models: [M]) -> [M] {
        for model in models { model._$backing.context = owner }
        return models
    }

    func delete<M: _ReferenceModel>(_ model: M) throws { try table(M.self).delete(model) }

    var hasChanges: Bool { tables.values.contains { $0.hasChanges } }

    nonisolated(nonsending) func fetch<M: _ReferenceModel>(_ descriptor: FetchDescriptor<M>) async throws -> [M] {
        let table = try self.table(M.self)
        var models: [M] = []
        if table.fetchedColumns == nil {
            // Every column is read: decoded straight from the statement on the reader, which
            // also takes each model's snapshot and makes its entry while the model is in its
            // cache. Here each entry only goes into the identity map, its reference handed over
            // (not retained again): a fetch does not touch its models or entries a second time.
            return own(try table.adopt(await readModels(table, try table.query(descriptor))))
        }
        let documents = try await read(table.name, try table.query(descriptor))
        models.reserveCapacity(documents.count)
        for document in documents {
            let model = try table.instance(for: document)
            if table.entries[document.id]?.isDeleted != true { models.append(model) }
        }
        return own(models)
    }

    nonisolated(nonsending) func model<M: _ReferenceModel>(_ type: M.Type, id: M.ID) async throws -> M? {
        let table = try self.table(M.self)
        if let entry = table.entries[id.documentID] { return entry.isDeleted ? nil : table.model(entry) }
        var query = try table.query(FetchDescriptor())
        query.filter = .compare(.id, .equal, id.documentID.value)
        let documents = try await read(table.name, query)
        return own(try documents.map(table.instance(for:))).first
    }

    nonisolated(nonsending) func load<M: _ReferenceModel, V>(_ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M)
        async throws -> V
    {
        try await table(M.self).load(keyPath, of: model, database: database)
    }

    nonisolated(nonsending) func save() async throws {
        if let error = relationshipError {
            relationshipError = nil
            throw error
        }
        let ordered = registry.order.compactMap { tables[$0] }
        var changes: [TableChanges] = []
        var saving: [any AnyTrackedModels] = []
        for table in ordered {
            let tableChanges = try table.changes()
            if tableChanges.isEmpty { continue }
            changes.append(tableChanges)
            saving.append(table)
        }
        guard !changes.isEmpty else { return }
        let stores = saving.map(\.collection.store)
        let written = changes
        try await database.writing { connection in try ContextSave.write(written, stores: stores, on: connection) }
        for (table, tableChanges) in zip(saving, changes) { table.didSave(tableChanges) }
        try await reconcile(afterDeletingFrom: Set(changes.filter { !$0.deletes.isEmpty }.map(\.name)))
    }

    func rollback() throws {
        for table in tables.values { try table.rollback() }
    }
}

/// Models decoded on a reader, each with its id and its entry for the identity map (the model,
/// its snapshot, its version), each entry retained once for the map.
///
/// `@unchecked Sendable`: the reader creates these models and entries and drops every reference
/// to them when it returns; from then on the receiving context is their only owner.
struct DecodedRows<M>: @unchecked Sendable {
    var models: [M] = []
    var ids: [DocumentID] = []
    var entries: [Unmanaged<TrackedEntry>] = []
}

extension ContextStore {
    /// One fetch (counted in ``reads``) whose rows are decoded into models on the reader, in
    /// the full selection's column order (`id, _version, <fields>`).
    nonisolated(nonsending) func readModels<M: _ReferenceModel>(_ table: TrackedModels<M>, _ query: Query) async throws -> DecodedRows<M> {
        reads += 1
        let (name, schema, snapshotted) = (table.name, table.schema, table.snapshotted)
        let kind = M.ID.idKind
        return try await database.reading(transaction: false) { connection, lookup in
            var rows = RowsBuilder<M>(schema: schema, snapshotted: snapshotted, kind: kind)
            _ = try lookup(name).fetch(query, on: connection, wantsCursor: false) { statement, _ in try rows.add(statement) }
            rows.flush()
            return rows.decoded
        }
    }
}

/// A fetch's rows as the reader decodes them. A struct changed only through the fetch's
/// (non-escaping) row closure: its fields are checked for exclusive access when compiled, not
/// at each row as a captured variable's would be.
private struct RowsBuilder<M: _ReferenceModel> {
    let schema: ModelSchema<M>
    let snapshotted: [PropertyAccess]
    let kind: IDKind
    /// One decoder (the type's plan) serves the whole fetch.
    var decoder: ModelRowDecoder?
    var decoded = DecodedRows<M>()
    /// Snapshots are taken for a group of models at a time, into one array (the group's models
    /// are still in cache), and each entry keeps its slice of it.
    var group: [AnyObject] = []
    var versions: [Int64] = []

    init(schema: ModelSchema<M>, snapshotted: [PropertyAccess], kind: IDKind) {
        (self.schema, self.snapshotted, self.kind) = (schema, snapshotted, kind)
        group.reserveCapacity(256)
        versions.reserveCapacity(256)
    }

    mutating func add(_ statement: Statement) throws {
        let model = try schema.decode(row: statement, reusing: &decoder)
        decoded.ids.append(DocumentID.read(statement.value(at: 0), kind: kind) ?? .int(statement.int64(at: 0)))
        decoded.models.append(model)
        group.append(model)
        versions.append(statement.int64(at: 1))
        if group.count == 256 { flush() }
    }

    mutating func flush() {
        let values = PropertyAccess.snapshots(snapshotted, of: group)
        let width = snapshotted.count
        for (i, model) in group.enumerated() {
            let saved = Snapshot(values[(i * width)..<((i + 1) * width)])
            decoded.entries.append(.passRetained(TrackedEntry(object: model, saved: saved, version: versions[i])))
        }
        group.removeAll(keepingCapacity: true)
        versions.removeAll(keepingCapacity: true)
    }
}

/// The collections a container opened for its schema's models, referenced collections first
/// (the order saves write in).
struct ContextRegistry: Sendable {
    var collections: [String: DocumentCollection]
    var order: [String]
}

extension ContextStore {
    /// A live query of the rows `descriptor` selects (lazy columns left out), for
    /// ``ModelContext/observe(_:isolation:_:)``.
    func liveQuery<M: _ReferenceModel>(_ descriptor: FetchDescriptor<M>) throws -> LiveQuery<[Document]> {
        let table = try self.table(M.self)
        let (query, name) = (try table.query(descriptor), table.name)
        return LiveQuery(database: database, read: { r in try r.documents(name).fetch(query) })
    }

    /// Fetched rows as this context's instances (refreshing unchanged ones), without those
    /// deleted in the context.
    func adopt<M: _ReferenceModel>(_ documents: [Document], as type: M.Type) throws -> [M] {
        let table = try self.table(M.self)
        var models: [M] = []
        for document in documents {
            let model = try table.instance(for: document)
            if table.entries[document.id]?.isDeleted != true { models.append(model) }
        }
        return own(models)
    }

    /// One stored model read by id (resolving a to-one relationship).
    func readModel<T: _ReferenceModel>(_ type: T.Type, id: DocumentID) throws -> T? {
        nil  // synchronous reads come with the context's own connection
    }

    /// The stored models whose `column` names `parent` (loading a to-many relationship).
    func readChildren<C: _ReferenceModel>(_ type: C.Type, column: String, parent: DocumentID) throws -> [C] {
        []  // synchronous reads come with the context's own connection
    }
}
