import Foundation

/// A context: an identity map of reference models (one instance per row), their changes
/// tracked against what was read, saved together in one transaction or rolled back.
///
/// A context and its models belong to one isolation: the main actor for
/// ``ModelContainer/mainContext`` (UI code), a ``BackgroundModelContext``'s own actor for the
/// context its ``BackgroundModelContext/perform(_:)`` hands out. It is not `Sendable`, so the
/// compiler keeps it and its models there; its async methods run on the caller's actor.
///
/// ```swift
/// let context = container.mainContext
/// let post = Post(id: 1, title: "How to use it?", content: "It's very easy.")
/// try context.insert(post)
/// post.content = "What did I tell you?"
/// try await context.save()
/// let posts = try await context.fetchAll(#Predicate<Post> { $0.title.contains("it") })
/// try context.delete(post)
/// try await context.save()
/// ```
public final class ModelContext {
    let store: ContextStore
    /// The actor the context belongs to, where autosaves run.
    weak var isolation: (any Actor)?

    /// The database the context reads and saves to.
    public var database: Database { store.database }

    init(database: Database, registry: ContextRegistry, isolation: (any Actor)?) {
        store = ContextStore(database: database, registry: registry)
        self.isolation = isolation
        store.owner = self
    }

    /// Starts tracking a new model; the next ``save()`` inserts it.
    ///
    /// - Parameter model: a model not yet stored.
    /// A `UUID` or `String` id left to Trove (``ModelID/unassigned``) is given its time-ordered
    /// value (UUIDv7) here; an `Int64` id must be the model's own.
    ///
    /// - Throws: ``TroveError/duplicateDocumentID(_:)`` when another instance with its id is
    ///   tracked; ``TroveError/invalidModel(type:reason:)`` for a type outside the container's
    ///   schema; ``TroveError/invalidValue(field:reason:)`` for an unassigned `Int64` id.
    public func insert<M: _ReferenceModel>(_ model: M) throws {
        try store.insert(model)
        scheduleAutosave()
    }

    /// Marks a tracked model deleted; the next ``save()`` deletes its row (with the delete rules
    /// of the references to it) and ``rollback()`` brings it back.
    ///
    /// - Parameter model: a model of this context.
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` for a type outside the container's schema.
    public func delete<M: _ReferenceModel>(_ model: M) throws {
        try store.delete(model)
        scheduleAutosave()
    }

    /// The models a descriptor selects, as this context's instances (the identity map: a row
    /// already tracked comes back as the same instance, with its unsaved changes). Models
    /// deleted in this context are left out; inserted ones appear once saved.
    ///
    /// - Parameter descriptor: predicate, order and limits, as for ``ModelCollection/fetch(_:)``.
    /// - Returns: the models, in the descriptor's order.
    /// - Throws: ``TroveError/unsupportedPredicate(node:reason:)``, and the read's errors.
    nonisolated(nonsending) public func fetch<M: _ReferenceModel>(_ descriptor: FetchDescriptor<M>) async throws -> [M] {
        try await store.fetch(descriptor)
    }

    /// The models a predicate accepts, as this context's instances.
    ///
    /// ```swift
    /// let posts = try await context.fetchAll(#Predicate<Post> { $0.title.contains("it") })
    /// ```
    /// - Parameter predicate: which models.
    /// - Returns: the models, in id order.
    /// - Throws: ``TroveError/unsupportedPredicate(node:reason:)``, and the read's errors.
    nonisolated(nonsending) public func fetchAll<M: _ReferenceModel>(_ predicate: Predicate<M>) async throws -> [M] {
        try await store.fetch(FetchDescriptor(predicate: predicate))
    }

