import Foundation
import Observation

/// A context: an identity map of class models (one instance per row), their changes tracked
/// against what was read, saved together in one transaction or rolled back — SwiftData's
/// `ModelContext`, synchronous as SwiftData's is.
///
/// Each context reads and writes on a SQLite connection of its own, opened on the container's
/// file on first use. SQLite serializes writers (a save waits up to the busy timeout for the
/// write lock); live queries, derived indexes (text and vector search) and sync capture see a
/// context's commits as any connection's. A context and its models belong to one isolation:
/// the main actor for ``ModelContainer/mainContext``, a ``ModelActor``'s actor for the context
/// it makes. It is not `Sendable`, so the compiler keeps it and its models there.
///
/// ```swift
/// let context = ModelContext(container)
/// let post = Post(id: 1, title: "How to use it?", content: "It's very easy.")
/// context.insert(post)
/// post.content = "What did I tell you?"
/// try context.save()
/// let posts = try context.fetch(FetchDescriptor<Post>(predicate: #Predicate { $0.title.contains("it") }))
/// context.delete(post)
/// try context.save()
/// ```
public final class ModelContext {
    let store: ContextStore
    /// The container, held strongly by every context but the main one (which the container
    /// holds: a strong reference back would keep both alive forever).
    private let owner: Owner
    /// The actor the context belongs to, where autosaves run (nil: unknown, no autosave).
    weak var isolation: (any Actor)?
    /// Inside a migration stage's `willMigrate` or `didMigrate`: the migration's raw SQL,
    /// documents and value models, in the same transaction (the context itself manages class
    /// models only). Nil for any other context.
    ///
    /// ```swift
    /// .custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: nil, didMigrate: { context in
    ///     try context.migrationContext?.execute("UPDATE Note SET folderID = 1")
    /// })
    /// ```
    public let migrationContext: MigrationContext?
    /// Errors of inserts and deletes, which SwiftData's signatures do not let throw: the next
    /// ``save()`` throws the first and saves nothing.
    private var deferredErrors: [any Error] = []

    private enum Owner {
        case strong(ModelContainer)
        case main(Weak)
        /// A migration stage's context: no container exists yet.
        case migration
        struct Weak { weak var container: ModelContainer? }
    }

    /// The container whose models this context manages.
    ///
    /// The main context does not keep its container alive (the container keeps it), and a
    /// migration stage's context has none yet: asking then is a programmer error.
    public var container: ModelContainer {
        switch owner {
        case .strong(let container): return container
        case .main(let reference):
            guard let container = reference.container else {
                preconditionFailure("the main context's container is gone")
            }
            return container
        case .migration: preconditionFailure("a migration stage's context has no container yet")
        }
    }

    /// A new context on the container's file, with an identity map of its own (its instances
    /// are not another context's). Autosave is off, as in SwiftData.
    ///
    /// ```swift
    /// let context = ModelContext(container)
    /// ```
    /// - Parameters:
    ///   - container: the container.
    ///   - isolation: the actor the context is made on (the caller's), where autosaves run when
    ///     ``autosaveEnabled`` is set.
    public init(_ container: ModelContainer, isolation: (any Actor)? = #isolation) {
        owner = .strong(container)
        store = container.makeStore()
        self.isolation = isolation
        migrationContext = nil
        store.owner = self
    }

    /// The main context: the container holds it, it holds the container weakly.
    init(main container: ModelContainer) {
        owner = .main(Owner.Weak(container: container))
        store = container.makeStore()
        isolation = MainActor.shared
        migrationContext = nil
        autosaveEnabled = true
        store.owner = self
    }

    /// A migration stage's context: the migration's connection (its saves are savepoints of
    /// the migration's transaction), the collections as the migration has left them, the
    /// models of one version.
    init(migration: MigrationContext, models: [any PersistentModel.Type]) throws {
        let transaction = migration.transaction
        let order = try Migrator.collectionSchemas(of: models).map(\.name)
        let names = Set(order)
        store = ContextStore(
            registry: ContextRegistry(
                store: { name in names.contains(name) ? try transaction.lookup(name) : nil },
                order: order,
                types: ContextRegistry.referenceTypes(models)),
            database: nil, open: { transaction.connection })
        owner = .migration
        isolation = nil
        migrationContext = migration
        store.owner = self
    }

    // Models keep their context's store (so a model fetched through a context made for one
    // fetch still reads its relationships); the store keeps its models only while the context
    // lives, so a context and its models are freed once nobody holds them.
    deinit { store.detach() }

