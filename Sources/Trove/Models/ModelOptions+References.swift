import Foundation

extension ModelOptions {
    /// A to-one relationship: the property holds the id of a `Target` model. It is stored as a
    /// reference field (a SQLite foreign key to `Target`'s collection, indexed) with the delete
    /// rule; the to-many side is the inverse, read with
    /// ``ModelCollection/children(of:via:_:)-(_,KeyPath<M,ParentID>,_)``.
    ///
    /// ```swift
    /// struct Book: Model {
    ///     var id: Int64
    ///     var title: String
    ///     var authorID: Author.ID
    ///     static var modelOptions: ModelOptions {
    ///         ModelOptions().reference(\Book.authorID, to: Author.self, onDelete: .cascade)
    ///     }
    /// }
    /// ```
    /// Opening the model's collection creates `Target`'s first when it does not exist yet.
    public func reference<Root, Target: PersistentModel>(
        _ keyPath: KeyPath<Root, Target.ID>, to target: Target.Type, onDelete: DeleteRule
    ) -> ModelOptions {
        reference(keyPath as AnyKeyPath, target, onDelete)
    }

    /// An optional to-one relationship (nil references nothing); the only kind `.nullify` allows.
    public func reference<Root, Target: PersistentModel>(
        _ keyPath: KeyPath<Root, Target.ID?>, to target: Target.Type, onDelete: DeleteRule
    ) -> ModelOptions {
        reference(keyPath as AnyKeyPath, target, onDelete)
    }

    func reference<Target: PersistentModel>(
        _ keyPath: AnyKeyPath, _ target: Target.Type, _ rule: DeleteRule
    )
        -> ModelOptions
    {
        with {
            guard let name = $0.topLevel(keyPath) else { return }
            $0.references[name] = Reference(
                Target.collectionName, id: Target.ID.idKind, onDelete: rule)
            $0.referenceTargets[name] = target
        }
    }
}

extension Database {
    /// Creates the collections `M` references that do not exist yet (their types are known from
    /// `M`'s options), so model collections can be opened in any order.
    func openReferencedModels<M: PersistentModel>(of type: M.Type) throws {
        var visiting: Set<String> = [M.collectionName]
        try openReferencedModels(of: type, visiting: &visiting)
    }

    private func openReferencedModels<M: PersistentModel>(
        of type: M.Type, visiting: inout Set<String>
    ) throws {
        for target in M.declaredOptions.referenceTargets.values {
            try openModel(target, visiting: &visiting)
        }
    }

    private func openModel<T: PersistentModel>(_ type: T.Type, visiting: inout Set<String>) throws {
        // Already open or stored, or on the path being opened (a cycle: its own creation reports it).
        guard visiting.insert(T.collectionName).inserted, documentStores[T.collectionName] == nil,
            try DocumentStore.storedSchema(
                connection, key: DocumentLayout.metaKeyPrefix + T.collectionName,
                name: T.collectionName) == nil
        else { return }
        try openReferencedModels(of: type, visiting: &visiting)
        _ = try documents(T.collectionName, schema: ModelSchema<T>.shared().documentSchema)
    }
}
