import Foundation
import Testing
import Trove
import TroveTestSupport

/// Every deprecated search overload still compiles and gives exactly what its replacement gives.
/// This is the one file in the package that calls them, so the one with deprecation warnings.
@Suite("Deprecated search overloads forward to the kept forms")
struct DeprecatedSearchTests {
    static let dimension = 8
    static let words = ["apple", "banana", "cherry", "plum", "pear", "fig"]

    /// Seeded rows over three sources, with a page number in metadata and two fruit words each.
    func makeItems(_ database: Database, index: IndexKind = .flat) async throws -> Collection {
        let items = try await database.collection(
            "items", configuration: CollectionConfiguration(dimension: Self.dimension, index: index))
        var rng = SeededGenerator(seed: 12)
        try await items.insertBatch((1...300).map { i in
            let words = (0..<2).map { _ in Self.words.randomElement(using: &rng)! }
            return VectorEntry(id: Int64(i), content: words.joined(separator: " ") + " row \(i)",
                               source: ["a.pdf", "b.pdf", "c.md"][i % 3], metadata: #"{"page":\#(i % 17)}"#,
                               vector: rng.unitVector(dimension: Self.dimension))
        })
        return items
    }

    static let sql = "json_extract(metadata, '$.page') <= ?"
    static let filter = SearchFilter(source: "a.pdf", sql: sql, bindings: [8])

    func query(_ seed: UInt64) -> [Float] {
        var rng = SeededGenerator(seed: seed)
        return rng.unitVector(dimension: Self.dimension)
    }

