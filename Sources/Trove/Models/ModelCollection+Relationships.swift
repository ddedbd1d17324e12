import Foundation

/// A relationship loaded together with a model fetch: one more statement each, never one per
/// model.
///
/// ```swift
/// let page = try await books.fetch(FetchDescriptor(), prefetching: [.referenced(\Book.authorID)])
/// let shelf = try await authors.fetch(FetchDescriptor(), prefetching: [.children(Book.self, via: \Book.authorID)])
/// ```
public struct ModelPrefetch<M: Model>: Sendable {
    /// The engine's prefetch for `M`'s schema. Key paths are read into property names when the
    /// value is made (key paths are not Sendable); errors surface when the fetch runs.
    let resolve: @Sendable (ModelSchema<M>) throws -> Prefetch

    /// To-one: the model each fetched model's reference property names.
    public static func referenced<ID: ModelID>(_ keyPath: KeyPath<M, ID>) -> ModelPrefetch {
        referenced(keyPath as AnyKeyPath)
    }
    /// To-one through an optional reference property.
    public static func referenced<ID: ModelID>(_ keyPath: KeyPath<M, ID?>) -> ModelPrefetch {
        referenced(keyPath as AnyKeyPath)
    }

    /// To-many, through the inverse: the `C` models whose reference property names a fetched model.
    public static func children<C: Model>(_ child: C.Type, via keyPath: KeyPath<C, M.ID>)
        -> ModelPrefetch
    {
        children(child, keyPath as AnyKeyPath)
    }
    /// To-many through an optional reference property of `C`.
    public static func children<C: Model>(_ child: C.Type, via keyPath: KeyPath<C, M.ID?>)
        -> ModelPrefetch
    {
        children(child, keyPath as AnyKeyPath)
    }

    private static func referenced(_ keyPath: AnyKeyPath) -> ModelPrefetch {
        let names = Result { try KeyPathNames.components(keyPath) }
        let printed = "\(keyPath)"
        return ModelPrefetch { schema in
            .referenced(try schema.field(names.get(), printed: printed).field.name)
        }
    }

    private static func children<C: Model>(_ child: C.Type, _ keyPath: AnyKeyPath)
        -> ModelPrefetch
    {
        let names = Result { try KeyPathNames.components(keyPath) }
        let printed = "\(keyPath)"
        return ModelPrefetch { _ in
            let column = try ModelSchema<C>.shared().field(names.get(), printed: printed).field.name
            return .children(C.collectionName, via: column)
        }
    }
}

/// The models of a fetch and the related models it prefetched, decoded when asked for.
///
/// ```swift
/// let result = try await books.fetch(FetchDescriptor(sortBy: [SortDescriptor(\.title)]), prefetching: [.referenced(\Book.authorID)])
/// for book in result.models {
///     print(book.title, try result.referenced(\.authorID, of: book, as: Author.self)?.name ?? "?")
/// }
/// ```
public struct ModelFetchResult<M: Model>: Sendable {
    /// The fetched models, in the descriptor's order.
    public let models: [M]
    let related: PrefetchedDocuments
    let schema: ModelSchema<M>

    /// The `T` that `model`'s reference property names (prefetched with `.referenced(keyPath)`;
    /// asking for another is a bug and traps), or nil when it names none.
    public func referenced<T: Model>(_ keyPath: KeyPath<M, T.ID>, of model: M, as type: T.Type)
        throws -> T?
    {
        try referenced(keyPath, id: model[keyPath: keyPath].documentID, as: type)
    }

    /// The `T` an optional reference property names, or nil.
    public func referenced<T: Model>(_ keyPath: KeyPath<M, T.ID?>, of model: M, as type: T.Type)
        throws -> T?
    {
        guard let id = model[keyPath: keyPath] else { return nil }
        return try referenced(keyPath, id: id.documentID, as: type)
    }

    /// The `C` models whose reference property names `model`, in id order (prefetched with
    /// `.children(C.self, via: keyPath)`).
    public func children<C: Model>(_ type: C.Type, via keyPath: KeyPath<C, M.ID>, of model: M)
        throws -> [C]
    {
        try children(type, keyPath, of: model)
    }

    /// The `C` models whose optional reference property names `model`.
    public func children<C: Model>(_ type: C.Type, via keyPath: KeyPath<C, M.ID?>, of model: M)
        throws -> [C]
    {
        try children(type, keyPath, of: model)
    }

    private func referenced<T: Model>(_ keyPath: AnyKeyPath, id: DocumentID, as type: T.Type) throws
        -> T?
    {
        let column = try schema.field(keyPath).field.name
        guard let targets = related.referenced[column] else {
            preconditionFailure("\(keyPath) was not prefetched")
        }
        return try targets.byID[id].map(ModelSchema<T>.shared().decode)
    }

