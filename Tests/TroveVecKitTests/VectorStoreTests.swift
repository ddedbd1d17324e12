import Foundation
import Testing
import TroveTestSupport
import TroveVecKit

@Suite("VectorStore")
struct VectorStoreTests {
    @Test("the SQLiteVecKit API end to end: writes, reads, searches, raw SQL, deletes")
    func endToEnd() async throws {
        let dir = try TemporaryDirectory()
        let store = try VectorStore(dbPath: dir.path("chunks.sqlite"), dimension: 3)
        #expect(
            store.dimension == 3 && store.distanceMetric == .cosine && store.tableName == "chunks")
        try await store.insert(
            id: 1, content: "oat milk and bread", source: "shop", vector: [1, 0, 0])
        try await store.insert(
            id: 2, content: "dentist tuesday", source: "cal", metadata: #"{"h":10}"#,
            vector: [0, 1, 0] as [Double])
        try await store.insert(
            VectorEntry(id: 3, content: "river walk", source: "cal", vector: [0, 0, 1]))
        let auto = try await store.insert(content: "auto id", source: "x", vector: [1, 1, 0])
        let auto2 = try await store.insert(
            content: "auto id two", source: "x", vector: [1, 1, 1] as [Double])
        #expect(auto == 4 && auto2 == 5)
        try await store.insertBatch([
            VectorEntry(id: 10, content: "batch", source: "b", vector: [0, 1, 1])
        ])
        #expect(try await store.count() == 6)
        #expect(try await store.count(source: "cal") == 2)
        #expect(try await store.contains(id: 10))
        #expect(try await !store.contains(id: 11))
        #expect(try await store.fetch(id: 2)?.metadata == #"{"h":10}"#)
        #expect(try await store.fetch(id: 2)?.vector == [0, 1, 0])

