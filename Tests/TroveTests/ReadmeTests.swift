import Foundation
import Testing
import Trove
import TroveTestSupport

/// The README's quick start, as written (only the file path differs), so it stays correct.
@Suite("README")
struct ReadmeTests {
    @Test("the quick start runs as written")
    func quickStart() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("notes.trove"))
        let notes = try await database.collection("notes", dimension: 3)

        try await notes.insert([
            VectorEntry(id: 1, content: "Buy oat milk and bread", source: "groceries.md", vector: [0.9, 0.1, 0.0]),
            VectorEntry(id: 2, content: "Dentist on Tuesday at 10", source: "calendar",
                        metadata: #"{"day": "tue"}"#, vector: [0.0, 0.2, 0.9]),
            VectorEntry(id: 3, content: "Call the plumber about the sink", source: "home.md", vector: [0.1, 0.9, 0.1]),
        ])

        let near = try await notes.search(vector: [0.1, 0.1, 0.9], topK: 2)
        #expect(near.map(\.id) == [2, 3])
        let words = try await notes.search(Query().matching(.typed("dentist?")))
        #expect(words.map(\.id) == [2])
        let both = try await notes.search(Query().nearest(to: [0.1, 0.8, 0.2], in: "embedding").matching(.typed("plumber")).limit(2))
        #expect(both.first?.id == 3)
        #expect(both.first?.vectorRank == 1 && both.first?.textRank == 1)
    }

    @Test("the search collections' query snippets run as written")
    func searchCollectionTour() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("store.trove"))
        let docs = try await database.collection("docs", dimension: 3)
        try await database.execute("CREATE TABLE audit(note TEXT)")
        try await docs.insert((1...12).map { i in
            VectorEntry(id: Int64(i), content: "router page \(i)", source: i % 2 == 0 ? "a.pdf" : "b.md",
                        metadata: #"{"page": \#(i)}"#, vector: [Float(i), 1, 0])
        })
        let q: [Float] = [7, 1, 0]
        let userInput = "router"
        let hits = try await docs.search(Query(Field("source") == "a.pdf" && Field("metadata", path: "$.page") <= 10)
            .nearest(to: q, in: "embedding").matching(.typed(userInput)).limit(10))
        #expect(Set(hits.map(\.id)) == [2, 4, 6, 8, 10])
        try await docs.update(VectorEntry(id: 4, content: "router page 4", source: "a.pdf", metadata: #"{"page": 4}"#, vector: [4, 1, 0]))
        let recent = try await docs.page(Query(Field("source") == "a.pdf").sorted(by: .descending("updated_at")).limit(20))
        #expect(recent.documents.first?.id == 4 && recent.documents.count == 6)
        let perSource = try await docs.aggregate([.count(), .maximum("updated_at")], groupBy: [Field("source")])
        #expect(perSource.map { $0.values["count"] } == [6, 6])
        try await docs.patch(7, [Field("metadata", path: "$.reviewed"): true], ifVersion: 1)
        try await database.write { tx in
            _ = try tx.documents("docs").delete(ids: [7])
            try tx.execute("INSERT INTO audit(note) VALUES (?)", ["deleted 7"])
        }
        #expect(try await docs.count() == 11)
    }

    @Test("the API tour's document snippets run as written")
    func documentTour() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("store.trove"))
        let items = try await database.documents("items", schema: DocumentSchema(
            id: .int64,
            fields: [.text("title"), .text("category"), .integer("year"), .real("score"),
                     .json("tags", optional: true), .vector("embedding", dimension: 4, optional: true)],
            indexes: [IndexDefinition([Field("category"), Field("year")])],
            fullText: FullTextDefinition(fields: ["title"])))
        let again = try await database.documents(named: "items")
        #expect(again.schema == items.schema)

        try await items.insert([Document(id: 1, ["title": "Dune", "category": "sf", "year": 1965, "score": 0.9, "tags": ["x"],
                                                 "embedding": [1, 0, 0, 0]])])
        let documents = [Document(id: 2, ["title": "Hyperion space opera", "category": "sf", "year": 1989, "score": 0.8,
                                          "embedding": [0.9, 0.1, 0, 0]]),
                         Document(id: 3, ["title": "Emma", "category": "novel", "year": 1815, "score": 0.7])]
        try await items.upsert(documents)
        let doc = try #require(try await items.fetch(id: 3))
        try await items.update(doc, ifVersion: doc.version)
        try await items.patch(1, [Field("score"): 0.95, Field("tags", path: "$[0]"): "classic"])
        #expect(try await items.fetch(id: 1)?["tags"] == ["classic"])
        try await items.insert(Document(id: 9, ["title": "Old", "category": "x", "year": 1900, "score": 0]))
        try await items.delete(id: 9)
        #expect(try await items.delete(where: Field("year") < 1850) == 1)

        let query = Query(Field("category") == "sf" && (Field("year") >= 1960 || Field("tags").arrayContains("classic")))
            .sorted(by: .descending("score"), .ascending("title")).limit(1)
        var page = try await items.page(query)
        var seen = page.documents.map(\.id)
        while let next = page.next {
            page = try await items.page(query.after(next))
            seen += page.documents.map(\.id)
        }
        #expect(seen == [1, 2])
        let titles = try await items.fetch(query.select(["title"]))
        #expect(titles.first?.fields.keys.sorted() == ["title"])
        #expect(try await items.explain(query).contains { $0.contains("items_i0") })

        let perCategory = try await items.aggregate([.count(), .average("score")], groupBy: [Field("category")],
                                                    where: Field("year") >= 1900)
        #expect(perCategory.map { $0.values["count"] } == [.int(2)])

        let queryVector: [Float] = [1, 0.05, 0, 0]
        let hits = try await items.search(Query(Field("year") >= 1900)
            .nearest(to: queryVector, in: "embedding").matching(.typed("space opera")).limit(10))
        #expect(Set(hits.map(\.document.id)) == [1, 2])
        #expect(hits.first?.document.id == 2, "both legs rank Hyperion")

        let accounts = try await database.documents("accounts", schema: DocumentSchema(id: .string, fields: [.integer("balance")]))
        try await accounts.insert([Document(id: "a", ["balance": 100]), Document(id: "b", ["balance": 20])])
        try await database.execute("CREATE TABLE audit(note TEXT)")
        try await database.write { tx in
            let accounts = try tx.documents("accounts")
            try accounts.patch("a", [Field("balance"): 70])
            try accounts.patch("b", [Field("balance"): 50])
            try tx.execute("INSERT INTO audit(note) VALUES (?)", ["a -> b: 30"])
        }
        let total = try await database.read { r in try r.documents("accounts").aggregate([.sum("balance")]) }
        #expect(total.first?.values["sum_balance"] == .int(120))
    }
}
