import Foundation
import TroveSQLite

/// The work of a context, whatever its isolation: the tracked models of each type, fetches
/// through the identity map, saves and rollbacks, all synchronous on the context's own
/// connection. ``ModelContext`` owns one and forwards to it.
///
/// Who holds whom: the store holds its tracked models (changes are found by comparing
/// snapshots at save, so a changed model must stay alive until then), and each model holds the
/// store, so that a model fetched through a context made for one fetch still reads its
/// relationships. The cycle is broken when the ``ModelContext`` goes (nothing holds the context
/// itself): the store forgets its models (unsaved changes go with the context) and from then on
/// only reads for the models still in use, holding none of them (``detach()``), so both are
/// freed once the app lets go. A context holding its models weakly instead would lose the
/// changes of a model edited and let go before the save.
///
/// Not Sendable: its connection, instances and models stay in the owning context's isolation.
final class ContextStore {
    let registry: ContextRegistry
    /// The database, for live queries; nil for a migration stage's context.
    let database: Database?
    private var tables: [String: any AnyTrackedModels] = [:]
    /// The table last asked for, by model type, as `tables` holds it: an insert of many models
    /// asks for its table once per model, and this spares hashing the name and a cast each time.
    private var lastTable: (type: ObjectIdentifier, table: AnyObject)?
    /// To-many relationships read so far: per child collection and column, the stored
    /// children of each parent asked for (`children(_:of:)`, ``prefetch(_:column:parents:)``).
    var loadedChildren: [RelationshipKey: [DocumentID: [DocumentID]]] = [:]
    /// Models whose many-to-many arrays changed since the last save (``linksChanged(_:)``).
    var linkEdits: [ObjectIdentifier: any _ReferenceModel] = [:]
    /// How many fetches this context has run (each one statement), for tests of prefetching.
    var reads = 0
    /// The context that owns this store: what its models' `modelContext` is.
    weak var owner: ModelContext?
    /// Whether the owning context is gone (``detach()``): the store then reads for the models
    /// still in use and keeps none of them.
    private(set) var isDetached = false
    /// In a detached store: the models it has handed out, held weakly.
    private var remembered: [WeakModel] = []
    private var detachedReads = 0
    /// What went wrong in a relationship's getter or setter (which cannot throw), thrown by the
    /// next save.
    var relationshipError: (any Error)?
    /// The connection, opened on first use (a context that is made and never used opens none).
    private var opened: Connection?
    private let open: () throws -> Connection

    var allTables: [any AnyTrackedModels] { Array(tables.values) }

    init(registry: ContextRegistry, database: Database?, open: @escaping () throws -> Connection) {
        self.registry = registry
        self.database = database
        self.open = open
    }

    /// The context's connection: its own read-write connection on the file, or a migration's.
    func connection() throws -> Connection {
        if let opened { return opened }
        let connection = try open()
        opened = connection
        return connection
    }

    func table<M: _ReferenceModel>(_ type: M.Type) throws -> TrackedModels<M> {
        if let lastTable, lastTable.type == ObjectIdentifier(M.self) {
            return unsafeDowncast(lastTable.table, to: TrackedModels<M>.self)
        }
        if let known = tables[M.collectionName] as? TrackedModels<M> {
            lastTable = (ObjectIdentifier(M.self), known)
            return known
        }
        guard let store = try registry.store(M.collectionName) else {
            throw TroveError.invalidModel(
                type: String(describing: M.self),
                reason: "it is not one of the container's schema's models")
        }
        let table = try TrackedModels<M>(store: store, owner: self)
        tables[M.collectionName] = table
        lastTable = (ObjectIdentifier(M.self), table)
        return table
    }

    func insert<M: _ReferenceModel>(_ model: M) throws {
        try table(M.self).insert(model)
        model._$backing.store = self
        try insertGraph(of: model)
        if M._$relationships.contains(where: { $0.manyToMany != nil }) { linksChanged(model) }
    }

    /// Makes this context the one fetched models name (`modelContext`).
    func own<M: _ReferenceModel>(_ models: [M]) -> [M] {
        for model in models { model._$backing.store = self }
        return models
    }

