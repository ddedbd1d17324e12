import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@Suite("Text in, ranked results out (embedder integration)")
struct TextInTests {
    static let notes = [
        ("Dentist appointment on Tuesday at ten", "calendar"),
        ("Buy oat milk and bread for breakfast", "groceries"),
        ("The quarterly report is due on Friday", "work"),
        ("Call the plumber about the leaking sink", "home"),
    ]

    func makeNotes(_ db: Database, embedder: HashingEmbedder = HashingEmbedder()) async throws
        -> SearchCollection
    {
        let notes = try await SearchCollection("notes", in: db, embedder: embedder)
        try await notes.insert(Self.notes.map { VectorEntry(content: $0.0, source: $0.1) })
        return notes
    }

    @Test("entries without a vector are embedded at insert; search in the three modes")
    func addAndSearch() async throws {
        let db = try Database()
        let notes = try await makeNotes(db)
        #expect(notes.configuration.embedding == HashingEmbedder().manifest)
        #expect(notes.configuration.dimension == 64)
        let id = try await notes.insert(
            VectorEntry(
                content: "Renew the passport before the trip", source: "travel",
                metadata: #"{"urgent":true}"#))
        #expect(try await notes.count() == 5)
        #expect(
            try await notes.fetch(id: id)?.vector
                == HashingEmbedder().vector("Renew the passport before the trip"))

        let hybrid = try await notes.search("when is the dentist appointment?", limit: 3)
        #expect(hybrid.first?.record.source == "calendar")
        #expect(hybrid.first?.vectorRank != nil && hybrid.first?.textRank != nil)
        let vector = try await notes.search("oat milk", mode: .vector)
        #expect(vector.first?.record.source == "groceries")
        #expect(vector.allSatisfy { $0.textRank == nil })
        let text = try await notes.search("plumber (sink)?", mode: .text, snippet: SnippetStyle())
        #expect(text.map(\.record.source) == ["home"])
        #expect(text[0].snippet?.contains("[plumber]") == true)
        let filtered = try await notes.search("the", where: .source("work"), limit: 10)
        #expect(filtered.map(\.record.source) == ["work"])
        let urgent = try await notes.search(
            "passport", where: .sql("json_extract(metadata, '$.urgent')", []))
        #expect(urgent.map(\.id) == [id])

        struct Meta: Codable, Equatable { var room: String }
        let encoded = try await notes.insert(
            VectorEntry(content: "Water the plants", encoding: Meta(room: "kitchen")))
        #expect(
            try await notes.fetch(id: encoded)?.decodeMetadata(Meta.self) == Meta(room: "kitchen"))
    }

    @Test("reopening with a different embedder throws embeddingMismatch; the same one works")
    func embeddingMismatch() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        _ = try await makeNotes(try Database(path: path))
        let db = try Database(path: path)
        let other = HashingEmbedder(dimension: 64, modelID: "test/other", checksum: "1111")
        let error = await #expect(throws: TroveError.self) {
            try await SearchCollection("notes", in: db, embedder: other)
        }
        guard case .embeddingMismatch(let name, let stored, let requested)? = error else {
            Issue.record("expected embeddingMismatch, got \(String(describing: error))")
            return
        }
        #expect(name == "notes")
        #expect(stored == HashingEmbedder().manifest)
        #expect(requested == other.manifest)
        await #expect(throws: TroveError.self) {
            try await SearchCollection(named: "notes", in: db, embedder: other)
        }
        let reopened = try await SearchCollection(
            named: "notes", in: db, embedder: HashingEmbedder())
        #expect(try await reopened.search("oat milk", limit: 1).first?.record.source == "groceries")
        // A plain-vector collection refuses an embedder.
        _ = try await SearchCollection("plain", in: db, dimension: 64)
        await #expect(throws: TroveError.self) {
            try await SearchCollection(named: "plain", in: db, embedder: HashingEmbedder())
        }
    }

    @Test("text-in without an embedder throws embedderRequired; text mode still works")
    func noEmbedder() async throws {
        let db = try Database()
        _ = try await makeNotes(db)
        let bare = try await SearchCollection(named: "notes", in: db)
        await #expect(throws: TroveError.embedderRequired(collection: "notes")) {
            try await bare.insert(VectorEntry(content: "x"))
        }
        await #expect(throws: TroveError.embedderRequired(collection: "notes")) {
            try await bare.search("x")
        }
        #expect(try await bare.search("plumber", mode: .text).count == 1)
    }

    @Test(
        "hybrid on a collection without a text index answers with the vector leg; text mode throws")
    func hybridWithoutLexical() async throws {
        let db = try Database()
        let notes = try await SearchCollection(
            "notes", in: db, embedder: HashingEmbedder(), lexicalSearch: false)
        try await notes.insert(Self.notes.map { VectorEntry(content: $0.0, source: $0.1) })
        let hits = try await notes.search("oat milk", limit: 1)
        #expect(hits.map(\.record.source) == ["groceries"])
        #expect(hits[0].textRank == nil)
        await #expect(throws: TroveError.lexicalSearchDisabled(collection: "notes")) {
            try await notes.search("milk", mode: .text)
        }
    }

    @Test("a dropped collection's handle throws collectionNotFound")
    func droppedHandle() async throws {
        let db = try Database()
        let notes = try await makeNotes(db)
        try await db.dropCollection("notes")
        await #expect(throws: TroveError.collectionNotFound("notes")) { try await notes.count() }
    }

    @Test("a failing batch insert writes nothing")
    func batchAllOrNothing() async throws {
        let db = try Database()
        let notes = try await makeNotes(db)
        await #expect(throws: TroveError.duplicateDocumentID(.int(1))) {
            try await notes.insert([
                VectorEntry(id: 100, content: "a"), VectorEntry(id: 1, content: "b"),
            ])
        }
        #expect(try await notes.count() == 4)
        #expect(try await notes.insert([VectorEntry]()).isEmpty)
    }
}
