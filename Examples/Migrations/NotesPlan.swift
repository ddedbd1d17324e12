import Foundation
import Trove

// The same app with models: each version's types in a namespace of their own, and a plan.
enum ModelsV1: VersionedSchema {
    static let versionIdentifier = "models 1"
    static let models: [any PersistentModel.Type] = [Task.self]

    struct Task: Model {
        var id: Int64
        var title: String
        var done: Bool
    }
}

enum ModelsV2: VersionedSchema {
    static let versionIdentifier = "models 2"
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
                didMigrate: { context in
                    let tasks = try context.models(ModelsV2.Task.self)
                    for var task in try tasks.fetch() where !task.done {
                        task.estimate = 1
                        try tasks.save(task)
                    }
                }),
    ]
}
