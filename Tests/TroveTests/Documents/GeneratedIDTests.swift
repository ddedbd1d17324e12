import Foundation
import Testing
import Trove
import TroveTestSupport

/// Models whose ids Trove chooses.
private struct IDMemo: Model, Equatable {
    var id: UUID = .unassigned
    var title: String
}

private struct IDTag: Model, Equatable {
    var id: String = .unassigned
    var name: String
}

private struct Counter: Model, Equatable {
    var id: Int64 = .unassigned
    var label: String
}

@Suite("Generated ids")
struct GeneratedIDTests {
    @Test(
        "a UUID-id model inserted without an id gets a UUIDv7 that round-trips and sorts by insertion"
    )
    func uuidModels() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("ids.trove"))
        let memos = try await db.models(IDMemo.self)
        let first = try await memos.insert(IDMemo(title: "first"))
        #expect(first != .unassigned)
        #expect(TimeOrderedIDGenerator.milliseconds(of: first) != nil)
        #expect(try await memos.fetch(id: first) == IDMemo(id: first, title: "first"))
        let batch = try await memos.insert((0..<50).map { IDMemo(title: "memo \($0)") })
        #expect(batch.count == 50 && Set(batch).count == 50)
        #expect(batch.allSatisfy { first.uuidString.lowercased() < $0.uuidString.lowercased() })
        // Stored order by id is insertion order.
        let byID = try await memos.fetch(FetchDescriptor(sortBy: [SortDescriptor(\.id)])).map(
            \.title)
        #expect(byID == ["first"] + (0..<50).map { "memo \($0)" })
        // An explicit id is kept; save of an unassigned id inserts under a new one.
        let mine = UUID()
        #expect(try await memos.insert(IDMemo(id: mine, title: "mine")) == mine)
        let saved = try await memos.save(IDMemo(title: "saved"))
        #expect(try await memos.fetch(id: saved)?.title == "saved")
        #expect(try await memos.count() == 53)
    }

    @Test("a String-id model gets the UUIDv7 as lowercase text")
    func stringModels() async throws {
        let db = try Database()
        let tags = try await db.models(IDTag.self)
        let ids = try await tags.insert([
            IDTag(name: "a"), IDTag(id: "fixed", name: "b"), IDTag(name: "c"),
        ])
        #expect(ids[1] == "fixed")
        for id in [ids[0], ids[2]] {
            let uuid = try #require(UUID(uuidString: id))
            #expect(uuid.uuidString.lowercased() == id)
            #expect(TimeOrderedIDGenerator.milliseconds(of: uuid) != nil)
        }
        #expect(ids[0] < ids[2])
        #expect(try await tags.fetch(id: ids[2]) == IDTag(id: ids[2], name: "c"))
    }

    @Test("an Int64-id model still gets SQLite's rowid: one above the largest")
    func int64Models() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("ids.trove"))
        let counters = try await db.models(Counter.self)
        #expect(try await counters.insert(Counter(label: "one")) == 1)
        #expect(
            try await counters.insert([Counter(id: 41, label: "given"), Counter(label: "next")])
                == [41, 42])
        // SQLite itself, given a NULL rowid, picks the same next value.
        try await db.execute("INSERT INTO Counter(id, label) VALUES (NULL, 'raw')")
        let raw = try await db.query("SELECT rowid FROM Counter WHERE label = 'raw'").first?[0]
            .int64Value
        #expect(raw == 43)
        #expect(try await counters.insert(Counter(label: "after raw")) == 44)
        let rowid = try await db.query("SELECT rowid FROM Counter WHERE label = 'after raw'")
            .first?[0].int64Value
        #expect(rowid == 44)
        #expect(try await counters.fetch(id: 44) == Counter(id: 44, label: "after raw"))
    }

    @Test("inside a transaction, models and documents get ids the same way")
    func inTransaction() async throws {
        let db = try Database()
        _ = try await db.models(Counter.self)
        _ = try await db.documents(
            "notes", schema: DocumentSchema(id: .uuid, fields: [.text("title")]))
        let (counterIDs, noteID) = try await db.write { tx in
            (
                try tx.models(Counter.self).insert([Counter(label: "a"), Counter(label: "b")]),
                try tx.documents("notes").insert(Document(["title": "in a transaction"]))
            )
        }
        #expect(counterIDs == [1, 2])
        let notes = try await db.documents(named: "notes")
        #expect(try await notes.fetch(id: noteID)?["title"] == "in a transaction")
    }

    @Test(
        "documents without an id get new ones, returned in order; bad fields write nothing"
    )
    func documents() async throws {
        let db = try Database()
        let uuids = try await db.documents(
            "u", schema: DocumentSchema(id: .uuid, fields: [.text("title")]))
        let strings = try await db.documents(
            "s", schema: DocumentSchema(id: .string, fields: [.text("title")]))
        let ints = try await db.documents("i", schema: DocumentSchema(fields: [.text("title")]))
        try await ints.insert(Document(id: 9, ["title": "nine"]))
        for collection in [uuids, strings, ints] {
            let one = try await collection.insert(Document(["title": "one"]))
            let more = try await collection.insert([
                Document(["title": "two"]), Document(id: .string(""), ["title": "three"]),
            ])
            #expect(try await collection.fetch(id: one)?["title"] == "one")
            #expect(try await collection.fetch(id: more[1])?["title"] == "three")
            #expect(one < more[0] && more[0] < more[1])
            await #expect(throws: TroveError.self) {
                try await collection.insert([Document(["title": "ok"]), Document(["nope": 1])])
            }
        }
        #expect(try await ints.insert(Document(["title": "ten"])) == 13)
        #expect(try await uuids.count() == 3)
        #expect(try await ints.count() == 5)
    }

    @Test("search collections keep numbering entries without an id from the largest")
    func searchCollections() async throws {
        let db = try Database()
        let notes = try await SearchCollection("notes", in: db, dimension: 2)
        try await notes.insert(VectorEntry(id: 7, content: "seven", vector: [1, 0]))
        #expect(try await notes.insert(VectorEntry(content: "eight", vector: [0, 1])) == 8)
    }
}