    /// Called when the owning context goes: its models hold this store (so that they keep
    /// reading their relationships), and the store lets go of them, so nothing holds the
    /// store once they go. Unsaved changes go with the context.
    func detach() {
        isDetached = true
        remember()
        forgetModels()
    }

    private func forgetModels() {
        tables.removeAll()
        lastTable = nil
        loadedChildren.removeAll()
        linkEdits.removeAll()
        relationshipError = nil
    }

    /// Runs a read that a getter of `model` asks for (a relationship, an external-storage
    /// property). In a detached store, `model` and the other models still in use are tracked
    /// for the read, so that what it reads resolves to them (one instance per row while they
    /// live), and let go after: the models keep what they resolved, the store holds none of
    /// them (a model held by the store would hold the store back).
    func reading<M: _ReferenceModel, T>(for model: M, _ read: () -> T) -> T {
        guard isDetached else { return read() }
        return detachedRead {
            track(model)
            return read()
        }
    }

    /// A read in a detached store (nested reads share the outermost one's tracking).
    func detachedRead<T>(_ read: () throws -> T) rethrows -> T {
        detachedReads += 1
        if detachedReads == 1 {
            for memory in remembered { if let model = memory.model { track(model) } }
        }
        defer {
            detachedReads -= 1
            if detachedReads == 0 {
                remember()
                forgetModels()
            }
        }
        return try read()
    }

    private func track(_ model: any _ReferenceModel) {
        func open<M: _ReferenceModel>(_ model: M) {
            guard let table = try? table(M.self), !table.isTracked(model) else { return }
            _ = try? table.adopt(model, id: model.id.documentID, version: 0)
        }
        open(model)
    }

    /// Takes note, weakly, of every tracked model (those still alive at the next read are
    /// tracked for it).
    private func remember() {
        var seen = Set<ObjectIdentifier>()
        var kept: [WeakModel] = []
        let models =
            remembered.compactMap(\.model)
            + tables.values.flatMap { $0.models(deleted: false) }.compactMap {
                $0 as? any _ReferenceModel
            }
        for model in models where seen.insert(ObjectIdentifier(model)).inserted {
            kept.append(WeakModel(model: model))
        }
        remembered = kept
    }

    func delete<M: _ReferenceModel>(_ model: M) throws {
        let table = try table(M.self)
        guard
            table.entries[model.id.documentID].map({ !$0.isDeleted && $0.object === model }) == true
        else { return }
        // The to-one properties' delete rules, read before the model is gone: `.deny` refuses
        // while the property names a model, `.cascade` deletes that model too.
        let toOne = M._$toOneRelationships.filter {
            $0.deleteRule == .deny || $0.deleteRule == .cascade
        }
        let targets = toOne.map { ($0, $0.target(model)) }
        for (relationship, target) in targets where relationship.deleteRule == .deny {
            guard let target else { continue }
            throw TroveError.deleteDenied(
                collection: table.name, id: model.id.documentID,
                referencedBy: "\(table.name).\(relationship.name) (\(type(of: target)))")
        }
        unlinkOneToOne(model)
        table.delete(model)
        try deleteLinked(model)
        for (relationship, target) in targets where relationship.deleteRule == .cascade {
            guard let target else { continue }
            func delete<T: _ReferenceModel>(_ other: T) throws { try self.delete(other) }
            try delete(target)
        }
    }

    var hasChanges: Bool { tables.values.contains { $0.hasChanges } || !linkChanges().isEmpty }

