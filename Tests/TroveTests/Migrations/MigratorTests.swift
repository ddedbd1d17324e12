import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// The timeline: named, ordered migrations recorded in the file, each one transaction.
@Suite("Migrator timeline")
struct MigratorTests {
    static let notesV1 = DocumentSchema(fields: [.text("title"), .text("body")])

    static func migrator(upTo count: Int = 3) -> Migrator {
        var migrator = Migrator()
        migrator.registerMigration("v1", steps: [.createCollection("notes", schema: notesV1)])
        if count >= 2 {
            migrator.registerMigration(
                "v2", steps: [.addField(.integer("priority", default: 0), to: "notes")])
        }
        if count >= 3 {
            migrator.registerMigration("v3") { context in
                try context.execute(
                    "UPDATE notes SET priority = 5 WHERE title LIKE ?", ["%urgent%"])
            }
        }
        return migrator
    }

    @Test("migrations apply in order, once, each recorded with its time")
    func appliesInOrder() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let start = Date()
        try await Self.migrator(upTo: 1).migrate(db)
        try await db.documents(named: "notes").insert([
            Document(id: 1, ["title": "urgent: call", "body": "x"]),
            Document(id: 2, ["title": "later", "body": "y"]),
        ])
        let migrator = Self.migrator()
        #expect(try await migrator.pendingMigrations(in: db) == ["v2", "v3"])
        try await migrator.migrate(db)
        try await migrator.migrate(db)  // nothing left: no error, nothing repeated
        let applied = try await migrator.appliedMigrations(in: db)
        #expect(applied.map(\.name) == ["v1", "v2", "v3"])
        #expect(
            applied.allSatisfy {
                $0.appliedAt >= start.addingTimeInterval(-1)
                    && $0.appliedAt <= Date().addingTimeInterval(1)
            })
        #expect(try await migrator.pendingMigrations(in: db).isEmpty)
        let notes = try await db.documents(named: "notes")
        #expect(try await notes.fetch(id: 1)?["priority"] == 5)
        #expect(try await notes.fetch(id: 2)?["priority"] == 0)
        let steps = try await db.query("SELECT steps FROM trove_migrations WHERE name = 'v2'")
            .first?.string(at: 0)
        #expect(steps == "add notes.priority")
    }

    @Test("migrate(upTo:) stops at the named migration")
    func upTo() async throws {
        let db = try Database()
        let migrator = Self.migrator()
        try await migrator.migrate(db, upTo: "v2")
        #expect(try await migrator.pendingMigrations(in: db) == ["v3"])
        await #expect(
            throws: MigrationError.invalidStep(
                migration: "v9", reason: "no migration of that name is registered")
        ) {
            try await migrator.migrate(db, upTo: "v9")
        }
    }

    @Test("a file migrated by newer code is refused, and nothing changes")
    func newerFileRefused() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.trove")
        do {
            let db = try Database(path: path)
            try await Self.migrator(upTo: 3).migrate(db)
        }
        let db = try Database(path: path)
        let before = try await FileSnapshot.of(db)
        let older = Self.migrator(upTo: 2)
        await #expect(throws: MigrationError.fileIsNewer(unknownMigrations: ["v3"])) {
            try await older.migrate(db)
        }
        await #expect(throws: MigrationError.fileIsNewer(unknownMigrations: ["v3"])) {
            try await older.pendingMigrations(in: db)
        }
        #expect(try await FileSnapshot.of(db) == before)
        await #expect(throws: MigrationError.fileIsNewer(unknownMigrations: ["v3"])) {
            try await Database.open(path: path, migrating: older)
        }
        let opened = try await Database.open(path: path, migrating: Self.migrator(upTo: 3))
        #expect(try await opened.documents(named: "notes").schema.field("priority") != nil)
    }

    @Test("a migration inserted before applied ones is refused")
    func timelineMismatch() async throws {
        let db = try Database()
        try await Self.migrator(upTo: 2).migrate(db)
        var reordered = Migrator()
        reordered.registerMigration("v1", steps: [.createCollection("notes", schema: Self.notesV1)])
        reordered.registerMigration(
            "v1b", steps: [.addField(.text("tag", optional: true), to: "notes")])
        reordered.registerMigration(
            "v2", steps: [.addField(.integer("priority", default: 0), to: "notes")])
        await #expect(
            throws: MigrationError.timelineMismatch(
                applied: ["v1", "v2"], registered: ["v1", "v1b", "v2"])
        ) {
            try await reordered.migrate(db)
        }
    }

    @Test("a failing migration rolls back completely; the earlier ones stay applied")
    func failingMigrationRollsBack() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        var migrator = Self.migrator(upTo: 2)
        try await migrator.migrate(db)
        try await db.documents(named: "notes").insert(Document(id: 1, ["title": "a", "body": "b"]))
        let before = try await FileSnapshot.of(db)
        struct Boom: Error {}
        migrator.registerMigration(
            "v3",
            steps: [
                .addField(.text("tag", optional: true), to: "notes"),
                .addIndex(IndexDefinition([Field("tag")]), to: "notes"),
                .custom { context in
                    try context.execute("UPDATE notes SET tag = 'x'")
                    try context.documents("notes").insert(
                        Document(id: 2, ["title": "c", "body": "d", "tag": "y"]))
                    throw Boom()
                },
            ])
        await #expect(throws: Boom.self) { try await migrator.migrate(db) }
        #expect(try await FileSnapshot.of(db) == before)
        #expect(try await migrator.pendingMigrations(in: db) == ["v3"])
        // The collection still works with its old schema.
        let notes = try await db.documents(named: "notes")
        #expect(notes.schema == Self.notesV1.adding(.integer("priority", default: 0)))
        #expect(try await notes.count() == 1)
    }

    @Test("the test helper seeds at a version, migrates the rest and validates")
    func testHelper() async throws {
        try await Self.migrator().test(
            seedingAt: "v1",
            seed: { db async throws in
                try await db.documents(named: "notes").insert(
                    Document(id: 1, ["title": "urgent", "body": "b"]))
            },
            validate: { db async throws in
                #expect(try await db.documents(named: "notes").fetch(id: 1)?["priority"] == 5)
            })
        let dir = try TemporaryDirectory()
        try await Self.migrator().test(
            seedingAt: "v2", upTo: "v2", path: dir.path("t.trove"), seed: { _ in },
            validate: { db async throws in
                #expect(try await Self.migrator().pendingMigrations(in: db) == ["v3"])
            })
    }

    @Test("raw SQL that leaves dangling foreign keys fails the migration")
    func foreignKeyCheck() async throws {
        let db = try Database()
        var migrator = Self.migrator(upTo: 1)
        migrator.registerMigration("links") { context in
            try context.execute("CREATE TABLE links(note INTEGER NOT NULL REFERENCES notes(id))")
            try context.execute("INSERT INTO links(note) VALUES (42)")
        }
        await #expect(throws: MigrationError.foreignKeyViolation(table: "links", rows: 1)) {
            try await migrator.migrate(db)
        }
        #expect(try await db.query("SELECT name FROM sqlite_master WHERE name = 'links'").isEmpty)
        #expect(try await db.query("PRAGMA foreign_keys").first?.int(at: 0) == 1)
    }
}

