import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Model search")
struct ModelSearchTests {
    static let notes = [
        SearchNote(
            id: "n1", title: "Dentist", body: "dentist appointment on tuesday morning", year: 2026),
        SearchNote(id: "n2", title: "Groceries", body: "oat milk bread and apples", year: 2026),
        SearchNote(id: "n3", title: "Old dentist bill", body: "pay the dentist bill", year: 2019),
        SearchNote(
            id: "n4", title: "Garden", body: "plant tomatoes and water the garden", year: 2025),
    ]

    @Test("the embedder fills the vector property on save")
    func embedsOnSave() async throws {
        let embedder = HashingEmbedder(dimension: 32)
        let notes = try await Database().models(SearchNote.self, embedder: embedder)
        try await notes.insert(Self.notes)
        let stored = try #require(try await notes.fetch(id: "n2"))
        #expect(stored.embedding == embedder.vector(Self.notes[1].body))
        var changed = stored
        changed.body = "plant tomatoes"
        try await notes.save(changed)
        #expect(try await notes.fetch(id: "n2")?.embedding == embedder.vector("plant tomatoes"))
    }

    @Test(
        "hybrid, vector and words search return models with scores, filtered by a predicate",
        arguments: [SearchMode.hybrid, .vector, .text])
    func search(_ mode: SearchMode) async throws {
        let notes = try await Database().models(
            SearchNote.self, embedder: HashingEmbedder(dimension: 32))
        try await notes.insert(Self.notes)
        let all = try await notes.search("dentist", mode: mode, limit: 2)
        #expect(Set(all.map(\.record.id)) == ["n1", "n3"])
        for hit in all {
            let source = try #require(Self.notes.first { $0.id == hit.record.id })
            #expect(
                hit.record.title == source.title && hit.record.body == source.body
                    && hit.record.year == source.year)
        }
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.score >= $1.score })
        let recent = try await notes.search(
            "dentist", mode: mode, where: #Predicate { $0.year >= 2025 }, limit: 5)
        #expect(recent.first?.record.id == "n1")
        #expect(!recent.contains { $0.record.year < 2025 })
        if mode != .text { #expect(recent.first?.distance != nil) }
        if mode != .vector { #expect(recent.first?.bm25 != nil) }
    }

    @Test("search without an embedder or without full-text fields is a typed error")
    func missingLegs() async throws {
        let notes = try await Database().models(SearchNote.self)
        await #expect(throws: TroveError.embedderRequired(collection: "SearchNote")) {
            try await notes.search("x")
        }
        _ = try await notes.search("x", mode: .text)
        let items = try await Database().models(Item.self)
        await #expect(throws: TroveError.lexicalSearchDisabled(collection: "Item")) {
            try await items.search("x", mode: .text)
        }
    }

    @Test("an embedder of another dimension is refused")
    func wrongDimension() async throws {
        await #expect(throws: TroveError.dimensionMismatch(expected: 32, actual: 16)) {
            try await Database().models(SearchNote.self, embedder: HashingEmbedder(dimension: 16))
        }
    }

    @Test("the embedding model is recorded in the file, and another one is refused")
    func embedderRecorded() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("notes.trove"))
        _ = try await db.models(SearchNote.self, embedder: HashingEmbedder(dimension: 32))
        _ = try await db.models(SearchNote.self)  // without an embedder: reads and words only
        let reopened = try Database(path: dir.path("notes.trove"))
        _ = try await reopened.models(SearchNote.self, embedder: HashingEmbedder(dimension: 32))
        await #expect {
            try await reopened.models(
                SearchNote.self, embedder: HashingEmbedder(dimension: 32, modelID: "other"))
        } throws: { error in
            if case TroveError.embeddingMismatch(let collection, _, _) = error {
                return collection == "SearchNote"
            }
            return false
        }
    }
}
