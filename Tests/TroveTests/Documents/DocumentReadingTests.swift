import Foundation
import Testing
import Trove
import TroveTestSupport

/// `DocumentReading` and `DocumentWriting`: one implementation of each read and write, shared by
/// the reader, the writer and the collection.
@Suite("Document reading and writing protocols")
struct DocumentReadingTests {
    static let schema = DocumentSchema(fields: [.text("title"), .integer("year", indexed: true)])

    @Test("a writer reads its own transaction's writes with every read a reader has")
    func writerReadsItsWrites() async throws {
        let db = try Database()
        _ = try await db.documents("books", schema: Self.schema)
        let seen = try await db.write { tx -> [String] in
            let books = try tx.documents("books")
            try books.insert([
                Document(id: 1, ["title": "Dune", "year": 1965]),
                Document(id: 2, ["title": "Emma", "year": 1815]),
            ])
            let page = try books.page(Query().sorted(by: .descending("year")).limit(1))
            let sum = try books.aggregate([.sum("year")]).first?.values["sum_year"]
            return [
                "\(page.documents.map(\.id))", "\(try books.count())", "\(sum ?? .null)",
                "\(try books.fetch(ids: [2, 1]).map(\.id))",
                "\(try books.explain(Query(Field("year") > 1900)).isEmpty)",
                "\(try books.delete(id: 2))", "\(try books.reader.count())",
            ]
        }
        #expect(seen == ["[1]", "2", "3780", "[2, 1]", "false", "true", "1"])
        #expect(try await db.documents(named: "books").count() == 1)
    }

    @Test(
        "inside a transaction a failed write leaves nothing and the transaction goes on; a collection's failed call leaves nothing"
    )
    func failedWritesLeaveNothing() async throws {
        let db = try Database()
        let books = try await db.documents("books", schema: Self.schema)
        try await db.write { tx in
            let books = try tx.documents("books")
            try books.insert(Document(id: 1, ["title": "Dune", "year": 1965]))
            // The second document is bad: the batch's first is not left behind.
            #expect(throws: TroveError.self) {
                try books.insert([
                    Document(id: 2, ["title": "Emma", "year": 1815]), Document(id: 3, ["title": 7]),
                ])
            }
            try books.insert(Document(id: 4, ["title": "Ulysses", "year": 1922]))
        }
        #expect(try await books.fetch().map(\.id) == [1, 4])
        await #expect(throws: TroveError.self) {
            try await books.insert([
                Document(id: 5, ["title": "Beloved", "year": 1987]),
                Document(id: 1, ["title": "again", "year": 1]),
            ])
        }
        #expect(try await books.count() == 2)
        #expect(try await books.delete(id: 4))
        #expect(try await books.fetch(ids: [4, 1]).map(\.id) == [1])
    }
}
