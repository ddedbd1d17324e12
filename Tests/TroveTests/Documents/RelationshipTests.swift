import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Reference fields as SQLite foreign keys: declaration, typed errors, each delete rule through
/// the API and through raw SQL, id kinds, creation order, self references, drop and verify.
@Suite("Relationships")
struct RelationshipTests {
    /// The n-th id of a collection of ids of `kind`.
    static func id(_ n: Int, _ kind: IDKind) -> DocumentID {
        switch kind {
        case .int64: .int(Int64(n))
        case .string: .string("p\(n)")
        case .uuid: .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!)
        }
    }

    /// How raw SQL binds an id (UUIDs are stored as lowercase text).
    static func sql(_ id: DocumentID) -> SQLValue {
        if case .int(let v) = id { return .integer(v) }
        return .text(id.description)
    }

    /// authors(name) and books(title, author -> authors) with the given rule; two authors, three
    /// books by author 1 and one by author 2.
    static func library(
        _ rule: DeleteRule, kind: IDKind = .int64, in dir: TemporaryDirectory
    ) async throws -> (Database, DocumentCollection, DocumentCollection) {
        let db = try Database(path: dir.path("library.trove"))
        let authors = try await db.documents(
            "authors", schema: DocumentSchema(id: kind, fields: [.text("name")]))
        let books = try await db.documents(
            "books",
            schema: DocumentSchema(fields: [
                .text("title"),
                .reference(
                    "author", to: "authors", id: kind, onDelete: rule, optional: rule == .nullify),
            ]))
        try await authors.insert([
            Document(id: id(1, kind), ["name": "Le Guin"]),
            Document(id: id(2, kind), ["name": "Herbert"]),
        ])
        try await books.insert([
            Document(id: 1, ["title": "Earthsea", "author": id(1, kind).value]),
            Document(id: 2, ["title": "The Dispossessed", "author": id(1, kind).value]),
            Document(id: 3, ["title": "Lathe of Heaven", "author": id(1, kind).value]),
            Document(id: 4, ["title": "Dune", "author": id(2, kind).value]),
        ])
        return (db, authors, books)
    }

    @Test(
        "a reference compiles to a real foreign key with its delete rule and an index, on a writer with foreign keys on",
        arguments: [(DeleteRule.cascade, "CASCADE"), (.nullify, "SET NULL"), (.deny, "NO ACTION")])
    func foreignKeyInTheTable(_ rule: DeleteRule, _ sql: String) async throws {
        let dir = try TemporaryDirectory()
        let (db, _, _) = try await Self.library(rule, in: dir)
        let keys = try await db.query("PRAGMA foreign_key_list(books)")
        #expect(keys.count == 1)
        #expect(keys.first?.string("table") == "authors" && keys.first?.string("from") == "author")
        #expect(keys.first?.string("to") == "id" && keys.first?.string("on_delete") == sql)
        let plan = try await db.query("EXPLAIN QUERY PLAN SELECT id FROM books WHERE author = 1")
            .compactMap {
                $0.string(at: 3)
            }
        #expect(plan.contains { $0.contains("USING") && $0.contains("INDEX") }, "\(plan)")
        let enforced = try await db.write { tx in
            try tx.query("PRAGMA foreign_keys")[0].int64(at: 0)
        }
        #expect(enforced == 1)
        // A referenced id cannot change under its references (ON UPDATE is NO ACTION).
        await #expect { try await db.execute("UPDATE authors SET id = 9 WHERE id = 1") } throws: {
            ($0 as? SQLiteError)?.extendedCode == .constraintForeignKey
        }
    }

    @Test("replacing a parent by upsert or update is not a delete: its children stay")
    func upsertParent() async throws {
        let dir = try TemporaryDirectory()
        let (_, authors, books) = try await Self.library(.cascade, in: dir)
        try await authors.upsert([Document(id: 1, ["name": "Ursula K. Le Guin"])])
        try await authors.update(Document(id: 2, ["name": "Frank Herbert"]))
        #expect(try await books.count() == 4)
    }

    @Test(
        "inserting, upserting, updating or patching with a missing parent is a typed error naming field and value; nothing is written",
        arguments: [IDKind.int64, .string, .uuid])
    func missingParent(_ kind: IDKind) async throws {
        let dir = try TemporaryDirectory()
        let (db, _, books) = try await Self.library(.cascade, kind: kind, in: dir)
        let missing = Self.id(9, kind)
        let expected = TroveError.missingReference(
            field: "author", value: missing.description, collection: "authors")
        let batch = [
            Document(id: 10, ["title": "Ok", "author": Self.id(2, kind).value]),
            Document(id: 11, ["title": "Orphan", "author": missing.value]),
        ]
        await #expect(throws: expected) { try await books.insert(batch) }
        await #expect(throws: expected) { try await books.upsert(batch) }
        await #expect(throws: expected) {
            try await books.update(Document(id: 4, ["title": "Dune", "author": missing.value]))
        }
        await #expect(throws: expected) {
            _ = try await books.patch(4, [Field("author"): missing.value])
        }
        await #expect(throws: expected) {
            try await db.write { tx in
                try tx.documents("books").insert(
                    Document(id: 12, ["title": "In tx", "author": missing.value]))
            }
        }
        #expect(try await books.count() == 4)
        #expect(try await books.fetch(id: 4)?["author"] == Self.id(2, kind).value)
        #expect(try await books.fetch(id: 4)?.version == 1)
        // Raw SQL cannot leave a dangling reference either.
        await #expect {
            try await db.execute(
                "INSERT INTO books(id, title, author) VALUES (20, 'Raw', ?)",
                bindings: [Self.sql(missing)])
        } throws: { ($0 as? SQLiteError)?.extendedCode == .constraintForeignKey }
        #expect(try await books.count() == 4)
        #expect(try await books.verify().isEmpty)
    }

    /// The ways a parent gets deleted.
    enum DeletePath: String, CaseIterable, CustomTestStringConvertible {
        case id, ids, filter, rawInTransaction, rawOnDatabase
        var testDescription: String { rawValue }

        func delete(_ parent: DocumentID, from authors: DocumentCollection, _ db: Database)
            async throws
        {
            switch self {
            case .id: _ = try await authors.delete(id: parent)
            case .ids: _ = try await authors.delete(ids: [parent])
            case .filter: _ = try await authors.delete(where: Field("id") == parent.value)
            case .rawInTransaction:
                try await db.write { tx in
                    _ = try tx.execute(
                        "DELETE FROM authors WHERE id = ?", [RelationshipTests.sql(parent)])
                }
            case .rawOnDatabase:
                _ = try await db.execute(
                    "DELETE FROM authors WHERE id = ?", bindings: [RelationshipTests.sql(parent)])
            }
        }

        var isRaw: Bool { self == .rawInTransaction || self == .rawOnDatabase }
    }

    @Test(
        "cascade deletes the children, through the API and through raw SQL",
        arguments: DeletePath.allCases,
        [IDKind.int64, .string, .uuid])
    func cascade(_ path: DeletePath, _ kind: IDKind) async throws {
        let dir = try TemporaryDirectory()
        let (db, authors, books) = try await Self.library(.cascade, kind: kind, in: dir)
        try await path.delete(Self.id(1, kind), from: authors, db)
        #expect(try await authors.fetch().map(\.id) == [Self.id(2, kind)])
        #expect(try await books.fetch().map(\.id) == [4])
        #expect(try await books.verify().isEmpty)
    }

    @Test(
        "nullify sets the children's field to null and raises their version",
        arguments: DeletePath.allCases,
        [IDKind.int64, .uuid])
    func nullify(_ path: DeletePath, _ kind: IDKind) async throws {
        let dir = try TemporaryDirectory()
        let (db, authors, books) = try await Self.library(.nullify, kind: kind, in: dir)
        try await path.delete(Self.id(1, kind), from: authors, db)
        let all = try await books.fetch()
        #expect(all.map(\.id) == [1, 2, 3, 4])
        #expect(all.filter { $0["author"] == .null }.map(\.id) == [1, 2, 3])
        #expect(all.filter { $0["author"] == .null }.allSatisfy { $0.version == 2 })
        #expect(try await books.fetch(Query(Field("author") == nil)).map(\.id) == [1, 2, 3])
        #expect(try await books.fetch(id: 4)?["author"] == Self.id(2, kind).value)
    }

    @Test(
        "deny refuses the delete with a typed error (a constraint error for raw SQL) and changes nothing",
        arguments: DeletePath.allCases, [IDKind.int64, .string])
    func deny(_ path: DeletePath, _ kind: IDKind) async throws {
        let dir = try TemporaryDirectory()
        let (db, authors, books) = try await Self.library(.deny, kind: kind, in: dir)
        let parent = Self.id(1, kind)
        if path.isRaw {
            await #expect { try await path.delete(parent, from: authors, db) } throws: {
                ($0 as? SQLiteError)?.extendedCode == .constraintForeignKey
            }
        } else {
            await #expect(
                throws: TroveError.deleteDenied(
                    collection: "authors", id: parent, referencedBy: "books.author")
            ) {
                try await path.delete(parent, from: authors, db)
            }
        }
        #expect(try await authors.count() == 2)
        #expect(try await books.count() == 4)
        // Once nothing references it, the delete goes through.
        _ = try await books.delete(where: Field("author") == parent.value)
        #expect(try await authors.delete(id: parent))
    }

    @Test("a batch delete refused by deny leaves every document of the batch in place")
    func denyIsAllOrNothing() async throws {
        let dir = try TemporaryDirectory()
        let (_, authors, _) = try await Self.library(.deny, in: dir)
        try await authors.insert(Document(id: 3, ["name": "Nobody's"]))
        await #expect(
            throws: TroveError.deleteDenied(
                collection: "authors", id: 1, referencedBy: "books.author")
        ) {
            try await authors.delete(ids: [3, 1])
        }
        #expect(try await authors.count() == 3)
    }

    @Test(
        "deny checks at the end of the statement: deleting a document with everything that references it goes through"
    )
    func denyAtStatementEnd() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("deny.trove"))
        let tree = try await db.documents(
            "tree",
            schema: DocumentSchema(fields: [
                .text("name"), .reference("parent", to: "tree", onDelete: .deny, optional: true),
            ]))
        try await tree.insert([
            Document(id: 1, ["name": "root"]), Document(id: 2, ["name": "leaf", "parent": 1]),
            Document(id: 3, ["name": "other"]),
        ])
        await #expect(
            throws: TroveError.deleteDenied(collection: "tree", id: 1, referencedBy: "tree.parent")
        ) {
            try await tree.delete(id: 1)
        }
        try await tree.insert(Document(id: 4, ["name": "leaf of other", "parent": 3]))
        // 1 and 2 go together, but 4 still references 3: the denial names 3, not 1.
        await #expect(
            throws: TroveError.deleteDenied(collection: "tree", id: 3, referencedBy: "tree.parent")
        ) {
            try await tree.delete(where: Field("id") <= 3)
        }
        _ = try await tree.delete(id: 4)
        #expect(try await tree.delete(where: Field("id") <= 2) == 2)
        #expect(try await tree.fetch().map(\.id) == [3])
    }

    @Test(
        "a cascade that reaches a denied document fails the whole delete and names where it stopped"
    )
    func denyThroughCascade() async throws {
        let dir = try TemporaryDirectory()
        let (db, authors, books) = try await Self.library(.cascade, in: dir)
        let reviews = try await db.documents(
            "reviews",
            schema: DocumentSchema(fields: [
                .text("text"), .reference("book", to: "books", onDelete: .deny),
            ]))
        try await reviews.insert(Document(id: 1, ["text": "A classic", "book": 2]))
        await #expect(
            throws: TroveError.deleteDenied(
                collection: "books", id: 2, referencedBy: "reviews.book")
        ) {
            try await authors.delete(id: 1)
        }
        #expect(try await books.count() == 4)
        #expect(try await authors.count() == 2)
        #expect(try await authors.delete(id: 2))
        #expect(try await books.count() == 3)
    }

    @Test(
        "the target must exist first: a reference to a missing collection is a typed error and creates nothing"
    )
    func creationOrder() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("order.trove")
        let bookSchema = DocumentSchema(fields: [
            .text("title"), .reference("author", to: "authors", onDelete: .cascade),
        ])
        do {
            let db = try Database(path: path)
            await #expect(
                throws: TroveError.referenceTargetNotFound(field: "author", collection: "authors")
            ) {
                _ = try await db.documents("books", schema: bookSchema)
            }
            #expect(try await db.collectionNames() == [])
            #expect(
                try await db.query("SELECT name FROM sqlite_master WHERE name LIKE 'books%'")
                    .isEmpty)
            _ = try await db.documents("authors", schema: DocumentSchema(fields: [.text("name")]))
            let books = try await db.documents("books", schema: bookSchema)
            try await db.documents(named: "authors").insert(Document(id: 1, ["name": "Le Guin"]))
            try await books.insert(Document(id: 1, ["title": "Earthsea", "author": 1]))
        }
        // Another Database on the file opens the referencing collection first: it is stored, so
        // nothing needs its target opened.
        let db = try Database(path: path)
        let books = try await db.documents(named: "books")
        await #expect(
            throws: TroveError.missingReference(field: "author", value: "2", collection: "authors")
        ) {
            try await books.insert(Document(id: 2, ["title": "Dune", "author": 2]))
        }
        _ = try await db.documents(named: "authors").delete(id: 1)
        #expect(try await books.count() == 0)
    }

    @Test("schemas with wrong reference declarations are refused before anything is created")
    func invalidDeclarations() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("bad.trove"))
        _ = try await db.documents(
            "authors", schema: DocumentSchema(id: .string, fields: [.text("name")]))
        let bad: [FieldDefinition] = [
            // authors has string ids
            .reference("author", to: "authors", id: .int64, onDelete: .cascade),
            // nullify on a required field
            .reference("author", to: "authors", id: .string, onDelete: .nullify),
            // wrong type
            FieldDefinition(
                "author", .integer, reference: Reference("authors", id: .string, onDelete: .deny)),
            .reference("author", to: "sqlite_master", onDelete: .deny),  // not a name Trove uses
        ]
        for field in bad {
            await #expect {
                _ = try await db.documents("books", schema: DocumentSchema(fields: [field]))
            } throws: {
                error in
                guard let error = error as? TroveError else { return false }
                switch error {
                case .invalidConfiguration, .invalidName: return true
                default: return false
                }
            }
        }
        #expect(try await db.collectionNames() == ["authors"])
        // A changed delete rule is a changed schema.
        _ = try await db.documents(
            "books",
            schema: DocumentSchema(fields: [
                .reference("author", to: "authors", id: .string, onDelete: .deny)
            ])
        )
        await #expect {
            _ = try await db.documents(
                "books",
                schema: DocumentSchema(fields: [
                    .reference("author", to: "authors", id: .string, onDelete: .cascade)
                ]))
        } throws: { if case TroveError.schemaMismatch = $0 { true } else { false } }
    }

    @Test(
        "UUID references accept any spelling of the UUID and store it as the target's ids are stored"
    )
    func uuidSpelling() async throws {
        let dir = try TemporaryDirectory()
        let (_, authors, books) = try await Self.library(.cascade, kind: .uuid, in: dir)
        let parent = Self.id(2, .uuid)
        try await books.insert(
            Document(
                id: 5,
                ["title": "Children of Dune", "author": .string(parent.description.uppercased())]))
        #expect(try await books.fetch(id: 5)?["author"] == .string(parent.description))
        await #expect(
            throws: TroveError.typeMismatch(
                field: "author", expected: "a UUID of authors", value: "\"not-a-uuid\"")
        ) {
            try await books.insert(Document(id: 6, ["title": "?", "author": "not-a-uuid"]))
        }
        _ = try await authors.delete(id: parent)
        #expect(try await books.fetch().map(\.id) == [1, 2, 3])
    }

    @Test(
        "self references: parents before children in one batch, cascades down a tree, nullify makes roots"
    )
    func selfReference() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("tree.trove"))
        for (name, rule) in [("folders", DeleteRule.cascade), ("tags", .nullify)] {
            let tree = try await db.documents(
                name,
                schema: DocumentSchema(
                    id: .string,
                    fields: [
                        .text("name"),
                        .reference("parent", to: name, id: .string, onDelete: rule, optional: true),
                    ]))
            // root -> a -> a1, a2; root -> b; other
            try await tree.insert([
                Document(id: "root", ["name": "/"]),
                Document(id: "a", ["name": "a", "parent": "root"]),
                Document(id: "a1", ["name": "a1", "parent": "a"]),
                Document(id: "a2", ["name": "a2", "parent": "a"]),
                Document(id: "b", ["name": "b", "parent": "root"]),
                Document(id: "other", ["name": "other"]),
            ])
            // A child before its parent in a batch: the parent does not exist yet when it is written.
            await #expect(
                throws: TroveError.missingReference(field: "parent", value: "c", collection: name)
            ) {
                try await tree.insert([
                    Document(id: "c1", ["name": "c1", "parent": "c"]),
                    Document(id: "c", ["name": "c"]),
                ])
            }
            #expect(try await tree.count() == 6)
            _ = try await tree.delete(id: "root")
            if rule == .cascade {
                #expect(try await tree.fetch().map(\.id) == ["other"])
            } else {
                let rest = try await tree.fetch()
                #expect(rest.map(\.id) == ["a", "a1", "a2", "b", "other"])
                #expect(rest.filter { $0["parent"] == .null }.map(\.id) == ["a", "b", "other"])
            }
            #expect(try await tree.verify().isEmpty)
        }
    }

    @Test(
        "a referenced collection cannot be dropped; the referencing one can, and then the target too"
    )
    func drop() async throws {
        let dir = try TemporaryDirectory()
        let (db, _, _) = try await Self.library(.cascade, in: dir)
        await #expect(
            throws: TroveError.collectionReferenced(collection: "authors", by: ["books.author"])
        ) {
            try await db.dropCollection("authors")
        }
        #expect(try await db.documents(named: "books").count() == 4)
        #expect(try await db.dropCollection("books"))
        #expect(try await db.dropCollection("authors"))
    }

    @Test(
        "a dangling reference written with foreign keys off is reported by verify, and repair leaves the rows to the app"
    )
    func danglingReference() async throws {
        let dir = try TemporaryDirectory()
        let (_, _, books) = try await Self.library(.cascade, kind: .string, in: dir)
        #expect(try await books.verify().isEmpty)
        do {
            // Another process (here: another connection) that does not enforce foreign keys.
            let raw = try Connection(
                path: dir.path("library.trove"), options: .init(foreignKeys: false))
            try raw.execute("INSERT INTO books(id, title, author) VALUES (7, 'Ghost', 'p9')")
            try raw.execute("UPDATE books SET author = 'p8' WHERE id = 4")
        }
        let problems = try await books.verify()
        #expect(problems.count == 2, "\(problems)")
        #expect(
            problems.contains {
                $0.contains("document 7") && $0.contains("author = p9") && $0.contains("authors")
            })
        #expect(problems.contains { $0.contains("document 4") && $0.contains("author = p8") })
        try await books.repair()
        #expect(try await books.verify().count == 2)
        _ = try await books.delete(ids: [7, 4])
        #expect(try await books.verify().isEmpty)
    }
}