extension DocumentSchema {
    func adding(_ field: FieldDefinition) -> DocumentSchema {
        var copy = self
        copy.fields.append(field)
        return copy
    }
}

/// In-memory indexes after a migration: a table rebuild writes no change-log entries, so the
/// migration raises the log floor; every connection's index must then reload from the table.
@Suite("Migrations and derived indexes", .serialized)
struct MigrationDerivedIndexTests {
    @Test("another connection's loaded vector index reloads after a migration rewrote the vectors")
    func otherConnectionReloads() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.trove")
        let db = try Database(path: path)
        let schema = DocumentSchema(fields: [
            .text("name"), .vector("v", dimension: 4, metric: .l2),
        ])
        let docs: [Document] = (1...40).map {
            Document(
                id: .int($0), ["name": .string("n\($0)"), "v": .vector([Float($0), 0, 0, 0])])
        }
        try await db.documents("points", schema: schema).insert(docs)
        let other = try Database(path: path)
        let seen = try await other.documents(named: "points")
        #expect(
            try await seen.search(Query().nearest(to: [40, 0, 0, 0], in: "v").limit(1)).first?
                .record.id == 40)

        var migrator = Migrator()
        migrator.registerMigration(
            "mirror",
            steps: [
                .changeField("v", in: "points", to: .vector("v", dimension: 4, metric: .l2)) {
                    old in
                    .vector(old.vectorValue!.map { 41 - $0 })
                }
            ])
        try await migrator.migrate(db)
        // No log entries were written for the rewritten rows; the raised floor makes both reload.
        let (maxSeq, floor) = try await (
            db.query("SELECT max(seq) FROM points_log").first?.int64(at: 0),
            db.query("SELECT value FROM trove_meta WHERE key = 'log_floor.points'").first?.string(
                at: 0)
        )
        #expect(floor == maxSeq.map(String.init))
        #expect(
            try await seen.search(Query().nearest(to: [40, 0, 0, 0], in: "v").limit(1)).first?
                .record.id == 1)
        let mine = try await db.documents(named: "points")
        #expect(
            try await mine.search(Query().nearest(to: [40, 0, 0, 0], in: "v").limit(1)).first?
                .record.id == 1)
        #expect(try await mine.verify() == [])
    }
}

/// The timeline travels with the data: a dump carries `trove_migrations` as a side table.
@Suite("Migrations and dumps")
struct MigrationDumpTests {
    @Test("a loaded dump keeps its timeline, so the migrator finds nothing to do")
    func dumpKeepsTimeline() async throws {
        let dir = try TemporaryDirectory()
        let source = try Database(path: dir.path("a.trove"))
        let migrator = MigratorTests.migrator()
        try await migrator.migrate(source)
        try await source.documents(named: "notes").insert(
            Document(id: 1, ["title": "urgent", "body": "b", "priority": 5]))
        _ = try await source.dump(to: dir.path("a.dump"))
        let copy = try Database(path: dir.path("b.trove"))
        _ = try await copy.load(from: dir.path("a.dump"))
        #expect(try await migrator.appliedMigrations(in: copy).map(\.name) == ["v1", "v2", "v3"])
        #expect(try await migrator.pendingMigrations(in: copy).isEmpty)
        #expect(try await copy.documents(named: "notes").fetch(id: 1)?["priority"] == 5)
    }
}