    private func children<C: Model>(_ type: C.Type, _ keyPath: AnyKeyPath, of model: M) throws
        -> [C]
    {
        let childSchema = try ModelSchema<C>.shared()
        let column = try childSchema.field(keyPath).field.name
        guard let groups = related.childGroups[.children(C.collectionName, via: column)] else {
            preconditionFailure("\(keyPath) was not prefetched")
        }
        return try (groups[model.id.documentID] ?? []).map(childSchema.decode)
    }
}

extension ModelCollection {
    /// Models by id in one statement, in the order asked (each once), skipping missing ids.
    ///
    /// ```swift
    /// let writers = try await authors.fetch(ids: books.map(\.authorID))
    /// ```
    public func fetch(ids: [M.ID]) async throws -> [M] {
        try await documents.fetch(ids: ids.map(\.documentID)).map(schema.decode)
    }

    /// The models whose reference property `keyPath` names one of `parents`, grouped by parent,
    /// in one statement (the to-many side of ``ModelOptions/reference(_:to:onDelete:)-(KeyPath<Root,Target.ID>,_,_)``).
    /// Every parent asked is a key; one nothing references has an empty list.
    ///
    /// ```swift
    /// let byAuthor = try await books.children(of: [1, 2], via: \Book.authorID,
    ///                                         FetchDescriptor(sortBy: [SortDescriptor(\.year)], fetchLimit: 3))
    /// ```
    /// - Parameters:
    ///   - parents: the ids of the referenced models.
    ///   - keyPath: the reference property that names them.
    ///   - descriptor: a predicate, the order within each group, and `fetchLimit` as a limit per
    ///     parent; `fetchOffset` and `cursor` are refused (``TroveError/invalidQuery(_:)``).
    public func children<ParentID: ModelID>(
        of parents: [ParentID], via keyPath: KeyPath<M, ParentID>,
        _ descriptor: FetchDescriptor<M> = FetchDescriptor()
    ) async throws -> [ParentID: [M]] {
        try await children(of: parents, keyPath, descriptor)
    }

    /// The models whose optional reference property names one of `parents`, grouped by parent.
    public func children<ParentID: ModelID>(
        of parents: [ParentID], via keyPath: KeyPath<M, ParentID?>,
        _ descriptor: FetchDescriptor<M> = FetchDescriptor()
    ) async throws -> [ParentID: [M]] {
        try await children(of: parents, keyPath, descriptor)
    }

    private func children<ParentID: ModelID>(
        of parents: [ParentID], _ keyPath: AnyKeyPath, _ descriptor: FetchDescriptor<M>
    ) async throws -> [ParentID: [M]] {
        let column = try schema.field(keyPath).field.name
        let groups = try await documents.children(
            of: parents.map(\.documentID), via: column, descriptor.query(schema))
        return try schema.group(groups, as: ParentID.self)
    }

    /// The models a descriptor selects and, from the same snapshot, their related models: one
    /// statement for the models and one per prefetch.
    ///
    /// ```swift
    /// let result = try await books.fetch(FetchDescriptor(), prefetching: [.referenced(\Book.authorID)])
    /// let author = try result.referenced(\.authorID, of: result.models[0], as: Author.self)
    /// ```
    public func fetch(_ descriptor: FetchDescriptor<M>, prefetching prefetches: [ModelPrefetch<M>])
        async throws
        -> ModelFetchResult<M>
    {
        let schema = self.schema
        let related = try await documents.fetch(
            descriptor.query(schema), prefetching: prefetches.map { try $0.resolve(schema) })
        return ModelFetchResult(
            models: try related.documents.map(schema.decode), related: related, schema: schema)
    }
}

extension ModelReader {
    /// Models grouped by the parent their reference property names, on this snapshot; see
    /// ``ModelCollection/children(of:via:_:)-(_,KeyPath<M,ParentID>,_)``.
    public func children<ParentID: ModelID>(
        of parents: [ParentID], via keyPath: KeyPath<M, ParentID>,
        _ descriptor: FetchDescriptor<M> = FetchDescriptor()
    ) throws -> [ParentID: [M]] {
        let column = try schema.field(keyPath).field.name
        return try schema.group(
            reader.children(of: parents.map(\.documentID), via: column, descriptor.query(schema)),
            as: ParentID.self)
    }
}

extension ModelSchema {
    /// Documents grouped by parent id as models grouped by typed parent id.
    func group<ParentID: ModelID>(_ groups: [DocumentID: [Document]], as type: ParentID.Type) throws
        -> [ParentID: [M]]
    {
        var out: [ParentID: [M]] = [:]
        for (id, documents) in groups {
            guard let parent = ParentID(documentID: id) else { continue }
            out[parent] = try documents.map(decode)
        }
        return out
    }
}
