import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("Database")
struct DatabaseTests {
    @Test("collections persist across close and reopen, with their configuration")
    func persistence() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        let entries = randomEntries(count: 20, dimension: 5, seed: 1)
        do {
            let db = try Database(path: path)
            let items = try await SearchCollection("items", in: db, dimension: 5, metric: .l2)
            try await items.insert(entries)
            let other = try await SearchCollection("other", in: db, dimension: 3)
            try await other.insert(VectorEntry(id: 9, content: "x", vector: [1, 2, 3]))
        }
        let db = try Database(path: path)
        #expect(try await db.collectionNames() == ["items", "other"])
        let items = try await SearchCollection(named: "items", in: db)
        #expect(items.configuration.metric == .l2)
        #expect(items.configuration.dimension == 5)
        #expect(try await items.count() == 20)
        #expect(try await items.fetch(id: 3) == entries[2])
        let hits = try await items.search(vector: entries[4].vector, limit: 1)
        #expect(hits.first?.id == entries[4].id)
        #expect(try await SearchCollection(named: "other", in: db).count() == 1)
        #expect(db.fileSize() > 0)
        #expect(db.path == path)
        #expect(try await db.configuration(of: "items")?.metric == .l2)
        #expect(try Database().path == nil)
    }

    @Test(
        "reopening with a different configuration throws schemaMismatch and changes nothing",
        arguments: [
            CollectionConfiguration(dimension: 8),
            CollectionConfiguration(dimension: 4, metric: .dot),
            CollectionConfiguration(dimension: 4, lexicalSearch: false),
            CollectionConfiguration(dimension: 4, metadataByteLimit: 100),
            CollectionConfiguration(dimension: 4, tokenizer: "porter unicode61"),
        ])
    func schemaMismatch(_ requested: CollectionConfiguration) async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        do {
            let items = try await SearchCollection("items", in: Database(path: path), dimension: 4)
            try await items.insert(randomEntries(count: 5, dimension: 4, seed: 2))
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let db = try Database(path: path)
        let error = await #expect(throws: TroveError.self) {
            try await SearchCollection("items", in: db, configuration: requested)
        }
        guard case .schemaMismatch(let name, let details)? = error else {
            Issue.record("expected schemaMismatch, got \(String(describing: error))")
            return
        }
        #expect(name == "items")
        #expect(!details.isEmpty)
        #expect(error?.description.contains("different configuration") == true)
        // The same configuration still opens, and the rows are intact.
        let items = try await SearchCollection("items", in: db, dimension: 4)
        #expect(try await items.count() == 5)
        // Also on a fresh connection (the check reads trove_meta, not a cache).
        let error2 = await #expect(throws: TroveError.self) {
            try await SearchCollection("items", in: Database(path: path), configuration: requested)
        }
        #expect(error2 != nil)
        _ = before
    }

    @Test(
        "invalid names are refused",
        arguments: [
            "", "1abc", "a-b", "a b", "drop;table", "sqlite_x", "trove_meta", "ünïcode",
            String(repeating: "a", count: 65),
        ])
    func invalidNames(_ name: String) async throws {
        let db = try Database()
        let error = await #expect(throws: TroveError.self) {
            try await SearchCollection(name, in: db, dimension: 3)
        }
        if case .invalidName? = error {
        } else {
            Issue.record("expected invalidName, got \(String(describing: error))")
        }
        #expect(try await db.collectionNames().isEmpty)
    }

    @Test("a name colliding with another collection's derived table is refused without damage")
    func derivedNameCollision() async throws {
        let db = try Database()
        let a = try await SearchCollection("a", in: db, dimension: 2)
        try await a.insert(VectorEntry(id: 1, content: "hello", vector: [1, 0]))
        let error = await #expect(throws: TroveError.self) {
            try await SearchCollection("a_fts", in: db, dimension: 2)
        }
        if case .invalidName? = error {
        } else {
            Issue.record("expected invalidName, got \(String(describing: error))")
        }
        #expect(try await db.collectionNames() == ["a"])
        #expect(try await a.search(Query().matching("hello")).count == 1)
    }

    @Test("invalid configurations are refused", arguments: [0, -1, 70_000])
    func invalidDimension(_ dimension: Int) async throws {
        let db = try Database()
        await #expect(throws: TroveError.invalidDimension(dimension)) {
            try await SearchCollection("x", in: db, dimension: dimension)
        }
        await #expect(throws: TroveError.self) {
            try await SearchCollection(
                "x", in: db, configuration: .init(dimension: 3, metadataByteLimit: 0))
        }
        await #expect(throws: TroveError.self) {
            try await SearchCollection(
                "x", in: db, configuration: .init(dimension: 3, tokenizer: "x' ; DROP"))
        }
    }

    @Test("opening a missing collection by name throws collectionNotFound")
    func notFound() async throws {
        let db = try Database()
        await #expect(throws: TroveError.collectionNotFound("nope")) {
            try await SearchCollection(named: "nope", in: db)
        }
        #expect(try await db.configuration(of: "nope") == nil)
    }

    @Test("dropCollection removes rows, indexes and configuration")
    func drop() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 2)
        try await items.insert(VectorEntry(id: 1, content: "hello", vector: [1, 0]))
        #expect(try await db.dropCollection("items"))
        #expect(try await !db.dropCollection("items"))
        #expect(try await db.collectionNames().isEmpty)
        #expect(
            try await db.query("SELECT name FROM sqlite_master WHERE name LIKE 'items%'").isEmpty)
        // It can be created again, with another configuration.
        let again = try await SearchCollection("items", in: db, dimension: 3)
        #expect(try await again.count() == 0)
    }

    @Test("raw SQL: own tables next to collections, typed rows, joins")
    func rawSQL() async throws {
        let db = try Database()
        let items = try await SearchCollection("items", in: db, dimension: 2)
        try await items.insert(VectorEntry(id: 1, content: "hello", source: "s", vector: [1, 0]))
        try await db.execute(script: "CREATE TABLE tags(item_id INTEGER, tag TEXT)")
        #expect(try await db.execute("CREATE TABLE other(x)") == 0)
        #expect(
            try await db.execute(
                "INSERT INTO tags VALUES (?, ?), (?, ?)", bindings: [1, "x", 1, "y"]) == 2)
        let rows = try await db.query(
            "SELECT i.content, t.tag FROM items i JOIN tags t ON t.item_id = i.id WHERE t.tag = ?",
            bindings: ["y"])
        #expect(rows.count == 1)
        #expect(rows[0].string("content") == "hello")
        #expect(rows[0].string("tag") == "y")
        await #expect(throws: SQLiteError.self) { try await db.query("SELECT * FROM missing") }
    }

    @Test("a file from a newer format version is refused")
    func newerFormat() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        _ = try Database(path: path)
        let c = try Connection(path: path)
        try c.execute("UPDATE trove_meta SET value = '99' WHERE key = 'format_version'")
        c.close()
        #expect(throws: TroveError.unsupportedFormatVersion(found: 99, supported: 4)) {
            try Database(path: path)
        }
    }

    @Test("a file that is not a database fails to open with a SQLite error")
    func notADatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("junk")
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: path))
        #expect(throws: SQLiteError.self) { try Database(path: path) }
    }

    @Test("read-only open can search but not write")
    func readOnly() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("store.trove")
        do {
            let items = try await SearchCollection("items", in: Database(path: path), dimension: 2)
            try await items.insert(VectorEntry(id: 1, content: "hello world", vector: [1, 0]))
        }
        let db = try Database(path: path, readOnly: true)
        let items = try await SearchCollection(named: "items", in: db)
        #expect(try await items.search(vector: [1, 0.1], limit: 1).first?.id == 1)
        #expect(try await items.search(Query().matching("hello")).first?.id == 1)
        await #expect(throws: SQLiteError.self) {
            try await items.insert(VectorEntry(id: 2, content: "x", vector: [0, 1]))
        }
        #expect(try await items.count() == 1)
    }

    @Test("every TroveError has an actionable message")
    func messages() {
        let manifest = HashingEmbedder().manifest
        let errors: [TroveError] = [
            .schemaMismatch(collection: "c", details: "d"),
            .embeddingMismatch(collection: "c", stored: manifest, requested: manifest),
            .dimensionMismatch(expected: 3, actual: 4), .invalidVector(reason: "r"),
            .metadataTooLarge(limit: 1, actual: 2),
            .invalidMetadata(reason: "r"), .documentNotFound(.int(1)),
            .duplicateDocumentID(.int(1)),
            .invalidTextQuery(query: "q", reason: "r"),
            .invalidFilter(sql: "s", reason: "r"), .lexicalSearchDisabled(collection: "c"),
            .embedderRequired(collection: "c"),
            .invalidLimit(0, maximum: 5), .invalidDimension(0), .invalidName("n", reason: "r"),
            .invalidConfiguration("r"),
            .collectionNotFound("c"), .unsupportedFormatVersion(found: 2, supported: 1),
        ]
        for error in errors {
            #expect(error.description.count > 15)
            #expect(error.errorDescription == error.description)
        }
    }
}