    func fetch<M: _ReferenceModel>(_ descriptor: FetchDescriptor<M>) throws -> [M] {
        let table = try self.table(M.self)
        guard descriptor.includePendingChanges, descriptor.cursor == nil else {
            return try fetchStored(descriptor, table)
        }
        // Inserted, unsaved models the predicate accepts join the stored ones (SwiftData's
        // `includePendingChanges`): evaluated in memory, merged in the descriptor's order, then
        // the offset and limit applied to the whole.
        var pending = table.pendingInserts()
        if pending.isEmpty { return try fetchStored(descriptor, table) }
        if let predicate = descriptor.predicate {
            pending = try pending.filter { try predicate.evaluate($0) }
        }
        if pending.isEmpty { return try fetchStored(descriptor, table) }
        var stored = descriptor
        stored.fetchLimit = descriptor.fetchLimit.map { $0 + (descriptor.fetchOffset ?? 0) }
        stored.fetchOffset = nil
        var models = try fetchStored(stored, table) + pending
        models.sort { a, b in
            for sort in descriptor.sortBy {
                switch sort.compare(a, b) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return a.id.documentID < b.id.documentID
        }
        let offset = min(descriptor.fetchOffset ?? 0, models.count)
        let end = descriptor.fetchLimit.map { min(models.count, offset + $0) } ?? models.count
        return Array(models[offset..<end])
    }

    /// The stored models a descriptor selects, as this context's instances.
    private func fetchStored<M: _ReferenceModel>(
        _ descriptor: FetchDescriptor<M>, _ table: TrackedModels<M>
    ) throws
        -> [M]
    {
        if table.fetchedColumns == nil {
            // Every column is read: decoded straight from the statement, which also makes each
            // model's entry and names this store in its backing while the model is in cache.
            // Here each entry only goes into the identity map, its reference handed over (not
            // retained again): a fetch does not touch its models or entries a second time.
            return try table.adopt(readModels(table, try table.query(descriptor)))
        }
        let documents = try read(table.name, try table.query(descriptor))
        var models: [M] = []
        models.reserveCapacity(documents.count)
        for document in documents {
            let model = try table.instance(for: document)
            if table.entries[document.id]?.isDeleted != true { models.append(model) }
        }
        return own(models)
    }

    /// The ids a descriptor selects, read without making models (deleted ones left out).
    func fetchIDs<M: _ReferenceModel>(_ descriptor: FetchDescriptor<M>) throws -> [DocumentID] {
        let table = try self.table(M.self)
        var query = try table.query(descriptor)
        query.projection = []
        reads += 1
        let kind = M.ID.idKind
        var ids: [DocumentID] = []
        _ = try table.store.forEachRow(query, on: try connection(), wantsCursor: false) {
            statement, _ in
            ids.append(
                DocumentID.read(statement.value(at: 0), kind: kind) ?? .int(statement.int64(at: 0)))
        }
        return ids.filter { table.entries[$0]?.isDeleted != true }
    }

    func model<M: _ReferenceModel>(_ type: M.Type, id: M.ID) throws -> M? {
        let table = try self.table(M.self)
        if let entry = table.entries[id.documentID] {
            return entry.isDeleted ? nil : table.model(entry)
        }
        var query = try table.query(FetchDescriptor())
        query.filter = .compare(.id, .equal, id.documentID.value)
        let documents = try read(table.name, query)
        return own(try documents.map(table.instance(for:))).first
    }

    func load<M: _ReferenceModel, V>(
        _ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M
    ) throws -> V {
        try table(M.self).load(keyPath, of: model, on: try connection())
    }

    func save() throws {
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
        let links = linkChanges()
        guard !changes.isEmpty || !links.isEmpty else { return }
        try checkLinkDeleteRules()
        let stores = saving.map(\.store)
        let connection = try self.connection()
        // One transaction (a savepoint inside a migration's); the busy timeout waits for the
        // write lock while another connection writes.
        let rekeys = try connection.transaction(.immediate) {
            let rekeys = try ContextSave.write(changes, stores: stores, on: connection)
            try links.write(on: connection)
            return rekeys
        }
        didSaveLinks()
        for (table, tableChanges) in zip(saving, changes) { table.didSave(tableChanges) }
        for rekey in rekeys { tables[rekey.table]?.rekey(rekey) }
        // Rows deleted by the save, and with them by foreign keys: the links went with them.
        let cascaded = try reconcile(
            afterDeletingFrom: Set(changes.filter { !$0.deletes.isEmpty }.map(\.name)))
        let deleted = changes.filter { !$0.deletes.isEmpty }.map {
            ($0.name, Set($0.deletes.map(\.id)))
        }
        forgetLinks(
            to: Dictionary(deleted, uniquingKeysWith: { $0.union($1) }).merging(cascaded) {
                $0.union($1)
            })
    }

    func rollback() {
        for table in tables.values { table.rollback() }
        rollbackLinks()
    }
}

/// Models decoded from a fetch's rows, each with its id and its entry for the identity map (the
/// model and its version; no snapshot: the model's storage holds the values as read until its
/// first change), each entry retained once for the map.
struct DecodedRows<M> {
    /// The models, each an `M`, kept as objects: the fetch's code is not specialized for `M`,
    /// and an append to an array of `M` would look up the array type's metadata and call the
    /// unspecialized `append` at each row; an array of objects is appended to by specialized code.
    var objects: [AnyObject] = []
    var ids: [DocumentID] = []
    var entries: [Unmanaged<TrackedEntry>] = []
}

extension ContextStore {
    /// One fetch (counted in ``reads``) whose rows are decoded into models as they are read, in
    /// the full selection's column order (`id, _version, <fields>`).
    func readModels<M: _ReferenceModel>(_ table: TrackedModels<M>, _ query: Query) throws
        -> DecodedRows<M>
    {
        reads += 1
        var rows = RowsBuilder(table)
        _ = try table.store.forEachRow(query, on: try connection(), wantsCursor: false) {
            statement, _ in
            try rows.add(statement)
        }
        return rows.rows(of: M.self)
    }

