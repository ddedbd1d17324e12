import Foundation
import Observation
import Trove

/// A reference model for the context suites: text, numbers, two booleans (told apart by the
/// probe's rounds), an optional, an enum and a nested value.
@Model final class Article {
    enum Status: String, Codable, CaseIterable { case draft, published }
    struct Stats: Codable, Hashable {
        var views: Int
        var likes: Int
    }

    var id: Int64
    var title: String
    var body: String
    var rating: Int
    var pinned: Bool
    var archived: Bool
    var subtitle: String?
    var status: Status
    var stats: Stats

    init(
        id: Int64, title: String, body: String = "", rating: Int = 0, pinned: Bool = false,
        archived: Bool = false,
        subtitle: String? = nil, status: Status = .draft, stats: Stats = Stats(views: 0, likes: 0)
    ) {
        self.id = id
        self.title = title
        self.body = body
        self.rating = rating
        self.pinned = pinned
        self.archived = archived
        self.subtitle = subtitle
        self.status = status
        self.stats = stats
    }

    static var modelOptions: ModelOptions { ModelOptions().indexed(\Article.rating) }
}

/// A value model next to the reference model in one schema.
struct Tag: Model, Equatable {
    var id: String
    var label: String
}

enum ArticlesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Article.self, Tag.self]
}

/// A reference model whose UUID id is left to Trove.
@Model final class Scribble {
    var id: UUID
    var text: String
    init(id: UUID = .unassigned, text: String) {
        self.id = id
        self.text = text
    }
}

/// A reference model whose String id is left to Trove.
@Model final class Badge {
    var id: String
    var name: String
    init(id: String = .unassigned, name: String) {
        self.id = id
        self.name = name
    }
}

enum ScribblesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Scribble.self, Badge.self, Article.self]
}

/// A container of one version's models in the file at `path` (the SwiftData spelling, once).
func openContainer(
    _ version: any VersionedSchema.Type, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
    at path: String
) throws -> ModelContainer {
    try ModelContainer(
        for: Schema(versionedSchema: version), migrationPlan: migrationPlan,
        configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
}

/// A model actor conformed by hand, as `@ModelActor` will generate it: it runs
/// closures on its own context.
actor Worker: ModelActor {
    let modelContainer: ModelContainer
    let modelContext: ModelContext

    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        modelContext = ModelContext(modelContainer)
    }

    /// Runs `body` on the actor with its context.
    func run<T: Sendable>(_ body: @Sendable (ModelContext) throws -> T) throws -> T {
        try body(modelContext)
    }
}
