import Foundation
import Observation
import Testing
import Trove
import TroveTestSupport

@Suite("Model container")
struct ModelContainerTests {
    enum NotesV1: VersionedSchema {
        static let versionIdentifier = Schema.Version(1, 0, 0)
        static let models: [any PersistentModel.Type] = [Note.self]
        struct Note: Model {
            var id: Int64
            var text: String
        }
    }
    enum NotesV2: VersionedSchema {
        static let versionIdentifier = Schema.Version(2, 0, 0)
        static let models: [any PersistentModel.Type] = [Note.self]
        @Model final class Note {
            var id: Int64
            var text: String
            var starred: Bool?
            init(id: Int64, text: String, starred: Bool?) {
                self.id = id
                self.text = text
                self.starred = starred
            }
        }
    }
    enum NotesPlan: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
        static let stages: [MigrationStage] = []
    }

    enum CardsV1: VersionedSchema {
        static let versionIdentifier = Schema.Version(1, 0, 0)
        static let models: [any PersistentModel.Type] = [Card.self]
        @Model final class Card {
            var id: Int64
            var front: String
            init(id: Int64, front: String) {
                self.id = id
                self.front = front
            }
        }
    }
    enum CardsV2: VersionedSchema {
        static let versionIdentifier = Schema.Version(1, 1, 0)
        static let models: [any PersistentModel.Type] = [Card.self]
        @Model final class Card {
            var id: Int64
            var front: String
            var length: Int?
            init(id: Int64, front: String, length: Int?) {
                self.id = id
                self.front = front
                self.length = length
            }
        }
    }
    /// SwiftData's custom stage: each closure gets a ModelContext of its version's models.
    enum CardsPlan: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [CardsV1.self, CardsV2.self]
        static let stages: [MigrationStage] = [
            .custom(
                fromVersion: CardsV1.self, toVersion: CardsV2.self,
                willMigrate: { context in
                    // Old shape: blank cards go before the new version sees them.
                    for card in try context.fetch(FetchDescriptor<CardsV1.Card>())
                    where card.front.isEmpty {
                        context.delete(card)
                    }
                    try context.save()
                },
                didMigrate: { context in
                    for card in try context.fetch(FetchDescriptor<CardsV2.Card>()) {
                        card.length = card.front.count
                    }
                    context.insert(
                        CardsV2.Card(id: 100, front: "added by the migration", length: 22))
                    try context.save()
                })
        ]
    }

    @Test(
        "a custom stage fetches and saves class models through its ModelContext, inside the migration"
    )
    func customStageWithContext() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("cards.trove")
        do {
            let old = try openContainer(CardsV1.self, migrationPlan: OnlyCardsV1.self, at: path)
            let context = ModelContext(old)
            for (i, front) in ["hola", "", "merci", ""].enumerated() {
                context.insert(CardsV1.Card(id: Int64(i + 1), front: front))
            }
            try context.save()
        }
        let container = try openContainer(CardsV2.self, migrationPlan: CardsPlan.self, at: path)
        let cards = try ModelContext(container).fetch(
            FetchDescriptor<CardsV2.Card>(sortBy: [SortDescriptor(\.id)]))
        #expect(cards.map(\.id) == [1, 3, 100])
        #expect(cards.map(\.length) == [4, 5, 22])
    }

    @Test("a failing custom stage rolls the whole migration back, its context's saves too")
    func failingStageRollsBack() throws {
        enum Failing: SchemaMigrationPlan {
            struct Stop: Error {}
            static let schemas: [any VersionedSchema.Type] = [CardsV1.self, CardsV2.self]
            static let stages: [MigrationStage] = [
                .custom(
                    fromVersion: CardsV1.self, toVersion: CardsV2.self, willMigrate: nil,
                    didMigrate: { context in
                        for card in try context.fetch(FetchDescriptor<CardsV2.Card>()) {
                            card.length = 1
                        }
                        try context.save()
                        throw Stop()
                    })
            ]
        }
        let dir = try TemporaryDirectory()
        let path = dir.path("cards.trove")
        do {
            let context = ModelContext(
                try openContainer(CardsV1.self, migrationPlan: OnlyCardsV1.self, at: path))
            context.insert(CardsV1.Card(id: 1, front: "hola"))
            try context.save()
        }
        #expect(throws: Failing.Stop.self) {
            _ = try openContainer(CardsV2.self, migrationPlan: Failing.self, at: path)
        }
        // Still version 1, with its row as it was.
        let again = ModelContext(
            try openContainer(CardsV1.self, migrationPlan: OnlyCardsV1.self, at: path))
        #expect(try again.fetch(FetchDescriptor<CardsV1.Card>()).map(\.front) == ["hola"])
    }

    enum OnlyCardsV1: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [CardsV1.self]
        static let stages: [MigrationStage] = []
    }

    @Test("runs the migration plan, then a context reads the migrated rows as reference models")
    @MainActor
    func migrates() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        do {
            let database = try Database(path: path)
            try await Migrator(plan: NotesPlan.self).migrate(database, upTo: "1.0.0")
            try await database.models(NotesV1.Note.self).insert([
                .init(id: 1, text: "one"), .init(id: 2, text: "two"),
            ])
        }
        let container = try openContainer(NotesV2.self, migrationPlan: NotesPlan.self, at: path)
        let notes = try container.mainContext.fetch(FetchDescriptor<NotesV2.Note>())
        #expect(notes.map(\.text) == ["one", "two"])
        #expect(notes.allSatisfy { $0.starred == nil })
    }

    @Test("refuses a plan that does not end at the schema, and two configurations")
    func refuses() throws {
        let dir = try TemporaryDirectory()
        #expect(
            throws: TroveError.invalidConfiguration(
                "the migration plan ends at 2.0.0, not at 1.0.0")
        ) {
            _ = try openContainer(
                NotesV1.self, migrationPlan: NotesPlan.self, at: dir.path("a.trove"))
        }
        #expect(throws: TroveError.self) {
            _ = try ModelContainer(
                for: Article.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true),
                ModelConfiguration(isStoredInMemoryOnly: true))
        }
    }

    @Test("opens value and class models of one schema; value models keep working on the database")
    func mixedSchema() async throws {
        let container = try ModelContainer(
            for: Article.self, Tag.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let tags = try await container.database.models(Tag.self)
        try await tags.insert(Tag(id: "swift", label: "Swift"))
        #expect(try await tags.fetch(id: "swift")?.label == "Swift")
        await MainActor.run {
            container.mainContext.autosaveEnabled = false
            container.mainContext.insert(Article(id: 1, title: "Hello"))
        }
        try await Worker(modelContainer: container).run { context in
            context.insert(Article(id: 2, title: "World"))
            try context.save()
        }
        #expect(
            try await container.database.query("SELECT title FROM \"Article\"").first?.string(
                "title") == "World")
        #expect(await MainActor.run { container.mainContext.hasChanges })
    }

    @Test(
        "an in-memory configuration keeps its models in a temporary file, removed when the container goes"
    )
    func inMemory() throws {
        let configuration = ModelConfiguration(isStoredInMemoryOnly: true)
        var path: String?
        do {
            let container = try ModelContainer(
                for: Schema([Article.self]), configurations: configuration)
            path = container.database.path
            let context = ModelContext(container)
            context.insert(Article(id: 1, title: "kept while the container lives"))
            try context.save()
            // A second context reaches the same data through its own connection.
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Article>()) == 1)
            #expect(FileManager.default.fileExists(atPath: try #require(path)))
        }
        #expect(!FileManager.default.fileExists(atPath: try #require(path)))
        // Another in-memory container starts empty.
        let fresh = try ModelContainer(
            for: Article.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        #expect(try ModelContext(fresh).fetchCount(FetchDescriptor<Article>()) == 0)
    }

    @Test(
        "the schema and configuration are SwiftData's: Schema(versionedSchema:), ModelConfiguration(schema:url:)"
    )
    @MainActor
    func schemaAndConfiguration() throws {
        let dir = try TemporaryDirectory()
        let url = URL(fileURLWithPath: dir.path("zoo.store"))
        let schema = Schema(versionedSchema: ArticlesV1.self)
        #expect(schema.version == Schema.Version(1, 0, 0))
        #expect(
            Schema.Version(1, 2, 0) > Schema.Version(1, 1, 9)
                && Schema.Version(2, 0, 0).description == "2.0.0")
        let container = try ModelContainer(
            for: schema, configurations: ModelConfiguration(schema: schema, url: url))
        #expect(container.configurations.first?.url == url && container.schema.models.count == 2)
        #expect(container.database.path == url.path)
        // The array spelling, and the main context: one per container, the same each time.
        let again = try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)])
        #expect(try ModelContext(again).fetchCount(FetchDescriptor<Article>()) == 0)
        #expect(again.mainContext === again.mainContext && again.mainContext.container === again)
    }

    @Test(
        "a file whose timeline recorded string versions (\"1\") opens and migrates with Schema.Version identifiers"
    )
    @MainActor
    func stringVersionTimeline() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        do {
            // As an earlier Trove left it: version 1 applied under the name "1".
            let database = try Database(path: path)
            var migrator = Migrator()
            migrator.registerMigration(
                "1",
                steps: [
                    .createCollection("Note", schema: DocumentSchema(fields: [.text("text")]))
                ])
            try await migrator.migrate(database)
            try await database.models(NotesV1.Note.self).insert([.init(id: 1, text: "one")])
        }
        let container = try openContainer(NotesV2.self, migrationPlan: NotesPlan.self, at: path)
        #expect(
            try container.mainContext.fetch(FetchDescriptor<NotesV2.Note>()).map(\.text) == ["one"])
        let names = try await container.database.query(
            "SELECT name FROM trove_migrations ORDER BY seq"
        ).map {
            $0.string("name")!
        }
        #expect(names == ["1.0.0", "2.0.0"])
        // Opened again: nothing left to apply.
        _ = try openContainer(NotesV2.self, migrationPlan: NotesPlan.self, at: path)
    }
}
