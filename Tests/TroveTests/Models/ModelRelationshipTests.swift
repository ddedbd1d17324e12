import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// The models of the relationship tests: writers and their books (cascade), reviews of books
/// (nullify), loans of books (deny), and a folder tree (a self reference with UUID ids).
struct Writer: Model, Equatable {
    var id: Int64
    var name: String
}

struct Novel: Model, Equatable {
    var id: Int64
    var title: String
    var year: Int
    var writerID: Int64

    static var modelOptions: ModelOptions {
        ModelOptions().reference(\Novel.writerID, to: Writer.self, onDelete: .cascade)
    }
}

struct Review: Model, Equatable {
    var id: UUID
    var text: String
    var novelID: Int64?

    static var modelOptions: ModelOptions {
        ModelOptions().reference(\Review.novelID, to: Novel.self, onDelete: .nullify)
    }
}

struct Loan: Model, Equatable {
    var id: String
    var borrower: String
    var novelID: Int64

    static var modelOptions: ModelOptions {
        ModelOptions().reference(\Loan.novelID, to: Novel.self, onDelete: .deny)
    }
}

struct Folder: Model, Equatable {
    var id: UUID
    var name: String
    var parentID: UUID?

    static var modelOptions: ModelOptions {
        ModelOptions().reference(\Folder.parentID, to: Folder.self, onDelete: .cascade)
    }
}

/// Relationships through typed models: to-one references declared in `ModelOptions`, to-many
/// through the inverse, each delete rule, prefetch.
@Suite("Model relationships")
struct ModelRelationshipTests {
    static let writers = (1...Int64(8)).map { Writer(id: $0, name: "writer \($0)") }

    static func seeded(in dir: TemporaryDirectory) async throws -> (
        Database, ModelCollection<Writer>, ModelCollection<Novel>, [Novel]
    ) {
        let db = try Database(path: dir.path("models.trove"))
        // Novels first: opening it creates Writer's collection, which it references.
        let novels = try await db.models(Novel.self)
        let writers = try await db.models(Writer.self)
        try await writers.insert(Self.writers)
        var rng = SeededGenerator(seed: 8)
        let all = (1...Int64(120)).map { id in
            Novel(
                id: id, title: "novel \(id)", year: Int.random(in: 1950...2020, using: &rng),
                writerID: Int64.random(in: 1...6, using: &rng))
        }
        try await novels.insert(all)
        return (db, writers, novels, all)
    }

