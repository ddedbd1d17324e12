import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("Collection writes and reads")
struct CollectionWriteTests {
    @Test("insert, fetch with vector, contains, count, count(source:)")
    func basics() async throws {
        let items = try await makeCollection()
        let entry = VectorEntry(
            id: 7, content: "hello", source: "s1", metadata: #"{"a":1}"#, vector: [1, 2, 3, 4])
        try await items.insert(entry)
        #expect(try await items.fetch(id: 7) == entry)
        #expect(try await items.fetch(id: 8) == nil)
        #expect(try await items.contains(id: 7))
        #expect(try await !items.contains(id: 8))
        #expect(try await items.count() == 1)
        #expect(try await items.count(where: .source("s1")) == 1)
        #expect(try await items.count(where: .source("s2")) == 0)
        let id = try await items.insert(
            VectorEntry(content: "auto", source: "s2", vector: [0.5, 0, 0, 1]))
        #expect(id == 8)
        #expect(try await items.fetch(id: id)?.vector == [0.5, 0, 0, 1])
        let sources = try await items.sources()
        #expect(sources.map(\.source) == ["s1", "s2"])
        #expect(sources.map(\.count) == [1, 1])
    }

    @Test("Encodable metadata round-trips through decodeMetadata")
    func encodableMetadata() async throws {
        struct Meta: Codable, Equatable {
            var page: Int
            var tags: [String]
        }
        let items = try await makeCollection()
        let meta = Meta(page: 3, tags: ["x", "y/z"])
        try await items.insert(
            try VectorEntry(
                id: 1, content: "hello", encoding: meta, vector: [1, 0, 0, 0] as [Double]))
        let fetched = try await items.fetch(id: 1)
        #expect(try fetched?.decodeMetadata(Meta.self) == meta)
        let hit = try await items.search(vector: [1, 0, 0, 0], limit: 1)[0]
        #expect(try hit.record.decodeMetadata(Meta.self) == meta)
        #expect(
            try VectorEntry(id: 2, content: "", vector: [Float]()).decodeMetadata(Meta.self) == nil)
    }

