import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

enum NotesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Note.self, Draft.self]

    struct Note: Model {
        var id: Int64
        var title: String
        var body: String
        var due: String?
        static var modelOptions: ModelOptions {
            ModelOptions().fullText(\Note.title, weight: 2).fullText(\Note.body)
        }
    }

    struct Draft: Model {
        var id: Int64
        var text: String
    }
}

enum NotesV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static let models: [any PersistentModel.Type] = [Note.self, Tag.self]

    struct Note: Model {
        var id: Int64
        var title: String
        var text: String
        var due: Date?
        var priority: Int
        static var modelOptions: ModelOptions {
            ModelOptions().fullText(\Note.title, weight: 2).fullText(\Note.text).indexed(
                \Note.priority)
        }
    }

    struct Tag: Model {
        var id: String
        var label: String
    }
}

enum NotesPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    static let stages: [MigrationStage] = [
        .custom(
            fromVersion: NotesV1.self, toVersion: NotesV2.self, renamed: ["Note": ["body": "text"]],
            willMigrate: { context in
                // The old version's types: empty notes go before the new shape needs a priority.
                // Value models: through the migration's own handle.
                let notes = try #require(context.migrationContext).models(NotesV1.Note.self)
                _ = try notes.delete(where: #Predicate { $0.title == "" })
            },
            steps: [
                .changeField("due", in: "Note", to: .date("due", optional: true)) { old in
                    old.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }.map(
                        Value.date) ?? .null
                },
                .addField(.integer("priority", default: 0), to: "Note"),
            ],
            didMigrate: { context in
                let migration = try #require(context.migrationContext)
                let notes = try migration.models(NotesV2.Note.self)
                for var note in try notes.fetch() where note.due != nil {
                    note.priority = 1
                    try notes.save(note)
                }
                try migration.models(NotesV2.Tag.self).insert(
                    NotesV2.Tag(id: "home", label: "Home"))
            })
    ]
}

/// VersionedSchema-style plans over models, built on the migrator.
@Suite("Schema migration plans", .serialized)
struct SchemaMigrationPlanTests {
    @Test(
        "a plan migrates version-1 models to version 2: rename, type change, new and dropped models, custom stages"
    )
    func planMigrates() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("notes.trove"))
        let migrator = try Migrator(plan: NotesPlan.self)
        #expect(migrator.migrationNames == ["1.0.0", "2.0.0"])
        try await migrator.migrate(db, upTo: "1.0.0")
        let v1 = try await db.models(NotesV1.Note.self)
        try await v1.insert([
            NotesV1.Note(
                id: 1, title: "Dentist", body: "Tuesday at nine", due: "2026-12-08T09:00:00Z"),
            NotesV1.Note(id: 2, title: "Groceries", body: "oat milk", due: nil),
            NotesV1.Note(id: 3, title: "", body: "nothing", due: nil),
        ])
        try await db.models(NotesV1.Draft.self).insert(NotesV1.Draft(id: 1, text: "draft"))

        try await migrator.migrate(db)
        let notes = try await db.models(NotesV2.Note.self)
        let all = try await notes.fetch(FetchDescriptor(sortBy: [SortDescriptor(\NotesV2.Note.id)]))
        #expect(all.map(\.id) == [1, 2])
        #expect(all[0].text == "Tuesday at nine" && all[0].priority == 1)
        #expect(all[0].due == ISO8601DateFormatter().date(from: "2026-12-08T09:00:00Z"))
        #expect(all[1].due == nil && all[1].priority == 0)
        #expect(try await db.models(NotesV2.Tag.self).fetch(id: "home")?.label == "Home")
        #expect(try await db.collectionNames() == ["Note", "Tag"])
        let urgent = try await notes.fetch(
            FetchDescriptor(predicate: #Predicate { $0.priority == 1 }))
        #expect(urgent.map(\.id) == [1])
        #expect(
            try await db.documents(named: "Note").search(
                Query().matching(.typed("milk"), in: ["text"])
            ).map(
                \.record.id) == [2])
        #expect(try await db.documents(named: "Note").verify() == [])
        // The version-1 types no longer fit; a version-1 build refuses the file.
        await #expect(throws: TroveError.self) { try await db.models(NotesV1.Note.self) }
        let oldBuild = try Migrator(plan: OnlyV1.self)
        await #expect(throws: MigrationError.fileIsNewer(unknownMigrations: ["2.0.0"])) {
            try await oldBuild.migrate(db)
        }
    }

    enum OnlyV1: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [NotesV1.self]
        static let stages: [MigrationStage] = []
    }

    @Test("a file made by database.models before any plan is adopted by the plan's first version")
    func adoptsExisting() async throws {
        let db = try Database()
        try await db.models(NotesV1.Note.self).insert(
            NotesV1.Note(id: 1, title: "a", body: "b", due: nil))
        try await Migrator(plan: OnlyV1.self).migrate(db)
        #expect(try await db.models(NotesV1.Note.self).count() == 1)
        #expect(try await db.collectionNames() == ["Draft", "Note"])
    }

    enum BadPlan: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
        static let stages: [MigrationStage] = [
            .lightweight(fromVersion: NotesV2.self, toVersion: NotesV1.self)
        ]
    }

    @Test("a plan whose stages do not join consecutive versions is refused")
    func badPlan() throws {
        #expect(
            throws: MigrationError.invalidStep(
                migration: "BadPlan",
                reason:
                    "the stage from 2.0.0 to 1.0.0 does not join consecutive versions (or repeats one)"
            )
        ) {
            try Migrator(plan: BadPlan.self)
        }
    }

    @Test("without the custom stage, the type change is refused and nothing changes")
    func lightweightRefusesTypeChange() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("notes.trove"))
        try await Migrator(plan: OnlyV1.self).migrate(db)
        try await db.models(NotesV1.Note.self).insert(
            NotesV1.Note(id: 1, title: "a", body: "b", due: "soon"))
        let before = try await FileSnapshot.of(db)
        await #expect(throws: MigrationError.self) {
            try await Migrator(plan: LightweightOnly.self).migrate(db)
        }
        #expect(try await FileSnapshot.of(db) == before)
    }

    enum LightweightOnly: SchemaMigrationPlan {
        static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
        static let stages: [MigrationStage] = [
            .lightweight(
                fromVersion: NotesV1.self, toVersion: NotesV2.self,
                renamed: ["Note": ["body": "text"]])
        ]
    }
}
