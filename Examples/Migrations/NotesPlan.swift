import Foundation
import Trove

// The same app with models: each version's types in a namespace of their own, and a plan.
enum ModelsV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Task.self]

    struct Task: Model {
        var id: Int64
        var title: String
        var done: Bool
    }
}

enum ModelsV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static let models: [any PersistentModel.Type] = [Task.self]

    struct Task: Model {
        var id: Int64
        var name: String
        var done: Bool
        var estimate: Int?
        static var modelOptions: ModelOptions { ModelOptions().indexed(\Task.done) }
    }
}

enum TasksPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [ModelsV1.self, ModelsV2.self]
    static let stages: [MigrationStage] = [
        .custom(fromVersion: ModelsV1.self, toVersion: ModelsV2.self, renamed: ["Task": ["title": "name"]],
                willMigrate: nil, didMigrate: { context in
                    // Value models: through the migration's own handle, in the same transaction.
                    guard let tasks = try context.migrationContext?.models(ModelsV2.Task.self) else { return }
                    for var task in try tasks.fetch() where !task.done {
                        task.estimate = 1
                        try tasks.save(task)
                    }
                }),
    ]
}
