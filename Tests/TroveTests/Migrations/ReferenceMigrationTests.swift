import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Migrations of collections joined by references (SQLite foreign keys): a rebuilt parent keeps
/// its children, a rebuilt child keeps its foreign key, and the delete rules still hold after.
@Suite("Migrations and references")
struct ReferenceMigrationTests {
    static let authors = DocumentSchema(fields: [.text("name")])
    static let books = DocumentSchema(fields: [
        .text("title"), .reference("author", to: "authors", onDelete: .cascade),
    ])

    static func seeded() async throws -> Database {
        let db = try Database()
        try await db.documents("authors", schema: authors).insert(
            (1...5).map { Document(id: .int($0), ["name": .string("a\($0)")]) })
        try await db.documents("books", schema: books).insert(
            (1...20).map {
                Document(
                    id: .int($0), ["title": .string("b\($0)"), "author": .int(($0 - 1) % 5 + 1)])
            })
        return db
    }

    /// Applies `steps` as one migration named after them (each call a new migration).
    static func migrate(_ db: Database, _ steps: [MigrationStep]) async throws {
        var migrator = Migrator()
        let timeline =
            try await db.query("SELECT name FROM sqlite_master WHERE name = 'trove_migrations'")
            .isEmpty
            ? []
            : try await db.query("SELECT name FROM trove_migrations ORDER BY seq").compactMap {
                $0.string(at: 0)
            }
        for applied in timeline {
            migrator.registerMigration(applied, steps: [])
        }
        migrator.registerMigration("m\(migrator.migrationNames.count)", steps: steps)
        try await migrator.migrate(db)
    }

    @Test("a rebuilt parent keeps its children, and cascades still reach them")
    func rebuiltParent() async throws {
        let db = try await Self.seeded()
        try await Self.migrate(
            db,
            [
                .changeField("name", in: "authors", to: .text("name", indexed: true)) {
                    .string($0.stringValue!.uppercased())
                }
            ])
        #expect(try await db.documents(named: "books").count() == 20)
        #expect(try await db.documents(named: "authors").fetch(id: 2)?["name"] == "A2")
        #expect(try await db.query("PRAGMA foreign_key_check").isEmpty)
        #expect(try await db.documents(named: "authors").delete(id: 2))
        #expect(try await db.documents(named: "books").count() == 16)
        #expect(try await db.documents(named: "books").verify() == [])
    }

    @Test("a rebuilt child keeps its foreign key; removing the reference field drops it")
    func rebuiltChild() async throws {
        let db = try await Self.seeded()
        // a rebuild
        try await Self.migrate(db, [.addField(.real("price", default: 9.5), to: "books")])
        let books = try await db.documents(named: "books")
        await #expect(
            throws: TroveError.missingReference(field: "author", value: "99", collection: "authors")
        ) {
            try await books.insert(Document(id: 100, ["title": "x", "author": 99]))
        }
        #expect(try await db.documents(named: "authors").delete(id: 1))
        #expect(try await books.count() == 16)
        // SQLite will not DROP a foreign-key column: the rebuild removes it.
        try await Self.migrate(db, [.removeField("author", from: "books")])
        let plain = try await db.documents(named: "books")
        #expect(plain.schema.field("author") == nil)
        #expect(try await db.documents(named: "authors").delete(id: 3))
        #expect(try await plain.count() == 16)
    }

    @Test("a new reference field needs its target; a referenced collection cannot be dropped")
    func referenceRules() async throws {
        let db = try await Self.seeded()
        var migrator = Migrator()
        migrator.registerMigration(
            "bad",
            steps: [
                .addField(
                    .reference("series", to: "series", onDelete: .nullify, optional: true),
                    to: "books")
            ])
        await #expect(
            throws: TroveError.referenceTargetNotFound(field: "series", collection: "series")
        ) {
            try await migrator.migrate(db)
        }
        var second = Migrator()
        second.registerMigration(
            "series",
            steps: [
                .createCollection("series", schema: DocumentSchema(fields: [.text("name")])),
                .addField(
                    .reference("series", to: "series", onDelete: .nullify, optional: true),
                    to: "books"),
                .custom { context in
                    try context.documents("series").insert(Document(id: 1, ["name": "Dune"]))
                    try context.execute("UPDATE books SET series = 1 WHERE id <= 3")
                },
            ])
        try await second.migrate(db)
        #expect(try await db.documents(named: "series").delete(id: 1))
        #expect(try await db.documents(named: "books").count(where: Field("series") == nil) == 20)
        var third = Migrator()
        third.registerMigration("series", steps: [])
        third.registerMigration("drop authors", steps: [.dropCollection("authors")])
        await #expect(
            throws: TroveError.collectionReferenced(collection: "authors", by: ["books.author"])
        ) {
            try await third.migrate(db)
        }
    }
}