    @Test("vector search: source/where/bindings, [Double], and array literals")
    func vectorSearch() async throws {
        let items = try await makeItems(Database())
        let q = query(1)
        let kept = try await items.search(vector: q, topK: 7, filter: Self.filter)
        #expect(kept.count == 7 && kept.allSatisfy { $0.source == "a.pdf" })
        #expect(try await items.search(vector: q, topK: 7, source: "a.pdf", where: Self.sql, bindings: [8]) == kept)
        #expect(try await items.search(vector: q.map(Double.init), topK: 7, source: "a.pdf", where: Self.sql,
                                       bindings: [8]) == kept)
        #expect(try await items.search(vector: q, topK: 7, source: "b.pdf")
                == (try await items.search(vector: q, topK: 7, filter: SearchFilter(source: "b.pdf"))))
        // A literal with a deprecated label used to pick the [Float] overload; it still compiles.
        #expect(try await items.search(vector: [1, 0, 0, 0, 0, 0, 0, 0], source: "c.md")
                == (try await items.search(vector: [1, 0, 0, 0, 0, 0, 0, 0], filter: SearchFilter(source: "c.md"))))
        let doubles: [Double] = q.map(Double.init)
        #expect(try await items.search(vector: doubles) == (try await items.search(vector: q)))
    }

    @Test("text search: source/where/bindings and FTS5 strings")
    func textSearch() async throws {
        let items = try await makeItems(Database())
        let snippet = SnippetStyle()
        let kept = try await items.searchText(.fts5("apple OR plum"), topK: 9, filter: Self.filter, snippet: snippet)
        #expect(!kept.isEmpty && kept.allSatisfy { $0.snippet != nil })
        #expect(try await items.searchText(.fts5("apple OR plum"), topK: 9, source: "a.pdf", where: Self.sql,
                                           bindings: [8], snippet: snippet) == kept)
        let fts5: String = "apple OR plum"
        #expect(try await items.searchText(fts5, topK: 9, source: "a.pdf", where: Self.sql, bindings: [8],
                                           snippet: snippet) == kept)
        #expect(try await items.searchText(fts5) == (try await items.searchText(.fts5(fts5))))
        #expect(try await items.searchText(.typed("cherry?"), source: "c.md")
                == (try await items.searchText(.typed("cherry?"), filter: SearchFilter(source: "c.md"))))
        await #expect(throws: TroveError.self) { try await items.searchText(String("apple AND ("), source: "a.pdf") }
    }

    @Test("hybrid search: source/where/bindings, FTS5 strings and [Double]")
    func hybridSearch() async throws {
        let items = try await makeItems(Database())
        let q = query(2)
        let fusion = Fusion(k: 20, textWeight: 0.5)
        let kept = try await items.searchHybrid(text: .fts5("pear"), vector: q, topK: 6, filter: Self.filter,
                                                fusion: fusion, snippet: SnippetStyle())
        #expect(kept.count == 6 && kept.contains { $0.textRank != nil })
        #expect(try await items.searchHybrid(text: .fts5("pear"), vector: q, topK: 6, source: "a.pdf", where: Self.sql,
                                             bindings: [8], fusion: fusion, snippet: SnippetStyle()) == kept)
        let text: String = "pear"
        #expect(try await items.searchHybrid(text: text, vector: q, topK: 6, source: "a.pdf", where: Self.sql,
                                             bindings: [8], fusion: fusion, snippet: SnippetStyle()) == kept)
        #expect(try await items.searchHybrid(text: .fts5("pear"), vector: q.map(Double.init), topK: 6, source: "a.pdf",
                                             where: Self.sql, bindings: [8], fusion: fusion,
                                             snippet: SnippetStyle()) == kept)
        #expect(try await items.searchHybrid(text: text, vector: q)
                == (try await items.searchHybrid(text: .fts5(text), vector: q)))
    }

    @Test("text-in search: source/where/bindings, in every mode")
    func textIn() async throws {
        let database = try Database()
        let notes = try await database.collection("notes", embedder: HashingEmbedder())
        try await notes.add((1...40).map {
            TextEntry(text: "\(Self.words[$0 % 6]) note \($0)", source: $0 % 2 == 0 ? "even" : "odd", metadata: #"{"n":\#($0)}"#)
        })
        for mode in [SearchMode.hybrid, .vector, .text] {
            let kept = try await notes.search("plum note", topK: 5, mode: mode, filter: SearchFilter(
                source: "even", sql: "json_extract(metadata, '$.n') > ?", bindings: [10]))
            #expect(!kept.isEmpty && kept.allSatisfy { $0.source == "even" })
            #expect(try await notes.search("plum note", topK: 5, mode: mode, source: "even",
                                           where: "json_extract(metadata, '$.n') > ?", bindings: [10]) == kept)
        }
    }

    @Test("search(...exact:), searchExplained and explain with source/where/bindings (HNSW)")
    func exactExplainedAndPlans() async throws {
        let items = try await makeItems(Database(), index: .hnsw(m: 8, efConstruction: 40))
        let q = query(3)
        for exact in [false, true] {
            let kept = try await items.searchExplained(vector: q, topK: 10, filter: Self.filter, exact: exact)
            #expect(kept.results.count == 10)
            #expect(try await items.search(vector: q, topK: 10, source: "a.pdf", where: Self.sql, bindings: [8],
                                           exact: exact) == kept.results)
            #expect(try await items.search(vector: q, topK: 10, filter: Self.filter, exact: exact) == kept.results)
            #expect(try await items.searchExplained(vector: q, topK: 10, source: "a.pdf", where: Self.sql, bindings: [8],
                                                    exact: exact) == kept)
            #expect(try await items.explain(topK: 10, source: "a.pdf", where: Self.sql, bindings: [8], exact: exact)
                    == (try await items.explain(topK: 10, filter: Self.filter, exact: exact)))
        }
        let unfiltered = try await items.searchExplained(vector: q, topK: 10, efSearch: 200)
        #expect(unfiltered.plan.strategy == .graph)
        #expect(try await items.searchExplained(vector: q, topK: 10, source: nil, efSearch: 200) == unfiltered)
        #expect(try await items.search(vector: q, topK: 10, exact: true)
                == (try await items.searchExplained(vector: q, topK: 10, exact: true).results))
    }

    @Test("insert with a [Double] vector")
    func insertDouble() async throws {
        let items = try await makeCollection(dimension: 2, metric: .l2)
        let id = try await items.insert(content: "x", source: "s", vector: [Double](arrayLiteral: 0.25, 0.5))
        #expect(try await items.fetch(id: id)?.vector == [0.25, 0.5])
    }

    @Test("VectorStore's TextQuery overloads")
    func vectorStoreTextQuery() async throws {
        let store = try VectorStore(path: nil, dimension: 2)
        try await store.insertBatch([VectorEntry(id: 1, content: "oat milk", source: "a", vector: [1, 0]),
                                     VectorEntry(id: 2, content: "milk (2 l)", source: "b", vector: [0, 1])])
        #expect(try await store.searchText(.typed("milk (2"), source: "b")
                == (try await store.collection.searchText(.typed("milk (2"), topK: 5, filter: SearchFilter(source: "b"))))
        #expect(try await store.searchHybrid(text: .typed("milk"), vector: [1, 0], where: "id > ?", bindings: [0])
                == (try await store.collection.searchHybrid(text: .typed("milk"), vector: [1, 0], topK: 5,
                                                            filter: SearchFilter(sql: "id > ?", bindings: [0]))))
    }
}