    @Test("batch insert is all-or-nothing: a duplicate id in the middle leaves the store unchanged")
    func batchAllOrNothing() async throws {
        let items = try await makeCollection()
        let existing = randomEntries(count: 10, dimension: 4, seed: 3)
        try await items.insert(existing)
        _ = try await items.search(vector: [1, 0, 0, 0], limit: 1)  // load the index
        var batch = randomEntries(count: 10, dimension: 4, seed: 4, firstID: 100)
        batch[5].id = 3  // exists already: fails at SQLite, after 5 rows were written
        await #expect(throws: TroveError.duplicateDocumentID(.int(3))) {
            try await items.insert(batch)
        }
        #expect(try await items.count() == 10)
        #expect(try await !items.contains(id: 100))
        #expect(try await items.fetch(id: 3) == existing[2])
        let all = try await items.search(vector: [1, 0, 0, 0], limit: 100)
        #expect(Set(all.map(\.id)) == Set(existing.map(\.id)))
        #expect(try await items.search(Query().matching("row")).count == 10)
        // A duplicate within the batch is caught before any write.
        batch[5].id = 101
        await #expect(throws: TroveError.duplicateDocumentID(.int(101))) {
            try await items.insert(batch)
        }
        #expect(try await items.count() == 10)
    }

    @Test("batch validation: a bad entry anywhere means nothing is written")
    func batchValidation() async throws {
        let items = try await makeCollection()
        let good = randomEntries(count: 5, dimension: 4, seed: 5)
        var cases: [(VectorEntry, TroveError)] = []
        cases.append(
            (
                VectorEntry(id: 50, content: "x", vector: [1, 2, 3]),
                .dimensionMismatch(expected: 4, actual: 3)
            ))
        cases.append(
            (
                // Without a vector and without an embedder to make one.
                VectorEntry(id: 50, content: "x", vector: [Float]()),
                .embedderRequired(collection: "items")
            ))
        cases.append(
            (
                VectorEntry(id: 50, content: "x", metadata: "[1]", vector: [1, 2, 3, 4]),
                .invalidMetadata(reason: "got a JSON array")
            ))
        cases.append(
            (
                VectorEntry(id: 50, content: "x", metadata: "{oops", vector: [1, 2, 3, 4]),
                .invalidMetadata(reason: "the text is not valid JSON")
            ))
        for (bad, expected) in cases {
            await #expect(throws: expected) { try await items.insert(good + [bad]) }
        }
        for value in [Float.nan, .infinity, -.infinity] {
            let error = await #expect(throws: TroveError.self) {
                try await items.insert([
                    good[0], VectorEntry(id: 51, content: "x", vector: [1, value, 0, 0]),
                ])
            }
            if case .invalidVector? = error {
            } else {
                Issue.record("expected invalidVector, got \(String(describing: error))")
            }
        }
        let zero = await #expect(throws: TroveError.self) {
            try await items.insert(VectorEntry(id: 52, content: "x", vector: [0, 0, 0, 0]))
        }
        if case .invalidVector(let reason)? = zero {
            #expect(reason.contains("zero"))
        } else {
            Issue.record("zero vector accepted")
        }
        #expect(try await items.count() == 0)
    }

    @Test("a large batch reports its first bad row, in row order, whatever the kind of fault")
    func firstBadRowInOrder() async throws {
        let items = try await makeCollection()
        func batch(_ faults: [Int: String]) -> [VectorEntry] {
            (0..<250).map { i in
                switch faults[i] {
                case "array":
                    VectorEntry(
                        id: .int(Int64(i + 1)), content: "r", metadata: "[\(i)]",
                        vector: [1, 2, 3, 4])
                case "broken":
                    VectorEntry(
                        id: .int(Int64(i + 1)), content: "r", metadata: "{\"n\": \(i)",
                        vector: [1, 2, 3, 4])
                case "nan":
                    VectorEntry(
                        id: .int(Int64(i + 1)), content: "r", metadata: "{}",
                        vector: [1, .nan, 3, 4])
                default:
                    VectorEntry(
                        id: .int(Int64(i + 1)), content: "r", metadata: "{\"n\": \(i)}",
                        vector: [1, 2, 3, 4])
                }
            }
        }
        // Metadata checked in bulk (100 rows per statement) must still name the earliest fault.
        await #expect(throws: TroveError.invalidMetadata(reason: "got a JSON array")) {
            try await items.insert(batch([130: "array", 170: "broken", 200: "nan"]))
        }
        await #expect(throws: TroveError.invalidMetadata(reason: "the text is not valid JSON")) {
            try await items.insert(batch([201: "array", 170: "broken", 220: "nan"]))
        }
        let vectorFirst = await #expect(throws: TroveError.self) {
            try await items.insert(batch([10: "nan", 150: "array"]))
        }
        if case .invalidVector? = vectorFirst {
        } else {
            Issue.record("expected invalidVector, got \(String(describing: vectorFirst))")
        }
        #expect(try await items.count() == 0)
        try await items.insert(batch([:]))
        #expect(try await items.count() == 250)
    }

    @Test(
        "metadata that is not a JSON object is reported before faults later in the row order or found while writing"
    )
    func metadataFaultBeforeLaterFaults() async throws {
        let items = try await makeCollection()
        try await items.insert(VectorEntry(id: 1, content: "kept", vector: [1, 2, 3, 4]))
        func entry(_ id: Int64, _ metadata: String? = nil) -> VectorEntry {
            VectorEntry(id: .int(id), content: "r", metadata: metadata, vector: [1, 2, 3, 4])
        }
        let array = TroveError.invalidMetadata(reason: "got a JSON array")
        // Within a row, metadata comes before the id: a duplicate in the batch with bad metadata.
        await #expect(throws: array) {
            try await items.insert([entry(10), entry(11), entry(10, "[1]")])
        }
        // A duplicate in the batch after a row with bad metadata.
        await #expect(throws: array) {
            try await items.insert([entry(10), entry(11, "[2]"), entry(10)])
        }
        // An id already stored (found while writing) before a row with bad metadata.
        await #expect(throws: array) {
            try await items.insert([entry(12), entry(1), entry(13, "[3]")])
        }
        await #expect(throws: TroveError.duplicateDocumentID(1)) {
            try await items.insert([entry(12), entry(1), entry(13, "{}")])
        }
        // Updates and upserts: a missing row before a row with bad metadata.
        await #expect(throws: array) { try await items.update(entry(99, "[4]")) }
        await #expect(throws: array) { try await items.upsert([entry(1), entry(14, "[5]")]) }
        // Nothing written by any of them.
        #expect(try await items.count() == 1)
        #expect(try await items.fetch(id: 1)?.metadata == nil)
    }

    @Test("metadata over the byte limit is refused with both sizes")
    func metadataTooLarge() async throws {
        let items = try await SearchCollection(
            "items", in: Database(), configuration: .init(dimension: 2, metadataByteLimit: 20))
        let meta = #"{"text":"0123456789abcdef"}"#
        await #expect(throws: TroveError.metadataTooLarge(limit: 20, actual: meta.utf8.count)) {
            try await items.insert(
                VectorEntry(id: 1, content: "x", metadata: meta, vector: [1, 0]))
        }
        try await items.insert(
            VectorEntry(id: 1, content: "x", metadata: #"{"a":1}"#, vector: [1, 0]))
        #expect(try await items.count() == 1)
    }

    @Test("update replaces a row and throws rowNotFound for a missing id")
    func update() async throws {
        let items = try await makeCollection()
        try await items.insert(
            VectorEntry(id: 1, content: "old words", source: "a", vector: [1, 0, 0, 0]))
        try await items.update(
            VectorEntry(
                id: 1, content: "new words", source: "b", metadata: #"{"v":2}"#,
                vector: [0, 1, 0, 0]))
        let fetched = try await items.fetch(id: 1)
        #expect(fetched?.content == "new words")
        #expect(fetched?.source == "b")
        #expect(fetched?.vector == [0, 1, 0, 0])
        #expect(try await items.search(Query().matching("old")).isEmpty)
        #expect(try await items.search(Query().matching("new")).map(\.id) == [1])
        #expect(try await items.search(vector: [0, 1, 0, 0], limit: 1)[0].distance! < 1e-6)
        await #expect(throws: TroveError.documentNotFound(.int(2))) {
            try await items.update(VectorEntry(id: 2, content: "x", vector: [1, 0, 0, 0]))
        }
        #expect(try await items.count() == 1)
    }

    @Test("upsert inserts or replaces; upsertBatch too")
    func upsert() async throws {
        let items = try await makeCollection()
        try await items.upsert(VectorEntry(id: 1, content: "first", vector: [1, 0, 0, 0]))
        try await items.upsert(VectorEntry(id: 1, content: "second", vector: [0, 0, 1, 0]))
        #expect(try await items.count() == 1)
        #expect(try await items.fetch(id: 1)?.content == "second")
        #expect(try await items.search(Query().matching("first")).isEmpty)
        #expect(try await items.search(vector: [0, 0, 1, 0], limit: 1)[0].score > 0.999)
        try await items.upsert([
            VectorEntry(id: 1, content: "third", vector: [0, 1, 0, 0]),
            VectorEntry(id: 2, content: "fourth", vector: [0, 0, 0, 1]),
        ])
        #expect(try await items.count() == 2)
        #expect(try await items.search(Query().matching("third OR fourth")).count == 2)
    }

    @Test("delete by id, by source, and everything; indexes follow")
    func deletes() async throws {
        let items = try await makeCollection()
        try await items.insert(randomEntries(count: 30, dimension: 4, seed: 6))
        _ = try await items.search(vector: [1, 1, 1, 1], limit: 1)
        #expect(try await items.delete(id: 1))
        #expect(try await !items.delete(id: 1))
        #expect(try await items.count() == 29)
        #expect(try await items.delete(where: .source("b")) == 10)
        #expect(try await items.delete(where: .source("nope")) == 0)
        #expect(try await items.count(where: .source("b")) == 0)
        let remaining = try await items.search(vector: [1, 1, 1, 1], limit: 100)
        #expect(remaining.count == 19)
        #expect(!remaining.contains { $0.id == 1 || $0.record.source == "b" })
        #expect(try await items.search(Query().matching("row").limit(100)).count == 19)
        #expect(try await items.delete(where: .all) == 19)
        #expect(try await items.count() == 0)
        #expect(try await items.search(vector: [1, 1, 1, 1], limit: 5).isEmpty)
        #expect(try await items.search(Query().matching("row")).isEmpty)
    }

    @Test(
        "auto ids follow the largest id, including ids in the same batch; no overflow at Int64.max")
    func autoIDs() async throws {
        let db = try Database()
        let notes = try await SearchCollection(
            "notes", in: db, embedder: HashingEmbedder(dimension: 8))
        let ids = try await notes.insert([
            VectorEntry(content: "a"), VectorEntry(id: 10, content: "b"), VectorEntry(content: "c"),
        ])
        #expect(ids == [11, 10, 12])
        try await notes.insert(VectorEntry(id: .int(.max), content: "last"))
        let error = await #expect(throws: TroveError.self) {
            try await notes.insert(VectorEntry(content: "overflow"))
        }
        if case .invalidConfiguration? = error {
        } else {
            Issue.record("expected a typed error, got \(String(describing: error))")
        }
        #expect(try await notes.count() == 4)
    }

    @Test("the CHECK constraints refuse bad rows written with raw SQL")
    func checkConstraints() async throws {
        let db = try Database()
        _ = try await SearchCollection("items", in: db, dimension: 2)
        for sql in [
            "INSERT INTO items(content, embedding) VALUES ('x', x'00')",
            "INSERT INTO items(content, metadata) VALUES ('x', '[1,2]')",
            "INSERT INTO items(content, metadata) VALUES ('x', 'not json')",
            "INSERT INTO items(content) VALUES (NULL)",
        ] {
            let error = await #expect(throws: SQLiteError.self) { try await db.execute(sql) }
            #expect(error?.code == .constraint)
        }
    }
}