/// Columns other features add to a collection's table survive a rebuild.
@Suite("Migrations and expiry")
struct ExpiryMigrationTests {
    @Test("expiry times survive a table rebuild and DROP COLUMN")
    func expirySurvives() async throws {
        let db = try Database()
        let schema = DocumentSchema(
            fields: [.text("name"), .integer("n"), .text("gone", optional: true)],
            allowsExpiry: true)
        let c = try await db.documents("c", schema: schema)
        let when = Date(timeIntervalSince1970: 4_000_000_000)
        try await c.insert(
            [Document(id: 1, ["name": "a", "n": 1]), Document(id: 2, ["name": "b", "n": 2])],
            expiry: .at(when))
        try await c.insert([Document(id: 3, ["name": "c", "n": 3])])
        var migrator = Migrator()
        migrator.registerMigration(
            "m",
            steps: [
                .changeField("n", in: "c", to: .real("n")) { .double(Double($0.intValue!) / 2) },
                .removeField("gone", from: "c"),
            ])
        try await migrator.migrate(db)
        let migrated = try await db.documents(named: "c")
        #expect(try await migrated.expiry(of: 1) == when)
        #expect(try await migrated.expiry(of: 3) == nil)
        #expect(try await migrated.fetch(id: 2)?["n"] == 1.0)
        #expect(try await migrated.verify() == [])
    }
}

/// Point fields (R*Tree index, kept by triggers) through renames and rebuilds.
@Suite("Migrations and places")
struct PlacesMigrationTests {
    @Test(
        "a point field renamed and its table rebuilt: the R*Tree follows and radius queries agree")
    func pointFieldMigrates() async throws {
        let start = DocumentSchema(fields: [.text("name"), .point("place", optional: true)])
        let docs: [Document] = (0..<30).map { (i: Int) -> Document in
            let latitude: Double = 52 + Double(i) * 0.01
            let place: Value = i % 5 == 0 ? .null : Value.point(latitude: latitude, longitude: 13.4)
            return Document(id: .int(Int64(i + 1)), ["name": .string("p\(i)"), "place": place])
        }
        let schema = DocumentSchema(fields: [
            .text("name"), .point("location", optional: true), .real("rating", default: 0.5),
        ])
        let expected = docs.map {
            Document(id: $0.id, ["name": $0["name"]!, "location": $0["place"]!, "rating": 0.5])
        }
        let db = try await MigrationStepTests.migrate(
            start, docs,
            [
                .renameField("place", to: "location", in: "c"),
                .addField(.real("rating", default: 0.5), to: "c"),
            ], expect: schema, expected)
        let center = GeoPoint(latitude: 52.05, longitude: 13.4)
        let near = try await db.documents(named: "c").fetch(
            Query(Field("location").within(kilometres: 3, of: center)))
        let truth = expected.filter { d in
            guard let p = d["location"], !p.isNull,
                let lat = p.objectValue?["latitude"]?.doubleValue
                    ?? p.arrayValue?.first?.doubleValue
            else { return false }
            return abs(lat - 52.05) * 111.2 <= 3
        }
        #expect(Set(near.map(\.id)) == Set(truth.map(\.id)))
        #expect(!near.isEmpty)
    }
}

/// Links between documents through a table rebuild: the links stay, and the cascade trigger that
/// removes a deleted record's links is re-created with the table.
@Suite("Migrations and links")
struct LinksMigrationTests {
    @Test("links survive a rebuild and still go with a deleted record")
    func linksSurvive() async throws {
        let db = try Database()
        let people = try await db.documents(
            "people", schema: DocumentSchema(fields: [.text("name"), .integer("age")]))
        try await people.insert(
            (1...4).map {
                Document(id: .int($0), ["name": .string("p\($0)"), "age": .int($0 * 10)])
            })
        try await db.links.link(GraphNode("people", 1), to: GraphNode("people", 2), label: "knows")
        try await db.links.link(GraphNode("people", 2), to: GraphNode("people", 3), label: "knows")
        var migrator = Migrator()
        migrator.registerMigration(
            "ages as reals",
            steps: [
                .changeField("age", in: "people", to: .real("age")) {
                    .double(Double($0.intValue!) + 0.5)
                }
            ])
        try await migrator.migrate(db)
        #expect(try await db.links.neighbours(of: GraphNode("people", 1)).count == 1)
        // raw SQL: only the trigger removes links
        #expect(try await db.execute("DELETE FROM people WHERE id = 2") == 1)
        #expect(try await db.links.neighbours(of: GraphNode("people", 1)).isEmpty)
        #expect(
            try await db.links.neighbours(of: GraphNode("people", 2), direction: .outgoing).isEmpty)
        #expect(try await db.links.verify().isEmpty)
    }
}
