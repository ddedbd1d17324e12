import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("Typed metadata filters")
struct FilterTests {
    func makeItems() async throws -> SearchCollection {
        let items = try await makeCollection(dimension: 2)
        let metas = [
            #"{"lang":"en","year":2019,"tags":["todo","home"],"urgent":true}"#,
            #"{"lang":"de","year":2021,"tags":["work"]}"#,
            #"{"lang":"en","year":2023,"tags":["todo"],"author":{"name":"Ann"}}"#,
            #"{"lang":"fr","year":2024,"odd\"key":1}"#,
        ]
        try await items.insert(
            metas.enumerated().map { i, m in
                VectorEntry(
                    id: .int(Int64(i + 1)), content: "note number \(i + 1)",
                    source: i < 2 ? "a" : "b", metadata: m,
                    vector: [1, Float(i)])
            })
        return items
    }

    /// A path inside the metadata JSON object.
    func meta(_ key: String) -> Field {
        Field("metadata", path: key.hasPrefix("$") ? key : "$.\(key)")
    }

    func ids(_ items: SearchCollection, _ predicates: [Filter], source: String? = nil) async throws
        -> Set<DocumentID>
    {
        let filter = predicates.reduce(source.map(Filter.source) ?? .all, &&)
        let byVector = Set(
            try await items.search(vector: [1, 0], where: filter, limit: 100).map(\.id))
        let byText = Set(
            try await items.search(Query(filter).matching(.typed("note")).limit(100)).map(\.id))
        let byBoth = Set(
            try await items.search(
                Query(filter).nearest(to: [1, 0], in: "embedding").matching(.typed("note")).limit(
                    100)
            ).map(\.id))
        #expect(byVector == byText)
        #expect(byVector == byBoth)
        return byVector
    }

    @Test("each predicate, alone and combined, filters all three searches the same way")
    func predicates() async throws {
        let items = try await makeItems()
        #expect(try await ids(items, [meta("lang") == "en"]) == [1, 3])
        #expect(try await ids(items, [meta("lang") != "en"]) == [2, 4])
        #expect(try await ids(items, [meta("year") > 2020]) == [2, 3, 4])
        #expect(try await ids(items, [meta("year") >= 2021, meta("year") < 2024]) == [2, 3])
        #expect(try await ids(items, [meta("year") <= 2019]) == [1])
        #expect(try await ids(items, [meta("tags").arrayContains("todo")]) == [1, 3])
        #expect(try await ids(items, [meta("author").exists]) == [3])
        #expect(try await ids(items, [meta("$.author.name") == "Ann"]) == [3])
        #expect(try await ids(items, [meta("urgent") == true]) == [1])
        #expect(try await ids(items, [meta("lang").isIn(["de", "fr"])]) == [2, 4])
        #expect(try await ids(items, [meta("lang").isIn([])]).isEmpty)
        #expect(try await ids(items, [meta("lang") == "en"], source: "b") == [3])
        // Hostile values are data, not SQL.
        #expect(try await ids(items, [meta("lang") == "x') OR 1=1 --"]).isEmpty)
    }

    @Test("predicates combine with a SQL fragment, and the text-in API takes a filter")
    func combined() async throws {
        let items = try await makeItems()
        let filter = .sql("id > ?", [1]) && meta("lang") == "en"
        #expect(try await items.search(vector: [1, 0], where: filter, limit: 10).map(\.id) == [3])
        let db = try Database()
        let notes = try await SearchCollection("notes", in: db, embedder: HashingEmbedder())
        try await notes.insert([
            VectorEntry(content: "oat milk", metadata: #"{"k":1}"#),
            VectorEntry(content: "oat bread", metadata: #"{"k":2}"#),
        ])
        let hits = try await notes.search("oat", where: meta("k") == 2)
        #expect(hits.map(\.record.content) == ["oat bread"])
    }
}
