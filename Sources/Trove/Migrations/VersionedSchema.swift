import Foundation

/// One version of an app's models, as SwiftData's `VersionedSchema`: a name for the timeline and
/// the model types of that version (old versions' types kept in their own namespace).
///
/// ```swift
/// enum NotesV1: VersionedSchema {
///     static let versionIdentifier = "1"
///     static let models: [any PersistentModel.Type] = [Note.self]
///     struct Note: Model { var id: Int64; var title: String; var body: String }
/// }
/// enum NotesV2: VersionedSchema {
///     static let versionIdentifier = "2"
///     static let models: [any PersistentModel.Type] = [Note.self]
///     struct Note: Model { var id: Int64; var title: String; var text: String; var priority: Int }
/// }
/// ```
public protocol VersionedSchema: Sendable {
    /// The version's name, recorded in the file's timeline; unique within a plan.
    static var versionIdentifier: String { get }
    /// The model types of this version (value or reference models). Each is stored in its ``PersistentModel/collectionName``, so a
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
///         .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, renamed: ["Note": ["body": "text"]],
///                 didMigrate: { context in
///                     let notes = try context.models(NotesV2.Note.self)
///                     for note in try notes.reader.fetch() where note.title.hasPrefix("!") {
///                         var urgent = note
///                         urgent.priority = 1
///                         try notes.save(urgent)
///                     }
///                 }),
///     ]
/// }
/// try await Migrator(plan: NotesPlan.self).migrate(database)
/// ```
public protocol SchemaMigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages between consecutive versions that need more than a lightweight migration.
    static var stages: [MigrationStage] { get }
}

/// How one version of a plan becomes the next.
public struct MigrationStage: Sendable {
    let from: String
    let to: String
    /// Per collection: old field name to new.
    let renamed: [String: [String: String]]
    let willMigrate: (@Sendable (MigrationContext) throws -> Void)?
    /// Declarative steps run after `willMigrate`, before the lightweight part: changes the two
    /// schemas cannot say, such as a type change with its transform.
    let steps: [MigrationStep]
    let didMigrate: (@Sendable (MigrationContext) throws -> Void)?

    /// Derived from the two versions' model schemas (``MigrationStep/lightweight(_:to:renamed:)``
    /// for each model). Renames cannot be told from a removal and an addition: name them, per
    /// collection, in `renamed`.
    public static func lightweight(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type, renamed: [String: [String: String]] = [:]
    ) -> MigrationStage {
        MigrationStage(from: fromVersion.versionIdentifier, to: toVersion.versionIdentifier, renamed: renamed,
                       willMigrate: nil, steps: [], didMigrate: nil)
    }

    /// The lightweight migration with custom work around it, in the same transaction:
    /// `willMigrate` sees the collections in the old version's shape (use its types:
    /// `context.models(NotesV1.Note.self)`), then `steps` run (a type change with its transform,
    /// say), then the lightweight part, then `didMigrate` sees the new version's shape.
    ///
    /// ```swift
    /// .custom(fromVersion: V1.self, toVersion: V2.self, steps: [
    ///     .changeField("due", in: "Note", to: .date("due", optional: true)) { old in
    ///         old.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }.map(Value.date) ?? .null
    ///     },
    /// ])
    /// ```
    public static func custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type, renamed: [String: [String: String]] = [:],
        willMigrate: (@Sendable (MigrationContext) throws -> Void)? = nil, steps: [MigrationStep] = [],
        didMigrate: (@Sendable (MigrationContext) throws -> Void)? = nil
    ) -> MigrationStage {
        MigrationStage(from: fromVersion.versionIdentifier, to: toVersion.versionIdentifier, renamed: renamed,
                       willMigrate: willMigrate, steps: steps, didMigrate: didMigrate)
    }
}

extension Migrator {
    /// The timeline of a plan: one migration per version, named by its ``VersionedSchema/versionIdentifier``.
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
        let versions = Plan.schemas
        let names = versions.map { $0.versionIdentifier }
        guard Set(names).count == names.count, !names.isEmpty else {
            throw MigrationError.invalidStep(migration: "\(Plan.self)", reason: "versions need distinct names (\(names.joined(separator: ", ")))")
        }
        var stages: [String: MigrationStage] = [:]
        for stage in Plan.stages {
            guard let from = names.firstIndex(of: stage.from), from + 1 < names.count, names[from + 1] == stage.to,
                stages[stage.to] == nil
            else {
                throw MigrationError.invalidStep(migration: "\(Plan.self)", reason: "the stage from \(stage.from) to \(stage.to) does not join consecutive versions (or repeats one)")
            }
            stages[stage.to] = stage
        }
        var previous: [String] = []
        for version in versions {
            let schemas = try Self.collectionSchemas(of: version)
            let stage = stages[version.versionIdentifier]
            var steps: [MigrationStep] = []
            if let willMigrate = stage?.willMigrate { steps.append(.custom(willMigrate)) }
            steps += stage?.steps ?? []
            for (name, schema) in schemas {
                // Renames the stage names, then those the models declare (`originalName`).
                let declared = version.models.first { $0.collectionName == name }?.declaredOptions.originalNames ?? [:]
                let renamed = (stage?.renamed[name] ?? [:]).merging(declared) { stated, _ in stated }
                steps.append(.lightweight(name, to: schema, renamed: renamed))
            }
            let kept = Set(schemas.map(\.name))
            // Children before parents, so no dropped collection is still referenced.
            for name in previous.reversed() where !kept.contains(name) { steps.append(.dropCollection(name)) }
            if let didMigrate = stage?.didMigrate { steps.append(.custom(didMigrate)) }
            registerMigration(version.versionIdentifier, steps: steps)
            previous = schemas.map(\.name)
        }
    }

    /// Each model's collection name and document schema, referenced collections before those
    /// that reference them.
    static func collectionSchemas(of version: any VersionedSchema.Type) throws -> [(name: String, schema: DocumentSchema)] {
        func schema<M: PersistentModel>(_ type: M.Type) throws -> (name: String, schema: DocumentSchema) {
            (M.collectionName, try ModelSchema<M>.shared().documentSchema)
        }
        var pending = try version.models.map { try schema($0) }
        let names = Set(pending.map(\.name))
        var ordered: [(name: String, schema: DocumentSchema)] = []
        while !pending.isEmpty {
            let placed = Set(ordered.map(\.name))
            let ready = pending.firstIndex { entry in
                entry.schema.referenceFields.allSatisfy { field in
                    let target = field.reference!.collection
                    return target == entry.name || placed.contains(target) || !names.contains(target)
                }
            } ?? 0  // a cycle: keep the declared order and let the references report it
            ordered.append(pending.remove(at: ready))
        }
        return ordered
    }
}
