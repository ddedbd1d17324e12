import Foundation
import TroveSQLite

/// The models of a schema opened on a database file (migrated first when a plan is given), and
/// the contexts that manage its class models: SwiftData's `ModelContainer`.
///
/// ```swift
/// let container = try ModelContainer(for: Post.self, Tag.self)
/// let context = container.mainContext          // on the main actor
/// let post = Post(id: 1, title: "How to use it?", content: "It's very easy.")
/// context.insert(post)
/// try context.save()
/// ```
public final class ModelContainer: Sendable {
    /// The database underneath (value models, documents and raw SQL work on it as usual).
    public let database: Database
    /// The models the container stores.
    public let schema: Schema
    /// Where they are stored (one configuration).
    public let configurations: [ModelConfiguration]
    /// The collections of the schema's models, referenced collections first.
    let order: [String]
    /// The temporary file of an in-memory configuration, removed when the container goes.
    private let temporary: TemporaryStoreFile?
    @MainActor private var storedMainContext: ModelContext?

    /// The main actor's context, for UI code, made on first use. Its autosave is on.
    ///
    /// ```swift
    /// @MainActor func add(_ title: String) {
    ///     container.mainContext.insert(Post(id: nextID, title: title, content: ""))
    /// }
    /// ```
    @MainActor public var mainContext: ModelContext {
        if let storedMainContext { return storedMainContext }
        let context = ModelContext(main: self)
        storedMainContext = context
        return context
    }

