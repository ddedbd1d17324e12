import Foundation

/// One version of an app's models, as SwiftData's `VersionedSchema`: its version and the model
/// types of that version (old versions' types kept in their own namespace).
///
/// ```swift
/// enum NotesV1: VersionedSchema {
///     static let versionIdentifier = Schema.Version(1, 0, 0)
///     static let models: [any PersistentModel.Type] = [Note.self]
///     struct Note: Model { var id: Int64; var title: String; var body: String }
/// }
/// enum NotesV2: VersionedSchema {
///     static let versionIdentifier = Schema.Version(2, 0, 0)
///     static let models: [any PersistentModel.Type] = [Note.self]
///     struct Note: Model { var id: Int64; var title: String; var text: String; var priority: Int }
/// }
/// ```
public protocol VersionedSchema: Sendable {
    /// The version, recorded in the file's timeline as its description ("2.0.0"); unique
    /// within a plan. (Files whose timeline recorded string identifiers such as "2" open as
    /// version 2.0.0.)
    static var versionIdentifier: Schema.Version { get }
    /// The model types of this version (value or class models). Each is stored in its ``PersistentModel/collectionName``, so a
    /// type's versions share a name (nested types: `NotesV1.Note` and `NotesV2.Note` are both
    /// `Note`).
    static var models: [any PersistentModel.Type] { get }
}

/// The versions of an app's models, oldest first, and how to get from each to the next, as
/// SwiftData's `SchemaMigrationPlan`. Between two versions with no stage of their own the
/// migration is lightweight.
///
/// ```swift
/// enum NotesPlan: SchemaMigrationPlan {
///     static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
///     static let stages: [MigrationStage] = [
///         .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: nil, didMigrate: { context in
///             for note in try context.fetch(FetchDescriptor<NotesV2.Note>()) where note.title.hasPrefix("!") {
///                 note.priority = 1
///             }
///             try context.save()
///         }),
///     ]
/// }
/// let container = try ModelContainer(for: Schema(versionedSchema: NotesV2.self), migrationPlan: NotesPlan.self)
/// ```
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions that need more than a lightweight migration.
    static var stages: [MigrationStage] { get }
}

/// How one version of a plan becomes the next, as SwiftData's `MigrationStage`.
public struct MigrationStage: Sendable {
    let from: any VersionedSchema.Type
    let to: any VersionedSchema.Type
    /// Per collection: old field name to new.
    let renamed: [String: [String: String]]
    let willMigrate: (@Sendable (ModelContext) throws -> Void)?
    /// Declarative steps run after `willMigrate`, before the lightweight part: changes the two
    /// schemas cannot say, such as a type change with its transform.
    let steps: [MigrationStep]
    let didMigrate: (@Sendable (ModelContext) throws -> Void)?

    /// Derived from the two versions' model schemas (``MigrationStep/lightweight(_:to:renamed:)``
    /// for each model). Renames cannot be told from a removal and an addition: name them, per
    /// collection, in `renamed` (a Trove addition; SwiftData reads `@Attribute(originalName:)`).
    ///
    /// ```swift
    /// .lightweight(fromVersion: NotesV1.self, toVersion: NotesV2.self)
    /// ```
    /// - Parameters:
    ///   - fromVersion: the older version.
    ///   - toVersion: the next one.
    ///   - renamed: per collection, old field name to new.
    /// - Returns: the stage.
    public static func lightweight(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        renamed: [String: [String: String]] = [:]
    ) -> MigrationStage {
        MigrationStage(
            from: fromVersion, to: toVersion, renamed: renamed, willMigrate: nil, steps: [],
            didMigrate: nil)
    }

    /// The lightweight migration with custom work around it, in the same transaction:
    /// `willMigrate` gets a ``ModelContext`` of the old version's models (fetch them as
    /// `OldVersion.Model`, change them, `save()`), then `steps` run (a type change with its
    /// transform, say), then the lightweight part, then `didMigrate` gets a context of the new
    /// version's models. A context's save inside a stage is part of the migration: it commits
    /// with it or not at all.
    ///
    /// ```swift
    /// .custom(fromVersion: V1.self, toVersion: V2.self, willMigrate: { context in
    ///     for trip in try context.fetch(FetchDescriptor<V1.Trip>()) where trip.name.isEmpty {
    ///         context.delete(trip)
    ///     }
    ///     try context.save()
    /// }, didMigrate: nil)
    /// ```
    /// - Parameters:
    ///   - fromVersion: the older version.
    ///   - toVersion: the next one.
    ///   - renamed: per collection, old field name to new.
    ///   - willMigrate: work on the old version's models, before the change.
    ///   - steps: declarative steps between `willMigrate` and the lightweight part.
    ///   - didMigrate: work on the new version's models, after it.
    /// - Returns: the stage.
    public static func custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        renamed: [String: [String: String]] = [:],
        willMigrate: (@Sendable (ModelContext) throws -> Void)?, steps: [MigrationStep] = [],
        didMigrate: (@Sendable (ModelContext) throws -> Void)?
    ) -> MigrationStage {
        MigrationStage(
            from: fromVersion, to: toVersion, renamed: renamed, willMigrate: willMigrate,
            steps: steps,
            didMigrate: didMigrate)
    }
}