    /// ``readModels(_:_:)`` for a page of an enumeration: also the cursor after its last row.
    func readPage<M: _ReferenceModel>(_ table: TrackedModels<M>, _ query: Query) throws -> (
        DecodedRows<M>, Cursor?
    ) {
        reads += 1
        var rows = RowsBuilder(table)
        let next = try table.store.forEachRow(query, on: try connection(), wantsCursor: true) {
            statement, _ in
            try rows.add(statement)
        }
        return (rows.rows(of: M.self), next)
    }

    /// Reads into the identity map the models that `models`' reference properties name, one
    /// query per key path (``FetchDescriptor/relationshipKeyPathsForPrefetching``).
    func prefetch<M: _ReferenceModel>(_ keyPaths: [PartialKeyPath<M>], of models: [M]) throws {
        let table = try self.table(M.self)
        for keyPath in keyPaths {
            let column = try table.schema.field(keyPath).field.name
            guard let reference = table.store.schema.field(column)?.reference,
                let target = registry.types[reference.collection]
            else {
                throw TroveError.unsupportedPredicate(
                    node: "\(keyPath)",
                    reason: "it is not a reference to a class model of the container")
            }
            // The property holds the target's id, or nil (a cast from Any looks through the optional).
            let ids = models.compactMap { ($0[keyPath: keyPath] as? any ModelID)?.documentID }
            try prefetchTargets(target, documentIDs: ids)
        }
    }

    private func prefetchTargets<T: _ReferenceModel>(_ type: T.Type, documentIDs: [DocumentID])
        throws
    {
        try prefetch(type, ids: documentIDs.compactMap { T.ID(documentID: $0) })
    }
}

/// A fetch's rows as they are decoded. A struct changed only through the fetch's
/// (non-escaping) row closure: its fields are checked for exclusive access when compiled, not
/// at each row as a captured variable's would be. Not generic: the fetch's code is not
/// specialized for the model type, and unspecialized code looks up the metadata of each generic
/// type it touches (a generic builder's, for its fields) at every row; only the closure that
/// makes a row's model, written once per fetch, is generic.
private struct RowsBuilder {
    /// What decoding a row needs across rows: the type's decoder (its plan), or the typed
    /// reads' view of the statement, made on the first row.
    struct Decoding {
        var decoder: ModelRowDecoder?
        var reader: ModelRowDecoder.Reader?
    }

    let kind: IDKind
    /// Makes a row's model (the code the macro wrote, or the decoder's plan) and points its
    /// backing at the store the models name.
    let make: (Statement, inout Decoding) throws -> AnyObject
    var decoding = Decoding()
    var decoded = DecodedRows<Never>()