    /// Opens the collections of these model types, in the file the configuration names (the
    /// default store when none is given).
    ///
    /// ```swift
    /// let container = try ModelContainer(for: Animal.self, AnimalCategory.self,
    ///                                    configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    /// ```
    /// - Parameters:
    ///   - forTypes: the model types (class and value models).
    ///   - migrationPlan: the plan whose last version holds these types, or nil.
    ///   - configurations: where to store them (at most one).
    /// - Throws: as the initializer that takes an array of configurations.
    public convenience init(
        for forTypes: any PersistentModel.Type...,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(
            for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// Opens the collections of a schema's models, migrating the file with `migrationPlan` first.
    ///
    /// ```swift
    /// let container = try ModelContainer(for: Schema(versionedSchema: NotesV2.self), migrationPlan: NotesPlan.self,
    ///                                    configurations: ModelConfiguration(url: storeURL))
    /// ```
    /// - Parameters:
    ///   - givenSchema: the models.
    ///   - migrationPlan: the plan whose last version is the schema's version, or nil.
    ///   - configurations: where to store them (at most one).
    /// - Throws: as the initializer that takes an array of configurations.
    public convenience init(
        for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(
            for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    /// Opens the collections of a schema's models, migrating the file with `migrationPlan` first.
    ///
    /// Synchronous, as SwiftData's: the migration and the opening run on a connection of their
    /// own before this returns. (A plan with re-embedding steps is migrated with
    /// ``Migrator/migrate(_:upTo:)`` first, which computes the vectors asynchronously.)
    ///
    /// - Parameters:
    ///   - givenSchema: the models.
    ///   - migrationPlan: the plan whose last version is the schema's version, or nil.
    ///   - configurations: where to store them: none for the default store, or one.
    /// - Throws: ``TroveError/invalidConfiguration(_:)`` for more than one configuration or a
    ///   plan that does not end at the schema's version; ``TroveError/invalidModel(type:reason:)``
    ///   for a type that cannot be stored; ``TroveError/schemaMismatch(collection:details:)``
    ///   when a collection holds another shape and no plan migrates it; ``MigrationError``;
    ///   `SQLiteError` when the file cannot be opened.
    public init(
        for givenSchema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: [ModelConfiguration]
    ) throws {
        guard configurations.count <= 1 else {
            throw TroveError.invalidConfiguration(
                "a container stores its models in one configuration, not \(configurations.count)")
        }
        let configuration = configurations.first ?? ModelConfiguration()
        let schema = configuration.schema ?? givenSchema
        if let plan = migrationPlan, let last = plan.schemas.last,
            last.versionIdentifier != schema.version
        {
            throw TroveError.invalidConfiguration(
                "the migration plan ends at \(last.versionIdentifier), not at \(schema.version)")
        }
        for type in schema.models {
            if let reference = type as? any _ReferenceModel.Type { try Self.checkLayout(reference) }
        }
        let collections = try Migrator.collectionSchemas(of: schema.models)
        let url = configuration.url
        if !configuration.isStoredInMemoryOnly {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        let temporary =
            configuration.isStoredInMemoryOnly ? TemporaryStoreFile(path: url.path) : nil
        let database = try Database(path: url.path)
        if let migrationPlan {
            // Migrated on a connection of its own, synchronously (the database's writer is an
            // actor's); the collections are opened after, in their migrated shape.
            let connection = try database.openContextConnection()
            try MigrationRunner(
                connection: connection, stores: database.documentStores, clock: database.clock,
                mapsVersions: true
            )
            .migrate(try Migrator(plan: migrationPlan))
        }
        try database.openModelCollections(collections)
        self.database = database
        self.schema = schema
        self.configurations = [configuration]
        self.temporary = temporary
        order = collections.map(\.name)
    }

    /// The store of one of the schema's collections, with a registry that finds them.
    func makeStore() -> ContextStore {
        let (database, names) = (database, Set(order))
        return ContextStore(
            registry: ContextRegistry(
                store: { name in names.contains(name) ? database.documentStores[name] : nil },
                order: order,
                types: ContextRegistry.referenceTypes(schema.models)),
            database: database, open: { try database.openContextConnection() })
    }

    private static func checkLayout<M: _ReferenceModel>(_ type: M.Type) throws {
        _ = try ReferenceLayout<M>.shared()
        // An array that leaves its inverse to the other side: the other side must name it (its
        // to-one property for one-to-many, its array for many-to-many), or the relationship is
        // ambiguous.
        for relationship in M._$relationships {
            guard let access = relationship.manyToMany, access.other() == nil else { continue }
            let other = access.otherType
            throw TroveError.invalidModel(
                type: "\(M.self)",
                reason:
                    "\(M.self).\(relationship.name) has no inverse: name it here with @Relationship(inverse:), "
                    + "or on \(other) with @Relationship(inverse: \\\(M.self).\(relationship.name)) on its to-one "
                    + "property (one-to-many) or its array (many-to-many)"
            )
        }
    }
}

extension Database {
    /// Opens (creating when missing) a schema's collections on a connection of its own, before
    /// the container that asks returns; a collection of another shape is a schema mismatch.
    nonisolated func openModelCollections(_ collections: [(name: String, schema: DocumentSchema)])
        throws
    {
        let connection = try openContextConnection()
        for (name, schema) in collections {
            if let store = documentStores[name] {
                let differences = store.schema.differences(from: schema)
                guard differences.isEmpty else {
                    throw TroveError.schemaMismatch(
                        collection: name, details: differences.joined(separator: "; "))
                }
                continue
            }
            let store = try DocumentStore.open(
                connection: connection, name: name, requested: schema, graph: documentStores.graph,
                clock: clock)
            documentStores[name] = store
        }
    }
}

/// The file of an in-memory configuration: removed, with its WAL and shared-memory files, when
/// the container that made it goes (connections still open keep reading what they have).
final class TemporaryStoreFile: Sendable {
    let path: String

    init(path: String) { self.path = path }

    deinit {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }
}

/// An actor that works with models off the main actor: its own ``ModelContext`` on the
/// container, used only on the actor (SwiftData's `ModelActor`). Conform by hand (or, later,
/// with `@ModelActor`): store the container and a context made from it.
///
/// ```swift
/// actor Importer: ModelActor {
///     let modelContainer: ModelContainer
///     let modelContext: ModelContext
///     init(modelContainer: ModelContainer) {
///         self.modelContainer = modelContainer
///         modelContext = ModelContext(modelContainer)
///     }
///     func importPosts(_ titles: [String]) throws {
///         for (i, title) in titles.enumerated() { modelContext.insert(Post(id: Int64(i), title: title, content: "")) }
///         try modelContext.save()
///     }
/// }
/// let importer = Importer(modelContainer: container)
/// try await importer.importPosts(["One", "Two"])
/// ```
public protocol ModelActor: Actor {
    /// The container whose models the actor works with.
    nonisolated var modelContainer: ModelContainer { get }
    /// The actor's context: use it (and its models) only on the actor.
    var modelContext: ModelContext { get }
}