        try await store.update(
            VectorEntry(id: 10, content: "batch updated", source: "b", vector: [0, 1, 1]))
        #expect(try await store.fetch(id: 10)?.content == "batch updated")
        // An update replaces the whole row: no metadata clears the stored one.
        try await store.update(
            VectorEntry(id: 2, content: "dentist tuesday", source: "cal", vector: [0, 1, 0]))
        #expect(try await store.fetch(id: 2)?.metadata == nil)
        try await store.update(
            VectorEntry(
                id: 2, content: "dentist tuesday", source: "cal", metadata: #"{"h":10}"#,
                vector: [0, 1, 0]))
        let missing = await #expect(throws: SQLiteError.self) {
            try await store.update(
                VectorEntry(id: 99, content: "x", source: "", vector: [1, 0, 0]))
        }
        guard case .rowNotFound(99)? = missing else {
            Issue.record("got \(String(describing: missing))")
            return
        }
        try await store.upsert(
            VectorEntry(id: 11, content: "upserted", source: "b", vector: [1, 0, 1]))
        try await store.upsert(
            VectorEntry(id: 11, content: "upserted twice", source: "b", vector: [1, 0, 1]))
        #expect(try await store.fetch(id: 11)?.content == "upserted twice")

        #expect(try await store.search(vector: [1, 0, 0], topK: 1).first?.id == 1)
        #expect(
            try await store.search(vector: [0, 1, 0] as [Double], topK: 1, source: "cal").first?.id
                == 2)
        let filtered = try await store.search(
            vector: [0, 1, 0], topK: 5, where: "json_extract(metadata, '$.h') = ?",
            bindings: [.int(10)])
        #expect(filtered.map(\.id) == [2])
        #expect(try await store.searchText("dentist").first?.id == 2)
        let hybrid = try await store.searchHybrid(text: "river", vector: [0, 0, 1], topK: 2)
        #expect(hybrid.first?.id == 3)
        #expect(hybrid.first?.vectorRank == 1 && hybrid.first?.textRank == 1)
        #expect(hybrid.count == 2 && hybrid.last?.textRank == nil)
        #expect(
            try await store.searchHybrid(text: "river", vector: [0, 0, 1] as [Double], topK: 1)
                .first?.id == 3)

        try await store.execute("CREATE TABLE notes_extra(id INTEGER, note TEXT)")
        #expect(
            try await store.execute(
                "INSERT INTO notes_extra VALUES (?, ?)", bindings: [.int(1), .text("joined")]) == 1)
        let rows = try await store.query(
            "SELECT c.content, n.note FROM chunks c JOIN notes_extra n ON n.id = c.id")
        #expect(rows.first?.text("note") == "joined")
        #expect(rows.first?.columnNames == ["content", "note"])
        #expect(rows.first?["note"] == .text("joined"))

        #expect(try await store.delete(id: 1))
        #expect(try await !store.delete(id: 1))
        #expect(try await store.delete(source: "x") == 2)
        #expect(try await store.deleteAll() == 4)
        #expect(try await store.count() == 0)
    }

    @Test(
        "reopening keeps rows; another metric or lexical setting is schemaMismatch; a second table shares the file"
    )
    func reopen() async throws {
        let dir = try TemporaryDirectory()
        let url = dir.url.appendingPathComponent("chunks.sqlite")
        do {
            let store = try VectorStore(
                dbURL: url, dimension: 2, distanceMetric: .l2, tableName: "docs")
            try await store.insert(id: 1, content: "kept", source: "s", vector: [1, 2])
        }
        let store = try VectorStore(
            dbURL: url, dimension: 2, distanceMetric: .l2, tableName: "docs")
        #expect(try await store.fetch(id: 1)?.content == "kept")
        for attempt in [
            {
                try VectorStore(
                    dbURL: url, dimension: 2, distanceMetric: .cosine, tableName: "docs")
            },
            { try VectorStore(dbURL: url, dimension: 3, distanceMetric: .l2, tableName: "docs") },
            {
                try VectorStore(
                    dbURL: url, dimension: 2, distanceMetric: .l2, tableName: "docs",
                    lexicalSearch: false)
            },
        ] {
            let error = #expect(throws: SQLiteError.self) { _ = try attempt() }
            guard case .schemaMismatch? = error else {
                Issue.record("got \(String(describing: error))")
                continue
            }
        }
        let other = try VectorStore(dbURL: url, dimension: 4, tableName: "other")
        #expect(try await other.count() == 0)
        #expect(try await store.count() == 1)
        // A metadata limit is this store's rule, not the file's: another one opens the same table.
        #expect(
            try await VectorStore(
                dbURL: url, dimension: 2, distanceMetric: .l2, tableName: "docs",
                metadataByteLimit: 4
            ).count() == 1)
    }

    @Test("l2 distances are Euclidean, cosine distances 1 - cos")
    func distances() async throws {
        let l2 = try VectorStore(dbPath: ":memory:", dimension: 2, distanceMetric: .l2)
        try await l2.insert(id: 1, content: "a", source: "", vector: [3, 4])
        #expect(try await l2.search(vector: [0, 0], topK: 1).first?.distance == 5)
        let cosine = try VectorStore(dbPath: ":memory:", dimension: 2)
        try await cosine.insert(id: 1, content: "a", source: "", vector: [0, 2])
        let distance = try #require(
            try await cosine.search(vector: [1, 0], topK: 1).first?.distance)
        #expect(abs(distance - 1) < 1e-6)
    }

    @Test("metadata is any string, filterable with SQL")
    func freeFormMetadata() async throws {
        let store = try VectorStore(dbPath: ":memory:", dimension: 2)
        try await store.insert(
            id: 1, content: "a", source: "s", metadata: "plain words, not JSON", vector: [1, 0])
        try await store.insert(id: 2, content: "b", source: "s", metadata: "", vector: [0, 1])
        #expect(try await store.fetch(id: 1)?.metadata == "plain words, not JSON")
        #expect(try await store.fetch(id: 2)?.metadata == "")
        let hits = try await store.search(
            vector: [0, 1], where: "metadata LIKE ?", bindings: [.text("plain%")])
        #expect(hits.map(\.id) == [1])
        #expect(hits.first?.metadata == "plain words, not JSON")
    }

    @Test(
        "distance is a column of where: fragments: vector distance, or the BM25 score in text search"
    )
    func distanceInFragments() async throws {
        let store = try VectorStore(dbPath: ":memory:", dimension: 2, distanceMetric: .l2)
        for id in 1...6 {
            try await store.insert(
                id: id, content: "stone \(String(repeating: "stone ", count: id))", source: "s",
                vector: [Float(id), 0])
        }
        let near = try await store.search(
            vector: [0, 0], topK: 10, where: "distance < ?", bindings: [.double(3.5)])
        #expect(near.map(\.id) == [1, 2, 3])
        #expect(near.map(\.distance) == [1, 2, 3])
        let text = try await store.searchText("stone", topK: 10)
        #expect(text.count == 6 && text.allSatisfy { $0.distance < 0 })
        let cut = text[2].distance
        let best = try await store.searchText(
            "stone", topK: 10, where: "distance <= ? AND c.content LIKE ?",
            bindings: [.double(cut), .text("stone%")])
        #expect(best.map(\.id) == text.prefix(3).map(\.id))
        // Hybrid: each list filtered with its own distance (l2 here, BM25 there).
        let hybrid = try await store.searchHybrid(
            text: "stone", vector: [0, 0], topK: 10, where: "distance < ?",
            bindings: [.double(2.5)])
        #expect(Set(hybrid.compactMap { $0.vectorRank == nil ? nil : $0.id }) == [1, 2])
        #expect(hybrid.filter { $0.textRank != nil }.count == 6)
    }

    /// The first condition is the engine's filter; the second reads `distance`, so the store
    /// ranks deeper until enough rows pass.
    @Test(
        "where: filters before ranking: top k of the passing rows, however deep they rank",
        arguments: [1, 5, 40], ["id % 50 = ?", "id % 50 = ? AND distance >= 0"])
    func filterBeforeRanking(topK: Int, condition: String) async throws {
        var rng = SeededGenerator(seed: 24)
        let store = try VectorStore(dbPath: ":memory:", dimension: 8)
        let entries = (1...600).map { id in
            VectorEntry(
                id: id, content: "row \(id)", source: id % 2 == 0 ? "even" : "odd",
                vector: rng.unitVector(dimension: 8)
            )
        }
        try await store.insertBatch(entries)
        let query = rng.unitVector(dimension: 8)
        let hits = try await store.search(
            vector: query, topK: topK, source: "even", where: condition, bindings: [.int(0)])
        // The oracle: every passing row's distance, sorted.
        let expected = entries.filter { $0.id % 50 == 0 }
            .map { (id: $0.id, distance: cosineDistance(query, $0.vector)) }
            .sorted { $0.distance < $1.distance }
            .prefix(topK)
        #expect(hits.map(\.id) == expected.map(\.id))
        #expect(hits.count == min(topK, 12))
    }

    @Test("hybrid with a fragment every row passes equals hybrid without one")
    func hybridFragmentConsistency() async throws {
        var rng = SeededGenerator(seed: 7)
        let store = try VectorStore(dbPath: ":memory:", dimension: 8)
        let words = ["oat", "milk", "bread", "river", "stone", "walk"]
        try await store.insertBatch(
            (1...120).map { id in
                VectorEntry(
                    id: id, content: "\(words[id % 6]) \(words[(id / 6) % 6])", source: "s",
                    vector: rng.unitVector(dimension: 8))
            })
        let query = rng.unitVector(dimension: 8)
        let plain = try await store.searchHybrid(text: "milk OR river", vector: query, topK: 10)
        let fragment = try await store.searchHybrid(
            text: "milk OR river", vector: query, topK: 10, where: "1 = 1")
        #expect(plain == fragment)
        #expect(plain.count == 10)
    }

    @Test("raw SQL writes to the store's table reach its text and vector search")
    func rawWritesReachIndexes() async throws {
        let store = try VectorStore(dbPath: ":memory:", dimension: 2)
        try await store.insert(id: 1, content: "oat milk", source: "s", vector: [1, 0])
        #expect(
            try await store.execute("UPDATE chunks SET content = 'zebra crossing' WHERE id = 1")
                == 1)
        #expect(try await store.searchText("zebra").map(\.id) == [1])
        #expect(try await store.searchText("oat").isEmpty)
        try await store.execute("DELETE FROM chunks WHERE id = 1")
        #expect(try await store.search(vector: [1, 0]).isEmpty)
    }

    private func cosineDistance(_ a: [Float], _ b: [Float]) -> Float {
        let dot = zip(a, b).map(*).reduce(0, +)
        let norms = (a.map { $0 * $0 }.reduce(0, +) * b.map { $0 * $0 }.reduce(0, +)).squareRoot()
        return 1 - dot / norms
    }
}