    init<M: _ReferenceModel>(_ table: TrackedModels<M>) {
        kind = M.ID.idKind
        let (schema, isTyped, owner) = (table.schema, table.isTyped, table.owner)
        make = { statement, decoding in
            let model: M
            if isTyped {
                if decoding.reader?.statement !== statement {
                    decoding.reader = ModelRowDecoder.Reader(
                        statement: statement, plan: schema.rowColumns)
                }
                model = try M(_$row: _ModelRowReader(decoding.reader!))
            } else {
                model = try schema.decode(row: statement, reusing: &decoding.decoder)
            }
            model._$backing.store = owner
            return model
        }
    }

    mutating func add(_ statement: Statement) throws {
        let model = try make(statement, &decoding)
        decoded.ids.append(
            DocumentID.read(statement.value(at: 0), kind: kind) ?? .int(statement.int64(at: 0)))
        decoded.objects.append(model)
        decoded.entries.append(
            .passRetained(TrackedEntry(object: model, version: statement.int64(at: 1))))
    }

    /// The rows, as models of the fetch's type.
    func rows<M>(of type: M.Type) -> DecodedRows<M> {
        DecodedRows(objects: decoded.objects, ids: decoded.ids, entries: decoded.entries)
    }
}

/// The collections a context may use: a container's schema's, or a migration stage's version's,
/// referenced collections first (the order saves write in).
struct ContextRegistry {
    /// The collection's store now (a migration may replace it), or nil when it is not one of the
    /// schema's.
    let store: (String) throws -> DocumentStore?
    var order: [String]
    /// The class-model type of each collection (for prefetching a reference's targets).
    var types: [String: any _ReferenceModel.Type]

    static func referenceTypes(_ models: [any PersistentModel.Type]) -> [String:
        any _ReferenceModel.Type]
    {
        var types: [String: any _ReferenceModel.Type] = [:]
        for case let type as any _ReferenceModel.Type in models {
            types[type.collectionName] = type
        }
        return types
    }
}

extension ContextStore {
    /// A live query of the rows `descriptor` selects (lazy columns left out), for
    /// ``ModelContext/observe(_:isolation:_:)``.
    func liveQuery<M: _ReferenceModel>(_ descriptor: FetchDescriptor<M>) throws -> LiveQuery<
        [Document]
    > {
        let table = try self.table(M.self)
        guard let database else {
            throw TroveError.invalidConfiguration(
                "a migration stage's context cannot observe: its models are not committed yet")
        }
        let (query, name) = (try table.query(descriptor), table.name)
        return LiveQuery(database: database, read: { r in try r.documents(name).fetch(query) })
    }

    /// Fetched rows as this context's instances (refreshing unchanged ones), without those
    /// deleted in the context.
    func adopt<M: _ReferenceModel>(_ documents: [Document], as type: M.Type) throws -> [M] {
        // A live query that outlives its context: its models are held by nothing here.
        if isDetached { return try detachedRead { try adoptTracked(documents, as: M.self) } }
        return try adoptTracked(documents, as: M.self)
    }

    private func adoptTracked<M: _ReferenceModel>(_ documents: [Document], as type: M.Type) throws
        -> [M]
    {
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
        guard let typed = T.ID(documentID: id) else { return nil }
        return try model(T.self, id: typed)
    }

    /// The stored models whose `column` names `parent` (loading a to-many relationship).
    func readChildren<C: _ReferenceModel>(_ type: C.Type, column: String, parent: DocumentID) throws
        -> [C]
    {
        let table = try self.table(C.self)
        let key = RelationshipKey(collection: table.name, column: column)
        if loadedChildren[key]?[parent] == nil {
            try prefetch(table, column: column, parents: [parent])
        }
        return own(
            (loadedChildren[key]?[parent] ?? []).compactMap { table.entries[$0].map(table.model) })
    }
}

/// A model a detached store has handed out, without keeping it alive.
struct WeakModel {
    weak var model: (any _ReferenceModel)?
}
