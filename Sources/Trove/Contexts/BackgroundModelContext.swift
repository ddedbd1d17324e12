import Foundation

/// A context isolated to an actor of its own (``ModelContainer/backgroundContext()``), for
/// imports and other work off the main actor. Its models belong to it: work with them inside
/// ``perform(_:)`` (or in an extension of this type), where they are isolated with it.
///
/// ```swift
/// let background = container.backgroundContext()
/// let count = try await background.perform { context in
///     let drafts = try await context.fetchAll(#Predicate<Post> { $0.content == "" })
///     for post in drafts { post.content = "(empty)" }
///     try await context.save()
///     return drafts.count
/// }
/// ```
public actor BackgroundModelContext {
    let store: ContextStore

    /// The database the context reads and saves to.
    public nonisolated let database: Database

    init(database: Database, registry: ContextRegistry) {
        self.database = database
        store = ContextStore(database: database, registry: registry)
    }

    /// Runs `body` isolated to this context, where its models can be read and changed.
    ///
    /// - Parameter body: the work; it gets the context itself.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    public func perform<T: Sendable>(_ body: @Sendable (isolated BackgroundModelContext) async throws -> T) async rethrows -> T {
        try await body(self)
    }

    /// Starts tracking a new model; the next ``save()`` inserts it.
    ///
    /// - Parameter model: a model not yet stored.
    /// - Throws: ``TroveError/duplicateDocumentID(_:)`` when another instance with its id is
    ///   tracked; ``TroveError/invalidModel(type:reason:)`` for a type outside the container's schema.
    public func insert<M: ReferenceModel>(_ model: M) throws {
        try store.insert(model)
        scheduleAutosave()
    }

    /// Marks a tracked model deleted; the next ``save()`` deletes its row (with the delete rules
    /// of the references to it) and ``rollback()`` brings it back.
    ///
    /// - Parameter model: a model of this context.
    /// - Throws: ``TroveError/invalidModel(type:reason:)`` for a type outside the container's schema.
    public func delete<M: ReferenceModel>(_ model: M) throws {
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
    public func fetch<M: ReferenceModel>(_ descriptor: FetchDescriptor<M>) async throws -> [M] {
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
    public func fetchAll<M: ReferenceModel>(_ predicate: Predicate<M>) async throws -> [M] {
        try await store.fetch(FetchDescriptor(predicate: predicate))
    }

    /// Every stored model of a type, as this context's instances.
    ///
    /// - Parameter type: the model type.
    /// - Returns: the models, in id order.
    /// - Throws: the read's errors.
    public func fetchAll<M: ReferenceModel>(_ type: M.Type) async throws -> [M] {
        try await store.fetch(FetchDescriptor<M>())
    }

    /// The model with this id: the tracked instance, or the stored row read into a new one.
    ///
    /// - Parameters:
    ///   - type: the model type.
    ///   - id: its id.
    /// - Returns: the model, or nil when there is none (or it is deleted in this context).
    /// - Throws: the read's errors.
    public func model<M: ReferenceModel>(_ type: M.Type, id: M.ID) async throws -> M? {
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
    public func load<M: ReferenceModel, V>(_ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M) async throws -> V {
        try await store.load(keyPath, of: model)
    }

    /// Whether any tracked model was inserted, changed or deleted since the last save.
    ///
    /// - Complexity: O(n) in the tracked models (each is encoded and compared with its snapshot).
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
    public func save() async throws {
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

    private func scheduleAutosave() {
        guard autosave, !autosaveScheduled else { return }
        autosaveScheduled = true
        Task {
            await self.runAutosave()
        }
    }

    private func runAutosave() async {
        autosaveScheduled = false
        do { try await save() } catch { autosaveError = error }
    }
}