    /// The database the context reads and saves to (value models, documents and raw SQL work
    /// on it as usual).
    ///
    /// A migration stage's context has none (its collections are not committed yet): asking
    /// there is a programmer error.
    public var database: Database {
        guard let database = store.database else {
            preconditionFailure("a migration stage's context has no database handle")
        }
        return database
    }

    // MARK: Inserting and deleting

    /// Starts tracking a new model; the next ``save()`` inserts it.
    ///
    /// A `UUID` or `String` id left to Trove (``ModelID/unassigned``) is given its time-ordered
    /// value (UUIDv7) here; an `Int64` id must be the model's own. Inserting a model already
    /// tracked does nothing.
    ///
    /// ```swift
    /// context.insert(Post(id: 1, title: "Hello", content: ""))
    /// ```
    /// - Parameter model: a class model not yet stored. What cannot be inserted (a value model:
    ///   ``TroveError/invalidModel(type:reason:)``; another instance with the same id:
    ///   ``TroveError/duplicateDocumentID(_:)``; an unassigned `Int64` id:
    ///   ``TroveError/invalidValue(field:reason:)``) is thrown by the next ``save()``, which then
    ///   saves nothing (SwiftData's `insert` does not throw either).
    public func insert<T: PersistentModel>(_ model: T) {
        do {
            try insertReference(try Self.reference(T.self), model)
            scheduleAutosave()
        } catch {
            deferredErrors.append(error)
        }
    }

    private func insertReference<M: _ReferenceModel, T: PersistentModel>(_ type: M.Type, _ model: T)
        throws
    {
        let model = unsafeDowncast(model as AnyObject, to: M.self)
        try store.insert(model)
        watchForAutosave(CollectionOfOne(model))
    }

    /// Marks a tracked model deleted; the next ``save()`` deletes its row (with the delete rules
    /// of the references to it) and ``rollback()`` brings it back.
    ///
    /// ```swift
    /// context.delete(post)
    /// try context.save()
    /// ```
    /// - Parameter model: a model of this context. A value model makes the next ``save()``
    ///   throw ``TroveError/invalidModel(type:reason:)``.
    public func delete<T: PersistentModel>(_ model: T) {
        do {
            try deleteReference(try Self.reference(T.self), model)
            scheduleAutosave()
        } catch {
            deferredErrors.append(error)
        }
    }

    private func deleteReference<M: _ReferenceModel, T: PersistentModel>(_ type: M.Type, _ model: T)
        throws
    {
        try store.delete(unsafeDowncast(model as AnyObject, to: M.self))
    }

