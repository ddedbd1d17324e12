import Foundation
import Testing
import TroveTestSupport
import TroveVecKit

/// Every refusal is a typed ``SQLiteError`` and leaves the store exactly as it was.
@Suite("VectorStore errors")
struct VectorStoreErrorTests {
    /// A store with two rows, and a way to read everything it holds.
    private func seeded(metadataByteLimit: Int = 16) async throws -> VectorStore {
        let store = try VectorStore(
            dbPath: ":memory:", dimension: 2, metadataByteLimit: metadataByteLimit)
        try await store.insertBatch([
            VectorEntry(
                id: 1, content: "oat milk", source: "a", metadata: "small", vector: [1, 0]),
            VectorEntry(id: 2, content: "river walk", source: "b", vector: [0, 1]),
        ])
        return store
    }

    private func contents(_ store: VectorStore) async throws -> [SQLRow] {
        try await store.query(
            "SELECT id, content, source, metadata, embedding FROM chunks ORDER BY id")
    }

    /// Runs `body`, expects `SQLiteError` matching `expected`, and that the table did not change.
    private func expectRefused(
        _ store: VectorStore, _ expected: (SQLiteError) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async throws {
        let before = try await contents(store)
        let error = await #expect(throws: SQLiteError.self, sourceLocation: sourceLocation) {
            try await body()
        }
        if let error, !expected(error) {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
        #expect(try await contents(store) == before, sourceLocation: sourceLocation)
    }

    @Test(
        "a vector of the wrong length is dimensionMismatch on every write and search; nothing written"
    )
    func wrongDimension() async throws {
        let store = try await seeded()
        let bad = VectorEntry(id: 3, content: "x", source: "a", vector: [1, 0, 0])
        func isMismatch(_ error: SQLiteError) -> Bool {
            if case .dimensionMismatch(expected: 2, got: 3) = error { true } else { false }
        }
        try await expectRefused(store, isMismatch) { try await store.insert(bad) }
        try await expectRefused(store, isMismatch) {
            try await store.insertBatch([
                VectorEntry(id: 4, content: "fine", source: "a", vector: [1, 1]), bad,
            ])
        }
        try await expectRefused(store, isMismatch) {
            _ = try await store.insert(content: "x", source: "a", vector: [1, 0, 0])
        }
        try await expectRefused(store, isMismatch) {
            try await store.update(
                VectorEntry(id: 1, content: "x", source: "a", vector: [1, 0, 0]))
        }
        try await expectRefused(store, isMismatch) { try await store.upsert(bad) }
        try await expectRefused(store, isMismatch) {
            _ = try await store.search(vector: [1, 0, 0])
        }
        try await expectRefused(store, isMismatch) {
            _ = try await store.searchHybrid(text: "oat", vector: [1, 0, 0])
        }
    }

    @Test("metadata over the byte limit is metadataTooLarge; nothing written")
    func metadataTooLarge() async throws {
        let store = try await seeded(metadataByteLimit: 16)
        let big = String(repeating: "é", count: 9)  // 18 UTF-8 bytes, 9 characters
        func isTooLarge(_ error: SQLiteError) -> Bool {
            if case .metadataTooLarge(limit: 16, got: 18) = error { true } else { false }
        }
        let entry = VectorEntry(id: 3, content: "x", source: "a", metadata: big, vector: [1, 1])
        try await expectRefused(store, isTooLarge) { try await store.insert(entry) }
        try await expectRefused(store, isTooLarge) {
            try await store.insertBatch([
                VectorEntry(id: 4, content: "fine", source: "a", vector: [1, 1]), entry,
            ])
        }
        try await expectRefused(store, isTooLarge) {
            try await store.update(
                VectorEntry(id: 1, content: "x", source: "a", metadata: big, vector: [1, 1]))
        }
        try await expectRefused(store, isTooLarge) { try await store.upsert(entry) }
        try await store.insert(
            VectorEntry(
                id: 3, content: "x", source: "a", metadata: String(repeating: "é", count: 8),
                vector: [1, 1]))
        #expect(try await store.count() == 3)
    }

    @Test(
        "a where: fragment that is not valid SQL is prepareFailed, before any search; nothing written"
    )
    func badFragment() async throws {
        let store = try await seeded()
        func isPrepare(_ error: SQLiteError) -> Bool {
            if case .prepareFailed = error { true } else { false }
        }
        for fragment in [
            "no_such_column = 1", "id = = 1", "1); DELETE FROM chunks; SELECT (1",
            "(SELECT count(*) FROM missing) > 0",
        ] {
            try await expectRefused(store, isPrepare) {
                _ = try await store.search(vector: [1, 0], where: fragment)
            }
            try await expectRefused(store, isPrepare) {
                _ = try await store.searchText("oat", where: fragment)
            }
            try await expectRefused(store, isPrepare) {
                _ = try await store.searchHybrid(text: "oat", vector: [1, 0], where: fragment)
            }
        }
        #expect(try await store.count() == 2)
    }

    @Test("a fragment that fails on a row (json_extract over text that is not JSON) is stepFailed")
    func fragmentFailingOnARow() async throws {
        let store = try await seeded()
        try await expectRefused(store, { if case .stepFailed = $0 { true } else { false } }) {
            _ = try await store.search(vector: [1, 0], where: "json_extract(metadata, '$.x') = 1")
        }
    }

    @Test("duplicate ids: the batch is all or nothing")
    func duplicateInBatch() async throws {
        let store = try await seeded()
        try await expectRefused(store, { if case .stepFailed(19, _) = $0 { true } else { false } })
        {
            try await store.insertBatch([
                VectorEntry(id: 5, content: "new", source: "a", vector: [1, 1]),
                VectorEntry(id: 1, content: "taken", source: "a", vector: [1, 1]),
            ])
        }
    }

    @Test("topK out of range, malformed FTS5, text search without its index")
    func searchArguments() async throws {
        let store = try await seeded()
        try await expectRefused(store, { $0.isCase(.invalidTopK(0)) }) {
            _ = try await store.search(vector: [1, 0], topK: 0)
        }
        try await expectRefused(store, { $0.isCase(.invalidTopK(VectorStore.maxTopK + 1)) }) {
            _ = try await store.searchText("oat", topK: VectorStore.maxTopK + 1)
        }
        try await expectRefused(
            store, { if case .invalidTextQuery("\"oat", _) = $0 { true } else { false } }
        ) {
            _ = try await store.searchText("\"oat")
        }
        let plain = try VectorStore(dbPath: ":memory:", dimension: 2, lexicalSearch: false)
        try await plain.insert(id: 1, content: "oat", source: "", vector: [1, 0])
        try await expectRefused(plain, { $0.isCase(.lexicalSearchDisabled) }) {
            _ = try await plain.searchText("oat")
        }
        try await expectRefused(plain, { $0.isCase(.lexicalSearchDisabled) }) {
            _ = try await plain.searchHybrid(text: "oat", vector: [1, 0])
        }
        #expect(try await plain.search(vector: [1, 0]).map(\.id) == [1])
    }

    @Test("raw SQL: bad SQL is prepareFailed, a failing statement stepFailed")
    func rawSQL() async throws {
        let store = try await seeded()
        try await expectRefused(store, { if case .prepareFailed = $0 { true } else { false } }) {
            _ = try await store.query("SELEC 1")
        }
        try await expectRefused(store, { if case .prepareFailed = $0 { true } else { false } }) {
            try await store.execute("INSERT INTO missing VALUES (1)")
        }
        try await store.execute("CREATE TABLE tags(name TEXT PRIMARY KEY)")
        try await store.execute("INSERT INTO tags VALUES ('a')")
        try await expectRefused(store, { if case .stepFailed(19, _) = $0 { true } else { false } })
        {
            try await store.execute("INSERT INTO tags VALUES (?)", bindings: [.text("a")])
        }
    }

    @Test(
        "opening: bad names and dimensions, a file that is not a database, another table of the name; nothing written"
    )
    func opening() async throws {
        let dir = try TemporaryDirectory()
        for name in [
            "bad name", "1abc", "", "sqlite_x", "trove_meta", String(repeating: "a", count: 65),
        ] {
            let error = #expect(throws: SQLiteError.self) {
                try VectorStore(dbPath: dir.path("names.db"), tableName: name)
            }
            #expect(error?.isCase(.invalidTableName(name)) == true)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("names.db")))
        for dimension in [0, -1, 70_000] {
            let error = #expect(throws: SQLiteError.self) {
                try VectorStore(dbPath: ":memory:", dimension: dimension)
            }
            #expect(error?.isCase(.invalidDimension(dimension)) == true)
        }

        let garbage = dir.path("garbage.db")
        let bytes = Data("# My notes\nbuy oat milk\n".utf8) + Data(repeating: 7, count: 4096)
        try bytes.write(to: URL(fileURLWithPath: garbage))
        let error = #expect(throws: SQLiteError.self) {
            try VectorStore(dbPath: garbage, dimension: 2)
        }
        guard case .databaseOpenFailed(26, _)? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: garbage)) == bytes)

        // A file from a newer Trove (its format version raised by hand) is refused, and stays so.
        let newer = dir.path("newer.db")
        do {
            let store = try VectorStore(dbPath: newer, dimension: 2)
            try await store.execute(
                "UPDATE trove_meta SET value = '99' WHERE key = 'format_version'")
        }
        let refused = #expect(throws: SQLiteError.self) {
            try VectorStore(dbPath: newer, dimension: 2)
        }
        guard case .databaseOpenFailed? = refused else {
            Issue.record("got \(String(describing: refused))")
            return
        }
        #expect(throws: SQLiteError.self) { try VectorStore(dbPath: newer, dimension: 2) }

        let shared = dir.path("shared.db")
        let store = try VectorStore(dbPath: shared, dimension: 2)
        try await store.execute("CREATE TABLE mine(x)")
        let taken = #expect(throws: SQLiteError.self) {
            try VectorStore(dbPath: shared, dimension: 2, tableName: "mine")
        }
        guard case .schemaMismatch? = taken else {
            Issue.record("got \(String(describing: taken))")
            return
        }
        #expect(
            try await store.query("SELECT name FROM sqlite_master WHERE name LIKE 'mine%'").map {
                $0.text("name")
            } == [
                "mine"
            ])
    }
}

extension SQLiteError {
    /// Whether this is `other`, for the cases whose values are all equatable.
    func isCase(_ other: SQLiteError) -> Bool {
        switch (self, other) {
        case (.invalidTopK(let a), .invalidTopK(let b)): a == b
        case (.invalidDimension(let a), .invalidDimension(let b)): a == b
        case (.invalidTableName(let a), .invalidTableName(let b)): a == b
        case (.lexicalSearchDisabled, .lexicalSearchDisabled): true
        default: false
        }
    }
}
