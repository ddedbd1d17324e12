import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// `Fixtures/migrations-v1.trove`: a file written at version 1 of a notes app's timeline and
/// checked in, migrated here by version 2 of the same app.
///
/// Written by ``writeFixture()`` below (run it with `TROVE_WRITE_MIGRATION_FIXTURE=1 swift test
/// --filter MigrationFixtureTests`): version 1's migrator on a new file, twelve notes, then
/// `VACUUM INTO` the fixture (one file, no WAL).
@Suite("Migration fixture", .serialized)
struct MigrationFixtureTests {
    static let fixture = TestPaths.fixtures.appendingPathComponent("migrations-v1.trove")
    static let v1Embedder = HashingEmbedder(dimension: 16, modelID: "test/notes-v1")
    static let v2Embedder = HashingEmbedder(
        dimension: 24, modelID: "test/notes-v2", checksum: "2222")

    /// Version 1 of the app: notes with a text date and a 16-d embedding of the body.
    static var version1: Migrator {
        var migrator = Migrator()
        migrator.registerMigration(
            "1 notes",
            steps: [
                .createCollection(
                    "notes",
                    schema: DocumentSchema(
                        fields: [
                            .text("title"), .text("body"), .text("created", indexed: true),
                            .json("tags", optional: true),
                            .vector("embedding", dimension: 16, optional: true),
                        ],
                        fullText: FullTextDefinition(["title": 2, "body": 1]),
                        embeddingSources: [
                            "embedding": EmbeddingSource(
                                textField: "body", manifest: v1Embedder.manifest)
                        ]))
            ])
        return migrator
    }

    /// Version 2: body renamed to text, created becomes a date, a priority with an index, the
    /// new embedding model, and a custom step deriving priorities from tags.
    static func version2(progress: @escaping @Sendable (ReembeddingProgress) -> Void = { _ in })
        -> Migrator
    {
        var migrator = version1
        migrator.registerMigration(
            "2 dates and priorities",
            steps: [
                .renameField("body", to: "text", in: "notes"),
                .changeField("created", in: "notes", to: .date("created", indexed: true)) { old in
                    guard
                        let date = old.stringValue.flatMap({ ISO8601DateFormatter().date(from: $0) }
                        )
                    else {
                        throw TroveError.invalidValue(
                            field: "created", reason: "not an ISO 8601 date")
                    }
                    return .date(date)
                },
                .addField(.integer("priority", default: 0), to: "notes"),
                .addIndex(IndexDefinition([Field("priority"), Field("created")]), to: "notes"),
                .custom { context in
                    try context.execute(
                        "UPDATE notes SET priority = 1 WHERE EXISTS (SELECT 1 FROM json_each(notes.tags) WHERE value = 'work')"
                    )
                },
            ])
        migrator.registerMigration(
            "3 new model",
            steps: [
                .changeEmbeddingModel(
                    of: "embedding", in: "notes", from: "text", to: v2Embedder, batchSize: 5,
                    progress: progress)
            ])
        return migrator
    }

    static let titles = [
        "Dentist", "Groceries", "Standup", "Tax forms", "Birthday", "Review", "Plumber", "Flights",
        "Library", "Quarterly plan", "Gym", "Oil change",
    ]

    @Test(
        "write the version-1 fixture",
        .enabled(if: ProcessInfo.processInfo.environment["TROVE_WRITE_MIGRATION_FIXTURE"] == "1"))
    func writeFixture() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("v1.trove"))
        try await Self.version1.migrate(db)
        let notes = try await db.documents(named: "notes")
        for (offset, title) in Self.titles.enumerated() {
            let body = "\(title.lowercased()) note number \(offset + 1)"
            try await notes.insert(
                Document(
                    id: .int(Int64(offset + 1)),
                    [
                        "title": .string(title), "body": .string(body),
                        "created": .string("2026-0\(offset % 9 + 1)-1\(offset % 10)T09:00:00Z"),
                        "tags": offset % 3 == 0
                            ? ["work"] : offset % 3 == 1 ? ["home", "errand"] : .null,
                        "embedding": .vector(Self.v1Embedder.vector(body)),
                    ]))
        }
        try? FileManager.default.removeItem(at: Self.fixture)
        try await db.execute(script: "VACUUM INTO '\(Self.fixture.path)'")
    }

    @Test("a file written at version 1 is migrated by version 2's code")
    func migratesFixture() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        try FileManager.default.copyItem(atPath: Self.fixture.path, toPath: path)
        let db = try Database(path: path)
        #expect(try await Self.version1.pendingMigrations(in: db) == [])
        let before = try await db.documents(named: "notes").fetch(
            Query().sorted(by: .ascending("id")))
        #expect(before.count == 12)

        let progress = ReembeddingMigrationTests.Reports()
        let migrator = Self.version2 { progress.append($0) }
        #expect(
            try await migrator.pendingMigrations(in: db) == [
                "2 dates and priorities", "3 new model",
            ])
        try await migrator.migrate(db)
        #expect(
            try await migrator.appliedMigrations(in: db).map(\.name) == [
                "1 notes", "2 dates and priorities", "3 new model",
            ])
        #expect(progress.all.map(\.completed) == [0, 5, 10, 12])

        let notes = try await db.documents(named: "notes")
        let after = try await notes.fetch(Query().sorted(by: .ascending("id")))
        #expect(after.count == 12)
        for (old, new) in zip(before, after) {
            #expect(new["title"] == old["title"])
            #expect(new["text"] == old["body"])
            #expect(new["body"] == nil)
            #expect(
                new["created"]
                    == .date(ISO8601DateFormatter().date(from: old["created"]!.stringValue!)!))
            #expect(new["priority"] == (old["tags"]?.arrayValue?.contains("work") == true ? 1 : 0))
            #expect(new["embedding"] == .vector(Self.v2Embedder.vector(old["body"]!.stringValue!)))
        }
        // Queries over the new shape use the new index, text search the renamed field.
        let urgent = try await notes.fetch(
            Query(Field("priority") == 1).sorted(by: .ascending("created")))
        #expect(
            urgent.map(\.id)
                == after.filter { $0["priority"] == 1 }.sorted {
                    $0["created"]!.dateValue! < $1["created"]!.dateValue!
                }
                .map(\.id))
        #expect(try await notes.explain(Query(Field("priority") == 1)).joined().contains("notes_i"))
        #expect(
            try await notes.search(Query().matching(.typed("plumber"), in: ["text"])).map(
                \.record.id) == [7])
        let nearest = try await notes.search(
            Query().nearest(to: Self.v2Embedder.vector("flights note number 8"), in: "embedding")
                .limit(1))
        #expect(nearest.map(\.record.id) == [8])
        #expect(try await notes.verify() == [])
        #expect(try await db.query("PRAGMA integrity_check").first?.string(at: 0) == "ok")
        // Version 1's code now refuses the file.
        await #expect(
            throws: MigrationError.fileIsNewer(unknownMigrations: [
                "2 dates and priorities", "3 new model",
            ])
        ) {
            try await Self.version1.migrate(db)
        }
    }
}
