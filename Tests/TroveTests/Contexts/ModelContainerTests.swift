import Foundation
import Observation
import Testing
import Trove
import TroveTestSupport

@Suite("Model container")
struct ModelContainerTests {
    enum NotesV1: VersionedSchema {
        static let versionIdentifier = "1"
        static let models: [any PersistentModel.Type] = [Note.self]
        struct Note: Model { var id: Int64; var text: String }
    }
    enum NotesV2: VersionedSchema {
        static let versionIdentifier = "2"
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

    @Test("runs the migration plan, then a context reads the migrated rows as reference models")
    @MainActor
    func migrates() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        do {
            let database = try Database(path: path)
            try await Migrator(plan: NotesPlan.self).migrate(database, upTo: "1")
            try await database.models(NotesV1.Note.self).insert([.init(id: 1, text: "one"), .init(id: 2, text: "two")])
        }
        let container = try await ModelContainer(NotesV2.self, migration: NotesPlan.self, at: path)
        let notes = try await container.mainContext.fetchAll(NotesV2.Note.self)
        #expect(notes.map(\.text) == ["one", "two"])
        #expect(notes.allSatisfy { $0.starred == nil })
    }

    @Test("refuses a plan that does not end at the schema")
    func refuses() async throws {
        let database = try Database()
        await #expect(throws: TroveError.invalidConfiguration("the migration plan ends at 2, not at 1")) {
            _ = try await ModelContainer(NotesV1.self, migration: NotesPlan.self, database: database)
        }
    }

    @Test("opens value and reference models of one schema; value models keep working on the database")
    func mixedSchema() async throws {
        let container = try await ModelContainer(ArticlesV1.self, database: try Database())
        let tags = try await container.database.models(Tag.self)
        try await tags.insert(Tag(id: "swift", label: "Swift"))
        #expect(try await tags.fetch(id: "swift")?.label == "Swift")
        try await MainActor.run {
            try container.mainContext.insert(Article(id: 1, title: "Hello"))
        }
        try await container.backgroundContext().perform { context in
            try context.insert(Article(id: 2, title: "World"))
            try await context.save()
        }
        #expect(try await container.database.query("SELECT title FROM \"Article\"").first?.string("title") == "World")
        #expect(await MainActor.run { container.mainContext.hasChanges })
    }
}
