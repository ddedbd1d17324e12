import Foundation

/// A database with a versioned schema's models opened (migrated first when a plan is given)
/// and the contexts that manage its reference models: ``mainContext`` for UI code and
/// ``backgroundContext()`` for work elsewhere (the SwiftData shape).
///
/// ```swift
/// let container = try await ModelContainer(BlogV1.self, migration: BlogPlan.self, at: path)
/// let context = container.mainContext
/// let post = Post(id: 1, title: "How to use it?", content: "It's very easy.")
/// try context.insert(post)
/// post.content = "What did I tell you?"
/// try await context.save()
/// ```
public final class ModelContainer: Sendable {
    /// The database underneath (value models, documents and raw SQL work on it as usual).
    public let database: Database
    /// The context of the main actor, for UI code.
    @MainActor public let mainContext: ModelContext
    let registry: ContextRegistry

    /// Opens the collections of `schema`'s models on `database`, after migrating it with `plan`.
    ///
    /// - Parameters:
    ///   - schema: the current version of the app's models (value and reference models).
    ///   - plan: the migration plan whose last version is `schema`; nil when the file holds
    ///     only this version (its collections are created or must already match).
    ///   - database: the database to open them on.
    /// - Throws: ``TroveError/invalidConfiguration(_:)`` when the plan does not end at
    ///   `schema`; ``TroveError/invalidModel(type:reason:)`` for a type that cannot be stored;
    ///   ``TroveError/schemaMismatch(collection:details:)`` when a collection holds another
    ///   shape and no plan migrates it; the errors of ``Migrator/migrate(_:upTo:)``.
    @MainActor
    public init(
        _ schema: any VersionedSchema.Type, migration plan: (any SchemaMigrationPlan.Type)? = nil, database: Database
    ) async throws {
        if let plan {
            guard plan.schemas.last?.versionIdentifier == schema.versionIdentifier else {
                throw TroveError.invalidConfiguration(
                    "the migration plan ends at \(plan.schemas.last?.versionIdentifier ?? "nothing"), not at \(schema.versionIdentifier)")
            }
            try await Migrator(plan: plan).migrate(database)
        }
        for type in schema.models {
            if let reference = type as? any _ReferenceModel.Type { try Self.checkLayout(reference) }
        }
        var collections: [String: DocumentCollection] = [:]
        var order: [String] = []
        for (name, documentSchema) in try Migrator.collectionSchemas(of: schema) {
            collections[name] = try await database.documents(name, schema: documentSchema)
            order.append(name)
        }
        let registry = ContextRegistry(collections: collections, order: order)
        self.database = database
        self.registry = registry
        mainContext = ModelContext(database: database, registry: registry, isolation: MainActor.shared)
    }

    /// Opens (or creates) the database file at `path` and the collections of `schema`'s models.
    ///
    /// - Parameters:
    ///   - schema: the current version of the app's models.
    ///   - plan: the migration plan whose last version is `schema`, or nil.
    ///   - path: the database file.
    /// - Throws: the errors of ``Database/init(path:readOnly:busyTimeout:clock:)`` and
    ///   ``init(_:migration:database:)``.
    @MainActor
    public convenience init(
        _ schema: any VersionedSchema.Type, migration plan: (any SchemaMigrationPlan.Type)? = nil, at path: String
    ) async throws {
        try await self.init(schema, migration: plan, database: try Database(path: path))
    }

    /// A new context on an actor of its own, for imports and other work off the main actor.
    /// Each has its own identity map: its instances are not the main context's.
    ///
    /// ```swift
    /// let background = container.backgroundContext()
    /// try await background.perform { context in
    ///     for i in 1...1000 { try context.insert(Post(id: i, title: "Post \(i)", content: "")) }
    ///     try await context.save()
    /// }
    /// ```
    public func backgroundContext() -> BackgroundModelContext {
        BackgroundModelContext(database: database, registry: registry)
    }

    private static func checkLayout<M: _ReferenceModel>(_ type: M.Type) throws {
        _ = try ReferenceLayout<M>.shared()
    }
}