    @Test(
        "a reference property is a foreign key with its delete rule, and the referenced collection is created first"
    )
    func schema() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("m.trove"))
        let loans = try await db.models(Loan.self)  // creates Novel, which creates Writer
        #expect(try await db.collectionNames() == ["Loan", "Novel", "Writer"])
        let field = try #require(loans.documents.schema.field("novelID"))
        #expect(field.reference == Reference("Novel", id: .int64, onDelete: .deny))
        #expect(
            try await db.query("PRAGMA foreign_key_list(\"Novel\")").first?.string("table")
                == "Writer")
        let folders = try await db.models(Folder.self)
        #expect(
            folders.documents.schema.field("parentID")?.reference
                == Reference("Folder", id: .uuid, onDelete: .cascade))
    }

    @Test("saving a model whose reference names a missing model is a typed error, nothing written")
    func missingParent() async throws {
        let dir = try TemporaryDirectory()
        let (_, _, novels, _) = try await Self.seeded(in: dir)
        await #expect(
            throws: TroveError.missingReference(
                field: "writerID", value: "99", collection: "Writer")
        ) {
            try await novels.insert([
                Novel(id: 500, title: "ok", year: 2000, writerID: 1),
                Novel(id: 501, title: "orphan", year: 2000, writerID: 99),
            ])
        }
        #expect(try await novels.count() == 120)
    }

    @Test("cascade, nullify and deny through models, by id, by predicate and by raw SQL")
    func deleteRules() async throws {
        let dir = try TemporaryDirectory()
        let (db, writers, novels, all) = try await Self.seeded(in: dir)
        let reviews = try await db.models(Review.self)
        let loans = try await db.models(Loan.self)
        let firstOfOne = try #require(all.first { $0.writerID == 1 })
        try await reviews.insert([
            Review(id: UUID(), text: "great", novelID: firstOfOne.id),
            Review(id: UUID(), text: "fine", novelID: nil),
        ])
        try await loans.insert(Loan(id: "L1", borrower: "Sam", novelID: firstOfOne.id))

        // deny: the loan blocks the novel, so the cascade from its writer stops.
        await #expect(
            throws: TroveError.deleteDenied(
                collection: "Novel", id: .int(firstOfOne.id), referencedBy: "Loan.novelID")
        ) {
            try await writers.delete(id: 1)
        }
        #expect(try await novels.count() == 120)
        try await loans.delete(id: "L1")

        // cascade (and nullify one level down): writer 1's novels go, the review stays unlinked.
        try await writers.delete(id: 1)
        #expect(try await novels.fetch() == all.filter { $0.writerID != 1 })
        #expect(try await reviews.fetch().allSatisfy { $0.novelID == nil })
        // By predicate and by raw SQL.
        _ = try await writers.delete(where: #Predicate { $0.name == "writer 2" })
        _ = try await db.execute("DELETE FROM \"Writer\" WHERE id = 3")
        #expect(try await novels.fetch() == all.filter { $0.writerID > 3 })
        #expect(try await novels.documents.verify().isEmpty)
    }

    @Test(
        "children(of:via:) groups by parent with a predicate, an order and a limit per parent, as Swift would"
    )
    func children() async throws {
        let dir = try TemporaryDirectory()
        let (db, _, novels, all) = try await Self.seeded(in: dir)
        for limit in [nil, 0, 2, 5] as [Int?] {
            var descriptor = FetchDescriptor<Novel>(
                predicate: #Predicate { $0.year >= 1980 },
                sortBy: [SortDescriptor(\.year, order: .reverse)])
            descriptor.fetchLimit = limit
            let got = try await novels.children(of: [1, 3, 6, 7], via: \Novel.writerID, descriptor)
            #expect(Set(got.keys) == [1, 3, 6, 7])
            for parent: Int64 in [1, 3, 6, 7] {
                var expected = all.filter { $0.writerID == parent && $0.year >= 1980 }
                    .sorted { ($0.year, $1.id) > ($1.year, $0.id) }
                if let limit { expected = Array(expected.prefix(limit)) }
                #expect(
                    got[parent] == expected, "writer \(parent), limit \(String(describing: limit))")
            }
        }
        #expect(try await novels.children(of: [7], via: \Novel.writerID)[7] == [])
        let inRead = try await db.read { r in
            try r.models(Novel.self).children(of: [2], via: \Novel.writerID)
        }
        #expect(inRead[2] == all.filter { $0.writerID == 2 })
        var paged = FetchDescriptor<Novel>()
        paged.fetchOffset = 3
        await #expect {
            _ = try await novels.children(of: [1], via: \Novel.writerID, paged)
        } throws: {
            if case TroveError.invalidQuery = $0 { true } else { false }
        }
    }

    @Test("prefetch: each novel's writer and each writer's novels come with the fetch")
    func prefetch() async throws {
        let dir = try TemporaryDirectory()
        let (db, writers, novels, all) = try await Self.seeded(in: dir)
        let recent = try await novels.fetch(
            FetchDescriptor(
                predicate: #Predicate { $0.year >= 2000 }, sortBy: [SortDescriptor(\.id)]),
            prefetching: [.referenced(\Novel.writerID)])
        #expect(recent.models == all.filter { $0.year >= 2000 })
        for novel in recent.models {
            #expect(
                try recent.referenced(\.writerID, of: novel, as: Writer.self)
                    == Self.writers[Int(novel.writerID) - 1])
        }
        let shelf = try await writers.fetch(
            FetchDescriptor(sortBy: [SortDescriptor(\.id)]),
            prefetching: [.children(Novel.self, via: \Novel.writerID)])
        #expect(shelf.models == Self.writers)
        for writer in shelf.models {
            #expect(
                try shelf.children(Novel.self, via: \.writerID, of: writer)
                    == all.filter { $0.writerID == writer.id })
        }
        // An optional reference: nil names nothing.
        let reviews = try await db.models(Review.self)
        try await reviews.insert([
            Review(id: UUID(), text: "a", novelID: 4), Review(id: UUID(), text: "b", novelID: nil),
        ])
        let withNovels = try await reviews.fetch(
            FetchDescriptor(sortBy: [SortDescriptor(\.text)]),
            prefetching: [.referenced(\Review.novelID)])
        #expect(
            try withNovels.referenced(\.novelID, of: withNovels.models[0], as: Novel.self)?.id == 4)
        #expect(
            try withNovels.referenced(\.novelID, of: withNovels.models[1], as: Novel.self) == nil)
        #expect(try await writers.fetch(ids: [3, 1, 42]).map(\.id) == [3, 1])
    }

    @Test("a self reference with UUID ids: parents and children of a folder tree, cascading down")
    func folders() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("f.trove"))
        let folders = try await db.models(Folder.self)
        let root = Folder(id: UUID(), name: "/", parentID: nil)
        let docs = Folder(id: UUID(), name: "docs", parentID: root.id)
        let photos = Folder(id: UUID(), name: "photos", parentID: root.id)
        let taxes = Folder(id: UUID(), name: "taxes", parentID: docs.id)
        try await folders.insert([root, docs, photos, taxes])
        let tree = try await folders.fetch(
            FetchDescriptor(sortBy: [SortDescriptor(\.name)]),
            prefetching: [
                .referenced(\Folder.parentID), .children(Folder.self, via: \Folder.parentID),
            ])
        #expect(tree.models.map(\.name) == ["/", "docs", "photos", "taxes"])
        #expect(try tree.referenced(\.parentID, of: taxes, as: Folder.self) == docs)
        #expect(
            Set(try tree.children(Folder.self, via: \.parentID, of: root).map(\.name)) == [
                "docs", "photos",
            ])
        let byParent = try await folders.children(
            of: [root.id, docs.id, taxes.id], via: \Folder.parentID)
        #expect(byParent[docs.id] == [taxes] && byParent[taxes.id] == [])
        try await folders.delete(id: docs.id)
        #expect(Set(try await folders.fetch().map(\.name)) == ["/", "photos"])
    }

    @Test(
        "inside a write transaction a cascade is part of the transaction: a rollback brings the children back"
    )
    func transactional() async throws {
        let dir = try TemporaryDirectory()
        let (db, _, novels, all) = try await Self.seeded(in: dir)
        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await db.write { tx in
                try tx.models(Writer.self).delete(id: 4)
                #expect(
                    try tx.models(Novel.self).count(where: #Predicate { $0.writerID == 4 }) == 0)
                throw Abort()
            }
        }
        #expect(try await novels.fetch() == all)
    }

    struct RequiredNullify: Model {
        var id: Int64
        var writerID: Int64
        static var modelOptions: ModelOptions {
            ModelOptions().reference(\RequiredNullify.writerID, to: Writer.self, onDelete: .nullify)
        }
    }

    @Test("nullify on a non-optional reference property is refused before anything is created")
    func invalidRule() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("bad.trove"))
        await #expect { _ = try await db.models(RequiredNullify.self) } throws: {
            if case TroveError.invalidConfiguration = $0 { true } else { false }
        }
        #expect(try await db.collectionNames().contains("RequiredNullify") == false)
    }
}
