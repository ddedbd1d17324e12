import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@Suite("A search collection of several models: a vector field per model, a leg per model")
struct SeveralModelsTests {
    static let first = HashingEmbedder(dimension: 64, modelID: "test/first")
    static let second = HashingEmbedder(dimension: 32, modelID: "test/second")
    static let texts = [
        "Dentist appointment on Tuesday at ten", "Buy oat milk and bread for breakfast",
        "The quarterly report is due on Friday", "Call the plumber about the leaking sink",
    ]

    func makeNotes(_ db: Database) async throws -> SearchCollection {
        let notes = try await SearchCollection(
            "notes", in: db, embedder: Self.first, additionalEmbedders: [Self.second], ids: .uuid)
        try await notes.insert(Self.texts.map { VectorEntry(content: $0) })
        return notes
    }

    @Test("each model's vector is stored in its own field, embedded at insert and read back")
    func embedsEveryModel() async throws {
        let db = try Database()
        let notes = try await makeNotes(db)
        #expect(notes.configuration.vectorFields == ["embedding", "embedding_2"])
        #expect(notes.configuration.additionalEmbeddings == [Self.second.manifest])
        for entry in try await notes.fetch(Query()) {
            #expect(entry.vector == Self.first.vector(entry.content))
            #expect(entry.additionalVectors == [Self.second.vector(entry.content)])
        }
        // A vector given for one model and left empty for the other: only the empty one is embedded.
        let given = [Float](repeating: 0.25, count: 64)
        let id = try await notes.insert(VectorEntry(content: "Renew the passport", vector: given))
        let stored = try #require(try await notes.fetch(id: id))
        #expect(stored.vector == given)
        #expect(stored.additionalVectors == [Self.second.vector("Renew the passport")])
    }

    @Test("a text search has a vector leg per model; a query can name one model's field")
    func searchesEveryLeg() async throws {
        let db = try Database()
        let notes = try await makeNotes(db)
        let hits = try await notes.search("when is the dentist appointment?", limit: 2)
        #expect(hits.first?.record.content == Self.texts[0])
        #expect(hits.first?.vectorRanks == [1, 1])
        #expect(hits.first?.textRank == 1)

        let second = try await notes.search(
            Query().nearest(to: Self.second.vector("plumber sink"), in: "embedding_2").limit(1))
        #expect(second.map(\.record.content) == [Self.texts[3]])
        #expect(second.first?.vectorRanks == [1])

        // An update moves the second model's index too.
        var entry = try #require(second.first?.record)
        entry.content = "Water the garden plants"
        entry.vector = []
        entry.additionalVectors = []
        try await notes.update(entry)
        let after = try await notes.search(
            Query().nearest(to: Self.second.vector("water garden plants"), in: "embedding_2")
                .limit(1))
        #expect(after.first?.id == entry.id)
        #expect(after.first?.record.additionalVectors == [Self.second.vector(entry.content)])
    }

    @Test(
        "vectors of the wrong count or dimension, or no embedder for a missing one: nothing written"
    )
    func refusesBadVectors() async throws {
        let db = try Database()
        let notes = try await makeNotes(db)
        let one = Self.first.vector("x")
        await #expect(throws: TroveError.dimensionMismatch(expected: 32, actual: 64)) {
            try await notes.insert(
                VectorEntry(content: "x", vector: one, additionalVectors: [one]))
        }
        await #expect(throws: TroveError.self) {
            try await notes.insert(
                VectorEntry(
                    content: "x", vector: one,
                    additionalVectors: [Self.second.vector("x"), Self.second.vector("x")]))
        }
        // Opened with the first model only: an entry lacking the second model's vector is refused.
        let firstOnly = try await SearchCollection(named: "notes", in: db, embedder: Self.first)
        await #expect(throws: TroveError.embedderRequired(collection: "notes")) {
            try await firstOnly.insert(VectorEntry(content: "x"))
        }
        await #expect(throws: TroveError.embedderRequired(collection: "notes")) {
            try await firstOnly.search("dentist")
        }
        #expect(try await notes.count() == Self.texts.count)
    }

    @Test(
        "the models are frozen with the collection: reopened with the same list, refused with another"
    )
    func reopens() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.path("notes.trove")
        do {
            let db = try Database(path: path)
            _ = try await makeNotes(db)
        }
        let db = try Database(path: path)
        let notes = try await SearchCollection(
            named: "notes", in: db, embedder: Self.first, additionalEmbedders: [Self.second])
        #expect(
            try await notes.search("oat milk", mode: .vector, limit: 1).first?.record.content
                == Self.texts[1])
        await #expect(throws: TroveError.self) {
            try await SearchCollection(
                named: "notes", in: db, embedder: Self.second, additionalEmbedders: [Self.first])
        }
        await #expect(throws: TroveError.self) {
            try await SearchCollection(
                named: "notes", in: db, embedder: Self.first,
                additionalEmbedders: [Self.second, Self.second])
        }
        await #expect(throws: TroveError.self) {
            try await SearchCollection("notes", in: db, embedder: Self.first, ids: .uuid)
        }
        let textOnly = try await SearchCollection(named: "notes", in: db)
        #expect(try await textOnly.search("plumber", mode: .text).count == 1)
    }

    @Test("a one-model configuration is stored as before: no additionalEmbeddings key")
    func configurationCoding() throws {
        let one = CollectionConfiguration(dimension: 3)
        let json = String(decoding: try JSONEncoder().encode(one), as: UTF8.self)
        #expect(!json.contains("additionalEmbeddings"))
        #expect(
            try JSONDecoder().decode(CollectionConfiguration.self, from: Data(json.utf8)) == one)
        let two = CollectionConfiguration(
            dimension: 64, embedding: Self.first.manifest,
            additionalEmbeddings: [Self.second.manifest])
        #expect(
            try JSONDecoder().decode(CollectionConfiguration.self, from: JSONEncoder().encode(two))
                == two)
        #expect(two.vectorFields == ["embedding", "embedding_2"])
    }
}
