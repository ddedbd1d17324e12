import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Relationships and everything derived from the child's table (change log, vector and text
/// indexes), and fetching related documents for many parents at once.
@Suite("Relationships (fetch and derived indexes)")
struct RelationshipFetchTests {
    static func notesSchema(_ rule: DeleteRule, hnsw: Bool) -> DocumentSchema {
        DocumentSchema(
            fields: [
                .text("body"), .vector("embedding", dimension: 4),
                .reference("project", to: "projects", onDelete: rule, optional: rule == .nullify),
            ],
            fullText: FullTextDefinition(fields: ["body"]),
            vectorIndexes: hnsw ? ["embedding": .hnsw(m: 8, efConstruction: 64, efSearch: 64)] : [:]
        )
    }

    enum Deleter: String, CaseIterable { case api, rawSQL, otherConnection }

    @Test(
        "cascaded deletes and SET NULL updates reach the child's change log, vector index and text index",
        arguments: [DeleteRule.cascade, .nullify], Deleter.allCases)
    func derivedIndexes(_ rule: DeleteRule, _ deleter: Deleter) async throws {
        for hnsw in [false, true] { try await derivedIndexes(rule, deleter, hnsw: hnsw) }
    }

    func derivedIndexes(_ rule: DeleteRule, _ deleter: Deleter, hnsw: Bool) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("p.trove")
        let db = try Database(path: path)
        let projects = try await db.documents(
            "projects", schema: DocumentSchema(fields: [.text("name")]))
        let notes = try await db.documents("notes", schema: Self.notesSchema(rule, hnsw: hnsw))
        try await projects.insert([
            Document(id: 1, ["name": "garden"]), Document(id: 2, ["name": "kitchen"]),
        ])
        var rng = SeededGenerator(seed: 4)
        var documents: [Document] = []
        for i in Int64(1)...40 {
            let body: Value = .string(i % 2 == 0 ? "tomato seedlings" : "tomato soup")
            let project: Value = .int(i % 2 == 0 ? 1 : 2)
            documents.append(
                Document(
                    id: .int(i),
                    [
                        "body": body, "embedding": .vector(rng.unitVector(dimension: 4)),
                        "project": project,
                    ])
            )
        }
        try await notes.insert(documents)
        let query = rng.unitVector(dimension: 4)
        // Load the in-memory index before the delete, so the delete must reach it through the log.
        #expect(
            try await notes.search(Query().nearest(to: query, in: "embedding").limit(40)).count
                == 40)

        switch deleter {
        case .api: _ = try await projects.delete(id: 1)
        case .rawSQL: _ = try await db.execute("DELETE FROM projects WHERE id = 1")
        case .otherConnection:
            let other = try Database(path: path)
            _ = try await other.documents(named: "projects").delete(id: 1)
        }

        let evens: [DocumentID] = documents.map(\.id).filter { (id: DocumentID) -> Bool in
            if case .int(let v) = id { return v % 2 == 0 }
            return false
        }
        let log = try await db.query("SELECT DISTINCT op FROM notes_log WHERE seq > 40 ORDER BY op")
            .compactMap {
                $0.int64(at: 0)
            }
        let vectorHits = try await notes.search(
            Query().nearest(to: query, in: "embedding").limit(40)
        ).map(
            \.record.id)
        let textHits = try await notes.search(Query().matching(.typed("seedlings")).limit(40)).map(
            \.record.id)
        switch rule {
        case .cascade:
            #expect(log == [2])  // one delete per cascaded row
            #expect(Set(vectorHits) == Set(documents.map(\.id)).subtracting(evens))
            #expect(textHits.isEmpty)
        case .nullify:
            #expect(log == [1])  // one update per nullified row
            #expect(vectorHits.count == 40)
            #expect(Set(textHits) == Set(evens))
            #expect(try await notes.fetch(Query(Field("project") == nil)).map(\.id) == evens)
        case .deny:
            Issue.record("not a case of this test")
        }
        #expect(
            try await db.query("SELECT count(DISTINCT rid) FROM notes_log WHERE seq > 40")[0].int64(
                at: 0) == 20)
        #expect(try await notes.verify().isEmpty)
    }

    /// 30 authors (ids 1...30), 400 books with a random author (authors 25...30 have none).
    static func seededLibrary(in dir: TemporaryDirectory) async throws -> (
        Database, DocumentCollection, DocumentCollection, [Document]
    ) {
        let db = try Database(path: dir.path("lib.trove"))
        let authors = try await db.documents(
            "authors", schema: DocumentSchema(fields: [.text("name")]))
        let books = try await db.documents(
            "books",
            schema: DocumentSchema(fields: [
                .text("title"), .integer("year"),
                .reference("author", to: "authors", onDelete: .cascade, optional: true),
            ]))
        try await authors.insert(
            (1...30).map { Document(id: .int(Int64($0)), ["name": .string("author \($0)")]) })
        var rng = SeededGenerator(seed: 17)
        let documents = (1...400).map { i in
            Document(
                id: .int(Int64(i)),
                [
                    "title": .string("book \(i)"),
                    "year": .int(Int64.random(in: 1950...2020, using: &rng)),
                    "author": i % 37 == 0 ? .null : .int(Int64.random(in: 1...24, using: &rng)),
                ])
        }
        try await books.insert(documents)
        return (db, authors, books, documents)
    }

    @Test(
        "children of many parents in one call agree with grouping in Swift: filter, order within groups, limit per parent"
    )
    func childrenMatchOracle() async throws {
        let dir = try TemporaryDirectory()
        let (_, _, books, documents) = try await Self.seededLibrary(in: dir)
        var rng = SeededGenerator(seed: 3)
        for round in 0..<30 {
            let parents = (0..<Int.random(in: 1...12, using: &rng)).map { _ in
                DocumentID.int(Int64.random(in: 1...30, using: &rng))
            }
            let since = Int64.random(in: 1950...2010, using: &rng)
            let limit: Int? = round % 2 == 0 ? nil : Int.random(in: 0...4, using: &rng)
            var query = Query(Field("year") >= .int(since)).sorted(by: .descending("year"))
            query.limit = limit
            let got = try await books.children(of: parents, via: "author", query)
            #expect(Set(got.keys) == Set(parents))
            for parent in Set(parents) {
                var expected =
                    documents
                    .filter { $0["author"] == parent.value && $0["year"]!.intValue! >= since }
                    .sorted { ($0["year"]!.intValue!, $1.id) > ($1["year"]!.intValue!, $0.id) }
                if let limit { expected = Array(expected.prefix(limit)) }
                #expect(
                    got[parent]?.map(\.id) == expected.map(\.id),
                    "parent \(parent), since \(since), limit \(String(describing: limit))")
            }
        }
        #expect(try await books.children(of: [], via: "author").isEmpty)
        let projected = try await books.children(of: [1], via: "author", Query().select(["title"]))
        #expect(projected[1]?.allSatisfy { $0.fields.keys.sorted() == ["title"] } == true)
    }

    @Test("children(of:via:) refuses what it cannot answer with typed errors")
    func childrenErrors() async throws {
        let dir = try TemporaryDirectory()
        let (_, _, books, _) = try await Self.seededLibrary(in: dir)
        await #expect(throws: TroveError.invalidQuery("title is not a reference field of books")) {
            _ = try await books.children(of: [1], via: "title")
        }
        await #expect(
            throws: TroveError.typeMismatch(field: "author", expected: "int64 id", value: "x")
        ) {
            _ = try await books.children(of: ["x"], via: "author")
        }
        for query in [Query().offset(2), Query().nearest(to: [1, 0, 0, 0], in: "embedding")] {
            await #expect { _ = try await books.children(of: [1], via: "author", query) } throws: {
                if case TroveError.invalidQuery = $0 { true } else { false }
            }
        }
    }

    @Test("fetch(ids:) returns the documents in the order asked, each once, skipping missing ids")
    func fetchIDs() async throws {
        let dir = try TemporaryDirectory()
        let (_, authors, _, _) = try await Self.seededLibrary(in: dir)
        #expect(try await authors.fetch(ids: [3, 99, 1, 3, 2]).map(\.id) == [3, 1, 2])
        #expect(try await authors.fetch(ids: []).isEmpty)
        await #expect(
            throws: TroveError.typeMismatch(field: "id", expected: "int64 id", value: "a")
        ) {
            _ = try await authors.fetch(ids: ["a"])
        }
    }

    @Test("prefetch loads to-one references and to-many inverses with the fetch, from one snapshot")
    func prefetch() async throws {
        let dir = try TemporaryDirectory()
        let (db, authors, books, documents) = try await Self.seededLibrary(in: dir)
        let page = try await books.fetch(
            Query(Field("year") < 1980).sorted(by: .ascending("year")).limit(50),
            prefetching: [.referenced("author")])
        #expect(page.documents.count == 50)
        for book in page.documents {
            let author = page.referenced("author", of: book)
            #expect(author?.id == book["author"].flatMap { $0.intValue.map(DocumentID.int) })
            #expect(author?["name"] == book["author"]?.intValue.map { .string("author \($0)") })
        }

        let shelf = try await authors.fetch(
            Query(), prefetching: [.children("books", via: "author")])
        #expect(shelf.documents.count == 30)
        for author in shelf.documents {
            let expected = documents.filter { $0["author"] == author.id.value }.map(\.id)
            #expect(shelf.children("books", via: "author", of: author).map(\.id) == expected)
        }
        #expect(shelf.children("books", via: "author", of: shelf.documents[29]).isEmpty)

        // Inside a read transaction, the same calls on one snapshot.
        let (count, grouped) = try await db.read { r in
            (
                try r.documents("books").count(),
                try r.documents("books").children(of: [1, 2], via: "author")
            )
        }
        #expect(count == 400)
        #expect(grouped[1]?.map(\.id) == documents.filter { $0["author"] == 1 }.map(\.id))

        for (query, prefetch) in [
            (Query(), Prefetch.referenced("title")),
            (Query().select(["title"]), .referenced("author")),
            (Query(), .children("authors", via: "name")),
        ] {
            await #expect { _ = try await books.fetch(query, prefetching: [prefetch]) } throws: {
                if case TroveError.invalidQuery = $0 { true } else { false }
            }
        }
    }

    @Test("prefetch over a self reference: each folder's parent and children")
    func prefetchSelfReference() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("tree.trove"))
        let folders = try await db.documents(
            "folders",
            schema: DocumentSchema(
                id: .uuid,
                fields: [
                    .text("name"),
                    .reference(
                        "parent", to: "folders", id: .uuid, onDelete: .cascade, optional: true),
                ]))
        let ids = (0..<4).map { _ in UUID() }
        try await folders.insert([
            Document(id: .uuid(ids[0]), ["name": "/"]),
            Document(id: .uuid(ids[1]), ["name": "a", "parent": .string(ids[0].uuidString)]),
            Document(id: .uuid(ids[2]), ["name": "b", "parent": .string(ids[0].uuidString)]),
            Document(id: .uuid(ids[3]), ["name": "a1", "parent": .string(ids[1].uuidString)]),
        ])
        let all = try await folders.fetch(
            Query().sorted(by: .ascending("name")),
            prefetching: [.referenced("parent"), .children("folders", via: "parent")])
        let byName = Dictionary(
            uniqueKeysWithValues: all.documents.map { ($0["name"]!.stringValue!, $0) })
        #expect(all.referenced("parent", of: byName["/"]!) == nil)
        #expect(all.referenced("parent", of: byName["a1"]!)?["name"] == "a")
        #expect(
            Set(all.children("folders", via: "parent", of: byName["/"]!).map { $0["name"]! })
                == ["a", "b"])
        #expect(all.children("folders", via: "parent", of: byName["b"]!).isEmpty)
    }
}
