import Foundation
import Testing
import Trove
import TroveTestSupport

private struct Chore: Model, Equatable {
    var id: Int64 = .unassigned
    var title: String
}

/// `insert`, written once for documents, models and search entries, means the same on each.
@Suite("RecordCollection")
struct RecordCollectionTests {
    /// Inserts `make(i)` for i in 0..<3 through the generic API alone, as a user's generic code would.
    func insertThree<C: RecordCollection>(_ collection: C, _ make: (Int) -> C.Record) async throws
        -> [C.RecordID]
    {
        let first = try await collection.insert(make(0))
        return [first] + (try await collection.insert([make(1), make(2)]))
    }

    @Test("every facade gives unassigned ids new ones, in order, through the same calls")
    func unassignedIDs() async throws {
        let db = try Database()
        let documents = try await db.documents(
            "docs", schema: DocumentSchema(fields: [.text("title")]))
        let chores = try await db.models(Chore.self)
        let entries = try await SearchCollection(
            "entries", in: db, embedder: HashingEmbedder(dimension: 8))
        try await documents.insert(Document(id: 5, ["title": "five"]))
        #expect(
            try await insertThree(documents) { Document(["title": .string("d\($0)")]) } == [
                6, 7, 8,
            ])
        #expect(try await insertThree(chores) { Chore(title: "c\($0)") } == [1, 2, 3])
        #expect(try await insertThree(entries) { VectorEntry(content: "e\($0)") } == [1, 2, 3])
        #expect(try await documents.fetch(id: 8)?["title"] == "d2")
        #expect(
            try await chores.fetch(FetchDescriptor<Chore>()).map(\.title) == ["c0", "c1", "c2"])
        #expect(
            try await entries.fetch(id: 3)?.vector == HashingEmbedder(dimension: 8).vector("e2"))
    }

    @Test("an expiry where the collection has none is refused on every facade, nothing written")
    func expiryRefused() async throws {
        let db = try Database()
        let documents = try await db.documents(
            "docs", schema: DocumentSchema(fields: [.text("title")]))
        let chores = try await db.models(Chore.self)
        let entries = try await SearchCollection("entries", in: db, dimension: 2)
        let later = Expiry.after(.seconds(60))
        await #expect(throws: TroveError.expiryDisabled(collection: "docs")) {
            try await documents.insert(Document(["title": "x"]), expiry: later)
        }
        await #expect(throws: TroveError.self) {
            try await chores.insert(Chore(title: "x"), expiry: later)
        }
        await #expect(throws: TroveError.expiryDisabled(collection: "entries")) {
            try await entries.insert(VectorEntry(content: "x", vector: [1, 0]), expiry: later)
        }
        #expect(try await documents.count() == 0)
        #expect(try await chores.count() == 0)
        #expect(try await entries.count() == 0)
    }

    @Test("in a transaction, documents and models insert through RecordWriter and return ids")
    func writers() async throws {
        let db = try Database()
        _ = try await db.documents("docs", schema: DocumentSchema(id: .uuid, fields: [.text("t")]))
        _ = try await db.models(Chore.self)
        let (documentIDs, choreID) = try await db.write { tx in
            (
                try tx.documents("docs").insert([Document(["t": "a"]), Document(["t": "b"])]),
                try tx.models(Chore.self).insert(Chore(title: "sweep"))
            )
        }
        #expect(documentIDs.count == 2 && documentIDs[0] < documentIDs[1])
        #expect(documentIDs.allSatisfy { $0.kind == .uuid })
        #expect(choreID == 1)
    }

    @Test("a document upsert gives unassigned ids new ones and returns every id")
    func upsertIDs() async throws {
        let db = try Database()
        let documents = try await db.documents(
            "docs", schema: DocumentSchema(fields: [.text("title")]))
        try await documents.insert(Document(id: 1, ["title": "one"]))
        let ids = try await documents.upsert([
            Document(id: 1, ["title": "uno"]), Document(["title": "two"]),
        ])
        #expect(ids == [1, 2])
        #expect(try await documents.fetch(id: 1)?["title"] == "uno")
    }

    @Test("search entries: only those without a vector are embedded; no embedder is a typed error")
    func entriesWithoutVectors() async throws {
        let db = try Database()
        let embedder = HashingEmbedder(dimension: 4)
        let notes = try await SearchCollection("notes", in: db, embedder: embedder)
        let given: [Float] = [0, 0, 0, 1]
        let ids = try await notes.insert([
            VectorEntry(content: "oat milk"), VectorEntry(content: "bread", vector: given),
        ])
        #expect(try await notes.fetch(id: ids[0])?.vector == embedder.vector("oat milk"))
        #expect(try await notes.fetch(id: ids[1])?.vector == given)

        let bare = try await SearchCollection(named: "notes", in: db)
        await #expect(throws: TroveError.embedderRequired(collection: "notes")) {
            try await bare.insert([
                VectorEntry(content: "x", vector: given), VectorEntry(content: "y"),
            ])
        }
        await #expect(throws: TroveError.documentNotFound(.unassigned)) {
            try await notes.update(VectorEntry(content: "no id"))
        }
        #expect(try await notes.count() == 2)
    }
}
