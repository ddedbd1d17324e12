import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("VectorStore facade")
struct VectorStoreTests {
    @Test("the SQLiteVecKit-shaped API end to end")
    func endToEnd() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("chunks.sqlite")
        let store = try VectorStore(path: path, dimension: 3)
        #expect(store.dimension == 3)
        #expect(store.metric == .cosine)
        #expect(store.tableName == "chunks")
        try await store.insert(id: 1, content: "oat milk and bread", source: "shop", vector: [1, 0, 0])
        try await store.insert(id: 2, content: "dentist tuesday", source: "cal", metadata: #"{"h":10}"#, vector: [0, 1, 0] as [Double])
        try await store.insert(VectorEntry(id: 3, content: "river walk", source: "cal", vector: [0, 0, 1]))
        let auto = try await store.insert(content: "auto id", source: "x", vector: [1, 1, 0])
        let auto2 = try await store.insert(content: "auto id two", source: "x", vector: [1, 1, 1] as [Double])
        #expect(auto == 4 && auto2 == 5)
        try await store.insertBatch([VectorEntry(id: 10, content: "batch", source: "b", vector: [0, 1, 1])])
        #expect(try await store.count() == 6)
        #expect(try await store.count(source: "cal") == 2)
        #expect(try await store.contains(id: 10))
        #expect(try await store.fetch(id: 2)?.metadata == #"{"h":10}"#)

        try await store.update(VectorEntry(id: 10, content: "batch updated", source: "b", vector: [0, 1, 1]))
        await #expect(throws: TroveError.rowNotFound(id: 99)) {
            try await store.update(VectorEntry(id: 99, content: "x", vector: [1, 0, 0]))
        }
        try await store.upsert(VectorEntry(id: 11, content: "upserted", source: "b", vector: [1, 0, 1]))

        #expect(try await store.search(vector: [1, 0, 0], topK: 1).first?.id == 1)
        #expect(try await store.search(vector: [0, 1, 0] as [Double], topK: 1, source: "cal").first?.id == 2)
        #expect(try await store.search(vector: [0, 1, 0], topK: 5, where: "json_extract(metadata, '$.h') = ?", bindings: [10]).map(\.id) == [2])
        #expect(try await store.searchText("dentist").first?.id == 2)
        #expect(try await store.collection.searchText(.typed("dentist?")).first?.id == 2)
        let hybrid = try await store.searchHybrid(text: "river", vector: [0, 0, 1], topK: 2)
        #expect(hybrid.first?.id == 3)
        #expect(hybrid.first?.vectorRank == 1 && hybrid.first?.textRank == 1)
        #expect(try await store.searchHybrid(text: "river", vector: [0, 0, 1] as [Double], topK: 1).first?.id == 3)
        #expect(try await store.collection.searchHybrid(text: .typed("river!"), vector: [0, 0, 1], topK: 1).first?.id == 3)

        try await store.execute("CREATE TABLE notes_extra(id INTEGER, note TEXT)")
        #expect(try await store.execute("INSERT INTO notes_extra VALUES (?, ?)", bindings: [1, "joined"]) == 1)
        let rows = try await store.query("SELECT c.content, n.note FROM chunks c JOIN notes_extra n ON n.id = c.id")
        #expect(rows.first?.string("note") == "joined")

        #expect(try await store.delete(id: 1))
        #expect(try await store.delete(source: "x") == 2)
        #expect(try await store.deleteAll() == 4)
        #expect(try await store.count() == 0)
    }

    @Test("reopen keeps rows; another configuration throws schemaMismatch")
    func reopen() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("chunks.sqlite")
        do {
            let store = try VectorStore(url: url, dimension: 2, metric: .l2, tableName: "docs")
            try await store.insert(id: 1, content: "kept", source: "s", vector: [1, 2])
        }
        let store = try VectorStore(url: url, dimension: 2, metric: .l2, tableName: "docs")
        #expect(try await store.fetch(id: 1)?.content == "kept")
        #expect(throws: TroveError.self) { try VectorStore(url: url, dimension: 2, metric: .cosine, tableName: "docs") }
        #expect(throws: TroveError.self) { try VectorStore(url: url, dimension: 2, metric: .l2, tableName: "docs", lexicalSearch: false) }
        #expect(throws: TroveError.invalidDimension(0)) { try VectorStore(path: nil, dimension: 0) }
        #expect(throws: TroveError.self) { try VectorStore(path: nil, dimension: 2, tableName: "bad name") }
        // A second table in the same file.
        let other = try VectorStore(url: url, dimension: 4, tableName: "other")
        #expect(try await other.count() == 0)
        #expect(try await store.count() == 1)
    }
}
