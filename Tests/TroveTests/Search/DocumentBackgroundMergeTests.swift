import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// A document collection's full-text index merges its FTS5 segments on a background connection
/// once writes pause, as a search collection's does (BackgroundMerger.swift): the writer leaves
/// them alone (automerge 0) except FTS5's crisis merges.
@Suite("Background merge of document collections' text indexes")
struct DocumentBackgroundMergeTests {
    static let schema = DocumentSchema(
        fields: [.text("body"), .vector("v", dimension: 4, optional: true)],
        fullText: FullTextDefinition(fields: ["body"]))

    /// `batches` batches of 64 documents, each its own transaction.
    private func fill(_ docs: DocumentCollection, batches: Int, firstID: Int64 = 0) async throws {
        var rng = SeededGenerator(seed: 11)
        let words = ["apple", "river", "stone", "cloud", "ember", "maple", "quartz", "harbor"]
        for batch in 0..<batches {
            let documents = (0..<64).map { i in
                let id = firstID + Int64(batch * 64 + i + 1)
                let text = (0..<12).map { _ in words[Int.random(in: 0..<words.count, using: &rng)] }
                    .joined(
                        separator: " ")
                return Document(
                    id: .int(id),
                    ["body": .string("\(text) doc\(id)"), "v": .vector(rng.vector(dimension: 4))])
            }
            try await docs.insert(documents)
        }
    }

    private func waitForSegments(_ db: Database, _ name: String, atMost bound: Int) async throws
        -> Int
    {
        var count = try await ftsSegmentCount(db, name)
        for _ in 0..<200 where count > bound {
            try await Task.sleep(for: .milliseconds(50))
            count = try await ftsSegmentCount(db, name)
        }
        return count
    }

    private func results(_ docs: DocumentCollection) async throws -> [[DocumentID]] {
        var all: [[DocumentID]] = []
        for query in ["apple", "\"river stone\"", "quartz AND harbor", "doc17", "ember NOT cloud"] {
            all.append(
                try await docs.search(Query().matching(.fts5(query)).limit(50)).map(\.record.id))
        }
        return all
    }

    @Test("one segment per batch while writing; merged once writes pause; same results")
    func mergesWhenQuiet() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("store.trove"))
        let docs = try await db.documents("items", schema: Self.schema)
        try await fill(docs, batches: 20)
        #expect(try await ftsSegmentCount(db, "items") >= 16)  // the writer merged nothing
        let before = try await results(docs)
        #expect(try await waitForSegments(db, "items", atMost: 8) <= 8)
        #expect(try await results(docs) == before)
        #expect(try await docs.verify().isEmpty)
    }

    @Test("writes in transactions and by raw SQL are merged too")
    func mergesOtherWrites() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("store.trove"))
        _ = try await db.documents("items", schema: Self.schema)
        for batch in 0..<10 {
            try await db.write { tx in
                let items = try tx.documents("items")
                let documents = (0..<64).map { i -> Document in
                    let id = Int64(batch * 64 + i + 1)
                    return Document(id: .int(id), ["body": .string("maple river \(i)")])
                }
                try items.insert(documents)
            }
        }
        for batch in 0..<10 {
            try await db.execute(
                "INSERT INTO items(id, body) VALUES (?, 'quartz harbor')",
                bindings: [.integer(Int64(10_000 + batch))])
        }
        #expect(try await ftsSegmentCount(db, "items") >= 16)
        #expect(try await waitForSegments(db, "items", atMost: 8) <= 8)
    }

    @Test("mergeTextIndexes merges document collections at once")
    func mergeNow() async throws {
        let db = try Database()  // in memory: no background merger
        let docs = try await db.documents("items", schema: Self.schema)
        try await fill(docs, batches: 20)
        let before = try await results(docs)
        try await db.mergeTextIndexes()
        #expect(try await ftsSegmentCount(db, "items") <= 8)
        #expect(try await results(docs) == before)
    }
}