    /// Every stored model of a type, as this context's instances.
    ///
    /// - Parameter type: the model type.
    /// - Returns: the models, in id order.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func fetchAll<M: _ReferenceModel>(_ type: M.Type) async throws -> [M] {
        try await store.fetch(FetchDescriptor<M>())
    }

    /// The model with this id: the tracked instance, or the stored row read into a new one.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: its id.
    /// - Returns: the model, or nil when there is none (or it is deleted in this context).
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func model<M: _ReferenceModel>(_ type: M.Type, id: M.ID) async throws -> M? {
        try await store.model(type, id: id)
    }

    /// The value of a model's lazy property: read once (one query for that column of that
    /// row), then kept in the model; a loaded value is returned without a query.
    ///
    /// ```swift
    /// let pixels = try await context.load(\.pixels, of: photo)
    /// ```
    /// - Parameters:
    ///   - keyPath: the ``LazyField`` property.
    ///   - model: a saved model of this context.
    /// - Returns: the value.
    /// - Throws: ``TroveError/documentNotFound(_:)`` when the model is not a saved model of this
    ///   context (or its row is gone), ``TroveError/missingField(field:)`` when the column is null.
    nonisolated(nonsending) public func load<M: _ReferenceModel, V>(_ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M) async throws -> V {
        try await store.load(keyPath, of: model)
    }

    // MARK: Relationships

    /// The model a to-one reference names, through the identity map: read once, then the
    /// same instance every time.
    ///
    /// ```swift
    /// let folder = try await context.referenced(\.folderID, of: note, as: Folder.self)
    /// ```
    /// - Parameters:
    ///   - keyPath: the reference property (declared with ``ModelOptions/reference(_:to:onDelete:)-(KeyPath<Root,Target.ID?>,_,_)``).
    ///   - model: the model holding it.
    ///   - type: the referenced model type.
    /// - Returns: the referenced model, or nil when the property is nil or names nothing.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func referenced<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<M, T.ID?>, of model: M, as type: T.Type
    ) async throws -> T? {
        try await store.referenced(model[keyPath: keyPath], as: type)
    }

    /// The model a required to-one reference names, through the identity map.
    ///
    /// - Parameters:
    ///   - keyPath: the reference property.
    ///   - model: the model holding it.
    ///   - type: the referenced model type.
    /// - Returns: the referenced model, or nil when it names nothing.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func referenced<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<M, T.ID>, of model: M, as type: T.Type
    ) async throws -> T? {
        try await store.referenced(model[keyPath: keyPath], as: type)
    }

    /// The to-many side of a reference (a folder's notes): the models whose property names
    /// `parent`, as this context has them now (unsaved moves and inserts included). The stored
    /// ones are read with one query the first time (none after ``prefetchChildren(_:of:)-(KeyPath<C,P.ID?>,_)``).
    ///
    /// ```swift
    /// let notes = try await context.children(\Note.folderID, of: folder)
    /// ```
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parent: the referenced model.
    /// - Returns: the children.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func children<C: _ReferenceModel, P: _ReferenceModel>(_ keyPath: KeyPath<C, P.ID?>, of parent: P) async throws -> [C] {
        try await store.children(keyPath, of: parent)
    }

    /// The to-many side of a required reference.
    ///
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parent: the referenced model.
    /// - Returns: the children.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func children<C: _ReferenceModel, P: _ReferenceModel>(_ keyPath: KeyPath<C, P.ID>, of parent: P) async throws -> [C] {
        try await store.children(keyPath, of: parent)
    }

    /// Adds `child` to `parent`'s children: sets its reference property (the foreign key it is
    /// saved as) and inserts it when it is new to this context.
    ///
    /// - Parameters:
    ///   - child: the model to add.
    ///   - parent: the model it will reference.
    ///   - keyPath: the child's reference property.
    /// - Throws: the errors of ``insert(_:)``.
    public func append<C: _ReferenceModel, P: _ReferenceModel>(
        _ child: C, to parent: P, via keyPath: ReferenceWritableKeyPath<C, P.ID?>
    ) throws {
        try store.insertIfNew(child)
        child[keyPath: keyPath] = parent.id
    }

    /// Adds `child` to `parent`'s children through a required reference.
    ///
    /// - Parameters:
    ///   - child: the model to add (or move from another parent).
    ///   - parent: the model it will reference.
    ///   - keyPath: the child's reference property.
    /// - Throws: the errors of ``insert(_:)``.
    public func append<C: _ReferenceModel, P: _ReferenceModel>(
        _ child: C, to parent: P, via keyPath: ReferenceWritableKeyPath<C, P.ID>
    ) throws {
        try store.insertIfNew(child)
        child[keyPath: keyPath] = parent.id
    }

    /// Removes `child` from `parent`'s children: its reference property becomes nil (a child
    /// of a required reference is moved with ``append(_:to:via:)-(_,_,ReferenceWritableKeyPath<C,P.ID>)`` or deleted instead).
    ///
    /// - Parameters:
    ///   - child: the model to remove.
    ///   - parent: the model it references.
    ///   - keyPath: the child's reference property.
    public func remove<C: _ReferenceModel, P: _ReferenceModel>(
        _ child: C, from parent: P, via keyPath: ReferenceWritableKeyPath<C, P.ID?>
    ) {
        if child[keyPath: keyPath] == parent.id { child[keyPath: keyPath] = nil }
    }

    /// Reads the children of every parent in one query, so ``children(_:of:)-(KeyPath<C,P.ID?>,_)``
    /// asks the database nothing for them.
    ///
    /// ```swift
    /// let folders = try await context.fetchAll(Folder.self)
    /// try await context.prefetchChildren(\Note.folderID, of: folders)  // one query for every folder's notes
    /// ```
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parents: the referenced models.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func prefetchChildren<C: _ReferenceModel, P: _ReferenceModel>(_ keyPath: KeyPath<C, P.ID?>, of parents: [P]) async throws {
        try await store.prefetchChildren(keyPath, of: parents.map(\.id))
    }

    /// Reads the children of every parent of a required reference in one query.
    ///
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parents: the referenced models.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func prefetchChildren<C: _ReferenceModel, P: _ReferenceModel>(_ keyPath: KeyPath<C, P.ID>, of parents: [P]) async throws {
        try await store.prefetchChildren(keyPath, of: parents.map(\.id))
    }

    /// Reads the models that `models` reference in one query, so ``referenced(_:of:as:)-(KeyPath<M,T.ID?>,_,_)``
    /// asks the database nothing for them.
    ///
    /// - Parameters:
    ///   - keyPath: the reference property.
    ///   - models: the models holding it.
    ///   - type: the referenced model type.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func prefetchReferenced<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<M, T.ID?>, of models: [M], as type: T.Type
    ) async throws {
        try await store.prefetch(type, ids: models.compactMap { $0[keyPath: keyPath] })
    }

    /// The models linked to `model` through a link model (many-to-many): the links whose
    /// `from` property names `model`, and the models their `to` property names. Two queries
    /// at most; add a link by inserting a link model, remove one by deleting it.
    ///
    /// ```swift
    /// let labels = try await context.linked(\NoteLabel.noteID, \NoteLabel.labelID, of: note, as: Label.self)
    /// ```
    /// - Parameters:
    ///   - from: the link's reference to `model`'s type.
    ///   - to: the link's reference to the linked type.
    ///   - model: the model whose links are read.
    ///   - type: the linked model type.
    /// - Returns: the linked models, in the links' order, each once.
    /// - Throws: the read's errors.
    nonisolated(nonsending) public func linked<L: _ReferenceModel, P: _ReferenceModel, T: _ReferenceModel>(
        _ from: KeyPath<L, P.ID>, _ to: KeyPath<L, T.ID>, of model: P, as type: T.Type
    ) async throws -> [T] {
        let links = try await store.children(from, of: model)
        let ids = links.map { $0[keyPath: to] }
        try await store.prefetch(type, ids: ids)
        var seen = Set<T.ID>()
        var linked: [T] = []
        for id in ids where seen.insert(id).inserted {
            if let target = try await store.model(type, id: id) { linked.append(target) }
        }
        return linked
    }

    /// Whether any tracked model was inserted, changed or deleted since the last save.
    ///
    /// - Complexity: O(n) in the tracked models (each property compared with its snapshot; only
    ///   those that differ are encoded).
    public var hasChanges: Bool { store.hasChanges }

    /// Writes every insert, change and delete in one transaction: only the changed fields of
    /// each changed model, each row only if it is still at the version this context read.
    ///
    /// - Throws: ``TroveError/modelConflict(model:id:fields:)`` when a row changed (in another
    ///   context, process, or by raw SQL) since it was read; the constraint errors of the
    ///   writes (``TroveError/uniqueViolation(field:value:)``,
    ///   ``TroveError/deleteDenied(collection:id:referencedBy:)``, ...). Then nothing was
    ///   written and every change stays pending.
    /// - Complexity: O(n) in the tracked models, plus one statement per changed row.
    nonisolated(nonsending) public func save() async throws {
        try await store.save()
    }

    /// Puts every tracked model back as it was read or last saved: each field of each changed
    /// model (through its setter, so observers hear of it), inserted models are no longer
    /// tracked, deleted ones are tracked again.
    ///
    /// - Throws: a decoding error when a saved row no longer decodes into its type.
    public func rollback() throws {
        try store.rollback()
    }

    /// Whether inserts and deletes save themselves: a save is scheduled for the next turn of
    /// this context's actor after each (edits of properties go out with it, or with the next
    /// ``save()``). Errors of an automatic save are kept in ``autosaveError``.
    public var autosave = false

    /// The error of the last automatic save that failed, or nil.
    public private(set) var autosaveError: (any Error)?

    private var autosaveScheduled = false

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
    public func observe<M: _ReferenceModel>(
        _ descriptor: FetchDescriptor<M> = FetchDescriptor(), isolation: isolated (any Actor)? = #isolation,
        _ body: @escaping ([M]) -> Void
    ) throws -> Task<Void, any Error> {
        let live = try store.liveQuery(descriptor)
        let store = self.store
        return Task {
            _ = isolation
            for try await documents in live { body(try store.adopt(documents, as: M.self)) }
        }
    }

    private func scheduleAutosave() {
        guard autosave, !autosaveScheduled, let isolation else { return }
        autosaveScheduled = true
        // Only touched on `isolation`, the context's own actor, where the save runs.
        nonisolated(unsafe) let context = self
        Task { await Self.autosave(context, on: isolation) }
    }

    private static func autosave(_ context: ModelContext, on isolation: isolated any Actor) async {
        context.autosaveScheduled = false
        do { try await context.save() } catch { context.autosaveError = error }
    }
}