extension Migrator {
    /// The timeline of a plan: one migration per version, named by its ``VersionedSchema/versionIdentifier``
    /// ("2.0.0").
    /// The first creates the first version's collections (or adopts existing ones of that shape);
    /// each later one runs its stage: `willMigrate`, the stage's steps, a lightweight migration of every model to the
    /// new version (referenced collections first), the old version's collections that the new one
    /// no longer has dropped, then `didMigrate`.
    ///
    /// - Throws: ``MigrationError/invalidStep(migration:reason:)`` for a plan whose versions repeat
    ///   a name or whose stages do not join consecutive versions; ``TroveError/invalidModel(type:reason:)``
    ///   for a model type that cannot be stored.
    public init<Plan: SchemaMigrationPlan>(plan: Plan.Type) throws {
        self.init()
        mapsVersions = true
        let versions = Plan.schemas
        let names = versions.map { $0.versionIdentifier.description }
        guard Set(names).count == names.count, !names.isEmpty else {
            throw MigrationError.invalidStep(
                migration: "\(Plan.self)",
                reason: "versions need distinct names (\(names.joined(separator: ", ")))")
        }
        var stages: [String: MigrationStage] = [:]
        for stage in Plan.stages {
            let (fromName, toName) = (
                stage.from.versionIdentifier.description, stage.to.versionIdentifier.description
            )
            guard let from = names.firstIndex(of: fromName), from + 1 < names.count,
                names[from + 1] == toName,
                stages[toName] == nil
            else {
                throw MigrationError.invalidStep(
                    migration: "\(Plan.self)",
                    reason:
                        "the stage from \(fromName) to \(toName) does not join consecutive versions (or repeats one)"
                )
            }
            stages[toName] = stage
        }
        var previous: [String] = []
        for version in versions {
            let schemas = try Self.collectionSchemas(of: version.models)
            let stage = stages[version.versionIdentifier.description]
            var steps: [MigrationStep] = []
            if let stage, let willMigrate = stage.willMigrate {
                let models = stage.from.models
                steps.append(
                    .custom { migration in
                        try willMigrate(ModelContext(migration: migration, models: models))
                    })
            }
            steps += stage?.steps ?? []
            for (name, schema) in schemas {
                // Renames the stage names, then those the models declare (`originalName`).
                let options = version.models.first { $0.collectionName == name }?.declaredOptions
                let declared = options?.originalNames ?? [:]
                let renamed = (stage?.renamed[name] ?? [:]).merging(declared) { stated, _ in stated
                }
                let fills = Dictionary(
                    (options?.initialValues ?? [:]).map { (options?.columns[$0] ?? $0, $1) },
                    uniquingKeysWith: { first, _ in first })
                steps.append(
                    MigrationStep(
                        collection: name,
                        kind: .lightweight(schema, renamed: renamed, fills: fills)))
            }
            let kept = Set(schemas.map(\.name))
            // Children before parents, so no dropped collection is still referenced.
            for name in previous.reversed() where !kept.contains(name) {
                steps.append(.dropCollection(name))
            }
            if let stage, let didMigrate = stage.didMigrate {
                let models = version.models
                steps.append(
                    .custom { migration in
                        try didMigrate(ModelContext(migration: migration, models: models))
                    })
            }
            registerMigration(version.versionIdentifier.description, steps: steps)
            previous = schemas.map(\.name)
        }
    }

    /// Each model's collection name and document schema, referenced collections before those
    /// that reference them.
    static func collectionSchemas(of models: [any PersistentModel.Type]) throws -> [(
        name: String, schema: DocumentSchema
    )] {
        func schema<M: PersistentModel>(_ type: M.Type) throws -> (
            name: String, schema: DocumentSchema
        ) {
            (M.collectionName, try ModelSchema<M>.shared().documentSchema)
        }
        var pending = try models.map { try schema($0) }
        let names = Set(pending.map(\.name))
        var ordered: [(name: String, schema: DocumentSchema)] = []
        while !pending.isEmpty {
            let placed = Set(ordered.map(\.name))
            let ready =
                pending.firstIndex { entry in
                    entry.schema.referenceFields.allSatisfy { field in
                        let target = field.reference!.collection
                        return target == entry.name || placed.contains(target)
                            || !names.contains(target)
                    }
                } ?? 0  // a cycle: keep the declared order and let the references report it
            ordered.append(pending.remove(at: ready))
        }
        return ordered
    }
}
