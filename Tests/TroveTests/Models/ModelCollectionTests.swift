import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Model collection")
struct ModelCollectionTests {
    static func items(_ count: Int, seed: UInt64 = 1) -> [Item] {
        var rng = SeededGenerator(seed: seed)
        return (1...Int64(count)).map { Item.random(id: $0, using: &rng) }
    }

    @Test("insert, fetch, save, update, delete by id, ids and predicate, count")
    func crud() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("models.trove"))
        let items = try await db.models(Item.self)
        let source = Self.items(30)
        try await items.insert(source)
        #expect(try await items.count() == 30)
        #expect(try await items.fetch(id: 7) == source[6])
        #expect(try await items.fetch(id: 99) == nil)
        #expect(try await items.fetch().map(\.id) == Array(1...30))

        var changed = source[0]
        changed.title = "changed"
        changed.rating = nil
        try await items.update(changed)
        #expect(try await items.fetch(id: 1) == changed)

        var fresh = Item.random(id: 31, using: &Self.rng)
        try await items.save([fresh])
        fresh.year = 1900
        try await items.save(fresh)
        #expect(try await items.fetch(id: 31)?.year == 1900)
        #expect(try await items.count() == 31)

        #expect(try await items.delete(id: 31))
        #expect(!(try await items.delete(id: 31)))
        #expect(try await items.delete(ids: [1, 2, 3, 999]) == 3)
        let doneCount = source.dropFirst(3).filter(\.done).count
        #expect(try await items.delete(where: #Predicate { $0.done }) == doneCount)
        #expect(try await items.count() == 27 - doneCount)
        #expect(try await items.count(where: #Predicate { $0.done }) == 0)

        // A second handle on the same file reads the same models.
        let again = try await Database(path: dir.path("models.trove")).models(Item.self)
        #expect(try await again.count() == 27 - doneCount)
    }

    nonisolated(unsafe) static var rng = SeededGenerator(seed: 77)

    @Test("updating a model that does not exist is a typed error")
    func updateMissing() async throws {
        let items = try await Database().models(Item.self)
        await #expect(throws: TroveError.documentNotFound(.int(5))) {
            try await items.update(Self.items(5)[4])
        }
    }

    struct Account: Model, Equatable {
        var id: Int64
        var email: String
        var balance: Int
        static var modelOptions: ModelOptions { ModelOptions().unique(\Account.email) }
    }

    @Test("a batch with a duplicate id or a unique violation writes nothing, and names the field")
    func batchAllOrNothing() async throws {
        let db = try Database()
        let accounts = try await db.models(Account.self)
        try await accounts.insert(Account(id: 1, email: "a@x", balance: 10))
        await #expect(throws: TroveError.uniqueViolation(field: "email", value: "\"a@x\"")) {
            try await accounts.insert([
                Account(id: 2, email: "b@x", balance: 1), Account(id: 3, email: "a@x", balance: 1),
            ])
        }
        await #expect(throws: TroveError.duplicateDocumentID(.int(1))) {
            try await accounts.insert([
                Account(id: 4, email: "c@x", balance: 1), Account(id: 1, email: "d@x", balance: 1),
            ])
        }
        #expect(try await accounts.fetch().map(\.id) == [1])
    }

    @Test("models compose with documents and raw SQL in database.write, and roll back together")
    func transactions() async throws {
        let db = try Database()
        let accounts = try await db.models(Account.self)
        _ = try await db.documents("audit", schema: DocumentSchema(fields: [.text("note")]))
        try await accounts.insert([
            Account(id: 1, email: "a@x", balance: 100), Account(id: 2, email: "b@x", balance: 0),
        ])

        try await db.write { tx in
            let accounts = try tx.models(Account.self)
            guard var from = try accounts.fetch(id: 1), var to = try accounts.fetch(id: 2) else {
                throw TroveError.documentNotFound(1)
            }
            from.balance -= 30
            to.balance += 30
            try accounts.update(from)
            try accounts.update(to)
            // sees its own writes
            #expect(try accounts.count(where: #Predicate { $0.balance == 30 }) == 1)
            try tx.documents("audit").insert(Document(id: 1, ["note": "transfer 30"]))
            try tx.execute("UPDATE \"Account\" SET balance = balance + 1 WHERE id = 2")
        }
        #expect(try await accounts.fetch(id: 2)?.balance == 31)

        await #expect(throws: TroveError.self) {
            try await db.write { tx in
                let accounts = try tx.models(Account.self)
                try accounts.insert(Account(id: 3, email: "c@x", balance: 5))
                try tx.documents("audit").insert(Document(id: 2, ["note": "rolled back"]))
                // unique violation: all of it rolls back
                try accounts.insert(Account(id: 4, email: "a@x", balance: 5))
            }
        }
        #expect(try await accounts.count() == 2)
        #expect(try await db.documents(named: "audit").count() == 1)

        let (count, rich) = try await db.read { r in
            let accounts = try r.models(Account.self)
            return (
                try accounts.count(),
                try accounts.fetch(FetchDescriptor(predicate: #Predicate { $0.balance > 50 })).map(
                    \.id)
            )
        }
        #expect(count == 2 && rich == [1])
    }

    @Test("a collection created for another shape refuses the model")
    func schemaMismatch() async throws {
        let db = try Database()
        _ = try await db.documents("Account", schema: DocumentSchema(fields: [.text("email")]))
        await #expect { try await db.models(Account.self) } throws: { error in
            if case TroveError.schemaMismatch = error { return true }
            return false
        }
    }
}