    /// Deletes every model of a type that a predicate accepts: each is read into this context
    /// and marked deleted (so delete rules and the identity map stay right); the next
    /// ``save()`` deletes the rows.
    ///
    /// ```swift
    /// try context.delete(model: Post.self, where: #Predicate { $0.content.isEmpty })
    /// try context.save()
    /// ```
    /// - Parameters:
    ///   - model: the model type.
    ///   - predicate: which models; nil for all.
    ///   - includeSubclasses: accepted for SwiftData's signature (Trove's models have no
    ///     subclasses).
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` for a value model;
    ///   ``TroveError/unsupportedPredicate(node:reason:)``; the read's errors.
    public func delete<T: PersistentModel>(
        model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        for doomed in try fetch(FetchDescriptor<T>(predicate: predicate)) { delete(doomed) }
    }

    // MARK: Fetching

    /// The models a descriptor selects, as this context's instances (the identity map: a row
    /// already tracked comes back as the same instance, with its unsaved changes). Models
    /// deleted in this context are left out; inserted, unsaved ones the predicate accepts are
    /// included (``FetchDescriptor/includePendingChanges``, true by default as in SwiftData).
    ///
    /// ```swift
    /// let recent = try context.fetch(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.id, order: .reverse)], fetchLimit: 10))
    /// ```
    /// - Parameter descriptor: predicate, order and limits.
    /// - Returns: the models, in the descriptor's order.
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` for a value model;
    ///   ``TroveError/unsupportedPredicate(node:reason:)``; the read's errors.
    /// - Complexity: one query; O(n) in the rows read.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        try fetchReference(try Self.reference(T.self), descriptor)
    }

    private func fetchReference<M: _ReferenceModel, T: PersistentModel>(
        _ type: M.Type, _ descriptor: FetchDescriptor<T>
    ) throws -> [T] {
        // T is M (checked by `reference`): the descriptor and the array are the same values.
        let models = try store.fetch(unsafeBitCast(descriptor, to: FetchDescriptor<M>.self))
        if !descriptor.relationshipKeyPathsForPrefetching.isEmpty {
            try store.prefetch(
                unsafeBitCast(
                    descriptor.relationshipKeyPathsForPrefetching, to: [PartialKeyPath<M>].self),
                of: models)
        }
        watchForAutosave(models)
        return unsafeBitCast(models, to: [T].self)
    }

    /// How many stored models a descriptor selects (its limit and offset applied), without
    /// reading them.
    ///
    /// ```swift
    /// let drafts = try context.fetchCount(FetchDescriptor<Post>(predicate: #Predicate { $0.content == "" }))
    /// ```
    /// - Parameter descriptor: predicate and limits (the order does not matter).
    /// - Returns: the count.
    /// - Throws: as ``fetch(_:)``.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        _ = try Self.reference(T.self)
        guard let store = try store.registry.store(T.collectionName) else {
            throw TroveError.invalidModel(
                type: String(describing: T.self),
                reason: "it is not one of the container's schema's models")
        }
        let query = try descriptor.query()
        var count = try store.count(query.filter, on: try self.store.connection())
        count = max(0, count - query.offset)
        if let limit = query.limit { count = min(count, limit) }
        return count
    }

    /// The identifiers of the models a descriptor selects, in its order, without making models.
    ///
    /// ```swift
    /// let ids = try context.fetchIdentifiers(FetchDescriptor<Post>())
    /// ```
    /// - Parameter descriptor: predicate, order and limits.
    /// - Returns: the identifiers.
    /// - Throws: as ``fetch(_:)``.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws
        -> [PersistentIdentifier]
    {
        try identifiersOf(try Self.reference(T.self), descriptor)
    }

    private func identifiersOf<M: _ReferenceModel, T: PersistentModel>(
        _ type: M.Type, _ descriptor: FetchDescriptor<T>
    )
        throws -> [PersistentIdentifier]
    {
        try store.fetchIDs(unsafeBitCast(descriptor, to: FetchDescriptor<M>.self)).map {
            PersistentIdentifier(entityName: M.collectionName, id: $0)
        }
    }

    /// Calls `block` with each model a descriptor selects, fetched `batchSize` at a time (keyset
    /// pages, so each batch is one indexed query). Models of a finished batch that have no
    /// unsaved changes leave the identity map, so memory stays at about one batch.
    ///
    /// ```swift
    /// try context.enumerate(FetchDescriptor<Post>(), batchSize: 1000) { post in total += post.content.count }
    /// ```
    /// - Parameters:
    ///   - descriptor: predicate, order and limits.
    ///   - batchSize: models per query.
    ///   - allowEscapingMutations: when false (SwiftData's default), a change left unsaved on an
    ///     enumerated model is a programmer error (a precondition); when true such models stay
    ///     tracked, their changes pending for ``save()``.
    ///   - block: called once per model, in order.
    /// - Throws: as ``fetch(_:)``, and what `block` throws (which ends the enumeration).
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000,
        allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        try enumerateReference(
            try Self.reference(T.self), descriptor, batchSize: batchSize,
            allowEscapingMutations: allowEscapingMutations, block: block)
    }

    private func enumerateReference<M: _ReferenceModel, T: PersistentModel>(
        _ type: M.Type, _ descriptor: FetchDescriptor<T>, batchSize: Int,
        allowEscapingMutations: Bool,
        block: (T) throws -> Void
    ) throws {
        precondition(batchSize > 0, "batchSize must be positive")
        var page = unsafeBitCast(descriptor, to: FetchDescriptor<M>.self)
        let table = try store.table(M.self)
        var remaining = descriptor.fetchLimit
        var offset = descriptor.fetchOffset ?? 0
        var cursor = descriptor.cursor
        while remaining.map({ $0 > 0 }) ?? true {
            let size = min(batchSize, remaining ?? batchSize)
            var query = try table.query(page)
            query.limit = size
            query.offset = offset
            query.cursor = cursor
            offset = 0
            let (decoded, next) = try store.readPage(table, query)
            // Models this context tracked before the batch stay tracked whatever happens.
            let new = decoded.ids.filter { table.entries[$0] == nil }
            let models = try table.adopt(decoded)
            for model in models { try block(unsafeBitCast(model, to: T.self)) }
            // Forget what this batch brought in and left unchanged (memory stays at one batch).
            for id in new {
                guard let entry = table.entries[id] else { continue }
                if table.isUnchanged(entry) {
                    table.forget(id)
                } else {
                    precondition(
                        allowEscapingMutations,
                        "enumerate(_:) block changed \(M.self) \(id) without allowEscapingMutations"
                    )
                }
            }
            remaining = remaining.map { $0 - decoded.ids.count }
            guard decoded.ids.count == size, let next else { break }
            cursor = next
            page.cursor = next
        }
    }

    /// The model of an identifier if this context has it in its identity map (no query).
    ///
    /// ```swift
    /// let post: Post? = context.registeredModel(for: id)
    /// ```
    /// - Parameter persistentModelID: the identifier.
    /// - Returns: the tracked model, or nil.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier)
        -> T?
    {
        guard let type = T.self as? any _ReferenceModel.Type,
            persistentModelID.entityName == T.collectionName
        else {
            return nil
        }
        return registered(type, persistentModelID.id) as? T
    }

    private func registered<M: _ReferenceModel>(_ type: M.Type, _ id: DocumentID) -> M? {
        guard let table = try? store.table(M.self), let entry = table.entries[id], !entry.isDeleted
        else { return nil }
        return table.model(entry)
    }

    /// The model with this id: the tracked instance, or the stored row read into a new one.
    ///
    /// ```swift
    /// let post = try context.model(Post.self, id: 1)
    /// ```
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: its id.
    /// - Returns: the model, or nil when there is none (or it is deleted in this context).
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` for a value model; the read's errors.
    public func model<T: PersistentModel>(_ type: T.Type, id: T.ID) throws -> T? {
        try modelReference(try Self.reference(T.self), id)
    }

    private func modelReference<M: _ReferenceModel, T: PersistentModel>(_ type: M.Type, _ id: T.ID)
        throws -> T?
    {
        guard let model = try store.model(M.self, id: unsafeBitCast(id, to: M.ID.self)) else {
            return nil
        }
        watchForAutosave(CollectionOfOne(model))
        return unsafeBitCast(model, to: T.self)
    }

    /// The value of a model's lazy property: read once (one query for that column of that
    /// row), then kept in the model; a loaded value is returned without a query.
    ///
    /// ```swift
    /// let pixels = try context.load(\.pixels, of: photo)
    /// ```
    /// - Parameters:
    ///   - keyPath: the ``LazyField`` property.
    ///   - model: a saved model of this context.
    /// - Returns: the value.
    /// - Throws: ``TroveError/documentNotFound(_:)`` when the model is not a saved model of this
    ///   context (or its row is gone), ``TroveError/missingField(field:)`` when the column is null.
    public func load<M: _ReferenceModel, V>(
        _ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M
    ) throws
        -> V
    {
        try store.load(keyPath, of: model)
    }

    // MARK: Saving

    /// Whether any tracked model was inserted, changed or deleted since the last save.
    ///
    /// - Complexity: O(n) in the tracked models (each property compared with its snapshot; only
    ///   those that differ are encoded).
    public var hasChanges: Bool { !deferredErrors.isEmpty || store.hasChanges }

    /// Writes every insert, change and delete in one transaction: only the changed fields of
    /// each changed model, each row only if it is still at the version this context read.
    ///
    /// ```swift
    /// post.title = "Edited"
    /// try context.save()
    /// ```
    /// - Throws: an error an ``insert(_:)`` or ``delete(_:)`` put off (then they are dropped);
    ///   ``TroveError/modelConflict(model:id:fields:)`` when a row changed (in another context,
    ///   process, or by raw SQL) since it was read; the constraint errors of the writes
    ///   (``TroveError/uniqueViolation(field:value:)``,
    ///   ``TroveError/deleteDenied(collection:id:referencedBy:)``, ...). Then nothing was
    ///   written and every change stays pending.
    /// - Complexity: O(n) in the tracked models, plus one statement per changed row.
    public func save() throws {
        if let first = deferredErrors.first {
            deferredErrors.removeAll()
            throw first
        }
        try store.save()
    }

    /// Puts every tracked model back as it was read or last saved: each field of each changed
    /// model (through its setter, so observers hear of it), inserted models are no longer
    /// tracked, deleted ones are tracked again.
    ///
    /// ```swift
    /// post.title = "Oops"
    /// context.rollback()   // post.title is what it was
    /// ```
    public func rollback() {
        deferredErrors.removeAll()
        store.rollback()
    }

    /// Whether changes save themselves, as SwiftData's: on by default for
    /// ``ModelContainer/mainContext``, off for other contexts. After an insert, a delete, or an
    /// edit of a property of a model this context handed out (``fetch(_:)``,
    /// ``model(_:id:)``, ``insert(_:)``; watched through Observation while autosave is on), a
    /// save is scheduled for the next turn of the context's actor (the main actor for the main
    /// context). A failed automatic save leaves the changes pending and its error in
    /// ``autosaveError``.
    public var autosaveEnabled = false

    /// The error of the last automatic save that failed, or nil.
    public private(set) var autosaveError: (any Error)?

    private var autosaveScheduled = false
    /// Models whose property edits schedule an autosave (each watched once until it fires).
    private var watched = Set<ObjectIdentifier>()
    /// Models whose watch fired: watched again when the autosave runs.
    private var rewatch: [() -> Void] = []

    /// Has an edit of any stored property of `models` schedule an autosave (Observation: the
    /// model registers every property, without its getters; the first change after calls back
    /// in its setter, on this context's actor, where models are changed).
    private func watchForAutosave<C: Collection>(_ models: C) where C.Element: _ReferenceModel {
        guard autosaveEnabled, isolation != nil else { return }
        for model in models where watched.insert(ObjectIdentifier(model)).inserted { watch(model) }
    }

    private func watch<M: _ReferenceModel>(_ model: M) {
        // Both are touched only on the context's actor: the getters run here, and the callback
        // runs in the setter of a model of this context, which is only changed on its actor.
        nonisolated(unsafe) let (context, watchedModel) = (self, model)
        withObservationTracking {
            watchedModel._$accessProperties()
        } onChange: {
            context.rewatch.append { context.watch(watchedModel) }
            context.scheduleAutosave()
        }
    }

    func scheduleAutosave() {
        guard autosaveEnabled, !autosaveScheduled, let isolation else { return }
        autosaveScheduled = true
        // Only touched on `isolation`, the context's own actor, where the save runs.
        nonisolated(unsafe) let context = self
        Task { await Self.autosave(context, on: isolation) }
    }

    private static func autosave(_ context: ModelContext, on isolation: isolated any Actor) async {
        context.autosaveScheduled = false
        let again = context.rewatch
        context.rewatch.removeAll()
        if context.autosaveEnabled { for watch in again { watch() } }
        guard context.autosaveEnabled, context.hasChanges else { return }
        do { try context.save() } catch { context.autosaveError = error }
    }

    // MARK: Observing

    /// Keeps `body` current with the models a descriptor selects: called with this context's
    /// instances now, then after each commit (from any context, connection or process) that
    /// changes the rows; instances without unsaved changes take the new values in place (so
    /// SwiftUI views of them redraw). Call it from the context's actor; `body` runs there.
    ///
    /// ```swift
    /// let watching = try context.observe(FetchDescriptor<Post>(sortBy: [SortDescriptor(\.title)])) { posts in
    ///     titles = posts.map(\.title)
    /// }
    /// watching.cancel()  // when done
    /// ```
    /// - Parameters:
    ///   - descriptor: which models, in what order.
    ///   - isolation: the context's actor (the caller's, by default).
    ///   - body: called on the context's actor with the models.
    /// - Returns: the task delivering the results; cancel it to stop.
    /// - Throws: ``TroveError/unsupportedPredicate(node:reason:)``; the task ends with the
    ///   errors of the reads.
    @discardableResult
    public func observe<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T> = FetchDescriptor(),
        isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping ([T]) -> Void
    ) throws -> Task<Void, any Error> {
        try observeReference(try Self.reference(T.self), descriptor, isolation: isolation, body)
    }

    private func observeReference<M: _ReferenceModel, T: PersistentModel>(
        _ type: M.Type, _ descriptor: FetchDescriptor<T>, isolation: isolated (any Actor)?,
        _ body: @escaping ([T]) -> Void
    ) throws -> Task<Void, any Error> {
        // T is M (checked by `reference`): the descriptor and the arrays are the same values.
        let live = try store.liveQuery(unsafeBitCast(descriptor, to: FetchDescriptor<M>.self))
        let store = self.store
        return Task {
            _ = isolation
            for try await documents in live {
                body(unsafeBitCast(try store.adopt(documents, as: M.self), to: [T].self))
            }
        }
    }

    /// The class-model type behind a generic model type, or the error a value model is.
    static func reference<T: PersistentModel>(_ type: T.Type) throws -> any _ReferenceModel.Type {
        guard let reference = type as? any _ReferenceModel.Type else {
            throw TroveError.invalidModel(
                type: String(describing: T.self),
                reason:
                    "a context manages class models (@Model); store value models with database.models(_:)"
            )
        }
        return reference
    }
}
