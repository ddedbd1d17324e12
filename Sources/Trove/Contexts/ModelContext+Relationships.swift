import Foundation

/// Foreign-key ids and their objects: a context's reads and edits of the relationships that
/// models declare as ids (`ModelOptions.reference`) rather than as object properties.
extension ModelContext {
    /// The model a to-one reference names, through the identity map: read once, then the
    /// same instance every time.
    ///
    /// ```swift
    /// let folder = try context.referenced(\.folderID, of: note, as: Folder.self)
    /// ```
    /// - Parameters:
    ///   - keyPath: the reference property (declared with ``ModelOptions/reference(_:to:onDelete:)-(KeyPath<Root,Target.ID?>,_,_)``).
    ///   - model: the model holding it.
    ///   - type: the referenced model type.
    /// - Returns: the referenced model, or nil when the property is nil or names nothing.
    /// - Throws: the read's errors.
    public func referenced<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<M, T.ID?>, of model: M, as type: T.Type
    ) throws -> T? {
        try store.referenced(model[keyPath: keyPath], as: type)
    }

    /// The model a required to-one reference names, through the identity map.
    ///
    /// - Parameters:
    ///   - keyPath: the reference property.
    ///   - model: the model holding it.
    ///   - type: the referenced model type.
    /// - Returns: the referenced model, or nil when it names nothing.
    /// - Throws: the read's errors.
    public func referenced<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<M, T.ID>, of model: M, as type: T.Type
    ) throws -> T? {
        try store.referenced(model[keyPath: keyPath], as: type)
    }

    /// The to-many side of a reference (a folder's notes): the models whose property names
    /// `parent`, as this context has them now (unsaved moves and inserts included). The stored
    /// ones are read with one query the first time (none after ``prefetchChildren(_:of:)-(KeyPath<C,P.ID?>,_)``).
    ///
    /// ```swift
    /// let notes = try context.children(\Note.folderID, of: folder)
    /// ```
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parent: the referenced model.
    /// - Returns: the children.
    /// - Throws: the read's errors.
    public func children<C: _ReferenceModel, P: _ReferenceModel>(
        _ keyPath: KeyPath<C, P.ID?>, of parent: P
    ) throws
        -> [C]
    {
        try store.children(keyPath, of: parent)
    }

    /// The to-many side of a required reference.
    ///
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parent: the referenced model.
    /// - Returns: the children.
    /// - Throws: the read's errors.
    public func children<C: _ReferenceModel, P: _ReferenceModel>(
        _ keyPath: KeyPath<C, P.ID>, of parent: P
    ) throws
        -> [C]
    {
        try store.children(keyPath, of: parent)
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
        scheduleAutosave()
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
        scheduleAutosave()
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
    /// let folders = try context.fetch(FetchDescriptor<Folder>())
    /// try context.prefetchChildren(\Note.folderID, of: folders)  // one query for every folder's notes
    /// ```
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parents: the referenced models.
    /// - Throws: the read's errors.
    public func prefetchChildren<C: _ReferenceModel, P: _ReferenceModel>(
        _ keyPath: KeyPath<C, P.ID?>, of parents: [P]
    )
        throws
    {
        try store.prefetchChildren(keyPath, of: parents.map(\.id))
    }

    /// Reads the children of every parent of a required reference in one query.
    ///
    /// - Parameters:
    ///   - keyPath: the child's reference property.
    ///   - parents: the referenced models.
    /// - Throws: the read's errors.
    public func prefetchChildren<C: _ReferenceModel, P: _ReferenceModel>(
        _ keyPath: KeyPath<C, P.ID>, of parents: [P]
    )
        throws
    {
        try store.prefetchChildren(keyPath, of: parents.map(\.id))
    }

    /// Reads the models that `models` reference in one query, so ``referenced(_:of:as:)-(KeyPath<M,T.ID?>,_,_)``
    /// asks the database nothing for them.
    ///
    /// - Parameters:
    ///   - keyPath: the reference property.
    ///   - models: the models holding it.
    ///   - type: the referenced model type.
    /// - Throws: the read's errors.
    public func prefetchReferenced<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<M, T.ID?>, of models: [M], as type: T.Type
    ) throws {
        try store.prefetch(type, ids: models.compactMap { $0[keyPath: keyPath] })
    }

    /// The models linked to `model` through a link model (many-to-many): the links whose
    /// `from` property names `model`, and the models their `to` property names. Two queries
    /// at most; add a link by inserting a link model, remove one by deleting it.
    ///
    /// ```swift
    /// let labels = try context.linked(\NoteLabel.noteID, \NoteLabel.labelID, of: note, as: Label.self)
    /// ```
    /// - Parameters:
    ///   - from: the link's reference to `model`'s type.
    ///   - to: the link's reference to the linked type.
    ///   - model: the model whose links are read.
    ///   - type: the linked model type.
    /// - Returns: the linked models, in the links' order, each once.
    /// - Throws: the read's errors.
    public func linked<L: _ReferenceModel, P: _ReferenceModel, T: _ReferenceModel>(
        _ from: KeyPath<L, P.ID>, _ to: KeyPath<L, T.ID>, of model: P, as type: T.Type
    ) throws -> [T] {
        let links = try store.children(from, of: model)
        let ids = links.map { $0[keyPath: to] }
        try store.prefetch(type, ids: ids)
        var seen = Set<T.ID>()
        var linked: [T] = []
        for id in ids where seen.insert(id).inserted {
            if let target = try store.model(type, id: id) { linked.append(target) }
        }
        return linked
    }
}
