import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveSQLite
import TroveTestSupport

/// Each bad input gets a typed error, and the data written before it is unchanged: same count,
/// same rows (content, metadata, vectors), same vector and text search answers.
@Suite("Bad input: typed errors, prior data intact")
struct BadInputTests {
    /// Runs `bad` against a seeded collection and checks that nothing observable changed.
    func rejected<E: Error>(
        _ errorType: E.Type, matches: (E) -> Bool = { _ in true },
        sourceLocation: SourceLocation = #_sourceLocation,
        _ bad: (SearchCollection) async throws -> Void
    ) async throws {
        let collection = try await seededCollection(try Database())
        let before = try await CollectionSnapshot(collection)
        await expectError(
            errorType, { try await bad(collection) }, matches: matches,
            sourceLocation: sourceLocation)
        let after = try await CollectionSnapshot(collection)
        #expect(
            before == after, "a rejected input changed the collection",
            sourceLocation: sourceLocation)
    }

    static let nonFinite: [Float] = [.nan, .infinity, -.infinity, .signalingNaN]

    @Test(
        "NaN and infinite components are rejected on insert, in a batch, on upsert/update and search",
        arguments: nonFinite)
    func nonFiniteComponents(_ bad: Float) async throws {
        let isInvalid: (TroveError) -> Bool = {
            if case .invalidVector = $0 { true } else { false }
        }
        let vector: [Float] = [0.1, bad, 0.3, 0.4]
        try await rejected(TroveError.self, matches: isInvalid) {
            try await $0.insert(VectorEntry(id: 100, content: "bad", vector: vector))
        }
        // The bad row sits in the middle of a batch: the rows before it must not be written.
        try await rejected(TroveError.self, matches: isInvalid) { c in
            try await c.insert([
                VectorEntry(id: 100, content: "good", vector: [1, 0, 0, 0]),
                VectorEntry(id: 101, content: "bad", vector: vector),
                VectorEntry(id: 102, content: "good", vector: [0, 1, 0, 0]),
            ])
        }
        try await rejected(TroveError.self, matches: isInvalid) {
            try await $0.upsert(VectorEntry(id: 3, content: "replaced", vector: vector))
        }
        try await rejected(TroveError.self, matches: isInvalid) {
            try await $0.update(VectorEntry(id: 3, content: "replaced", vector: vector))
        }
        try await rejected(TroveError.self, matches: isInvalid) {
            _ = try await $0.search(vector: vector)
        }
        try await rejected(TroveError.self, matches: isInvalid) {
            _ = try await $0.search(
                Query().nearest(to: vector, in: "embedding").matching(.typed("row")))
        }
    }

    @Test("a [Double] vector whose values overflow Float is rejected, not stored as infinity")
    func doubleOverflow() async throws {
        try await rejected(
            TroveError.self, matches: { if case .invalidVector = $0 { true } else { false } }
        ) {
            try await $0.insert(
                VectorEntry(id: 100, content: "huge", vector: [1e300, 0, 0, 0] as [Double]))
        }
    }

    @Test(
        "wrong dimensions are dimensionMismatch; an empty vector without an embedder to fill it is embedderRequired",
        arguments: [0, 1, 3, 5, 384])
    func wrongDimension(_ dimension: Int) async throws {
        let vector = [Float](repeating: 0.5, count: dimension)
        let expected = TroveError.dimensionMismatch(expected: 4, actual: dimension)
        let onInsert =
            dimension == 0 ? TroveError.embedderRequired(collection: "items") : expected
        try await rejected(TroveError.self, matches: { $0 == onInsert }) {
            try await $0.insert(VectorEntry(id: 100, content: "x", vector: vector))
        }
        try await rejected(TroveError.self, matches: { $0 == onInsert }) { c in
            try await c.insert([
                VectorEntry(id: 100, content: "ok", vector: [1, 0, 0, 0]),
                VectorEntry(id: 101, content: "x", vector: vector),
            ])
        }
        try await rejected(TroveError.self, matches: { $0 == expected }) {
            _ = try await $0.search(vector: vector)
        }
    }

    @Test("a zero vector under cosine is invalidVector")
    func zeroVector() async throws {
        try await rejected(
            TroveError.self, matches: { if case .invalidVector = $0 { true } else { false } }
        ) {
            try await $0.insert(VectorEntry(id: 100, content: "zero", vector: [0, 0, 0, 0]))
        }
    }

    @Test("oversized metadata is metadataTooLarge with the limit and the actual size")
    func oversizedMetadata() async throws {
        let big = "{\"blob\":\"" + String(repeating: "x", count: 20_000) + "\"}"
        try await rejected(
            TroveError.self,
            matches: {
                $0
                    == .metadataTooLarge(
                        limit: CollectionConfiguration.defaultMetadataByteLimit,
                        actual: big.utf8.count)
            }
        ) {
            try await $0.insert(
                VectorEntry(id: 100, content: "x", metadata: big, vector: [1, 0, 0, 0]))
        }
        // Multi-byte characters count as UTF-8 bytes, not characters.
        let wide = "{\"k\":\"" + String(repeating: "é", count: 9_000) + "\"}"
        try await rejected(
            TroveError.self, matches: { if case .metadataTooLarge = $0 { true } else { false } }
        ) {
            try await $0.upsert(
                VectorEntry(id: 2, content: "x", metadata: wide, vector: [1, 0, 0, 0]))
        }
    }

    @Test(
        "metadata that is not a JSON object, or not JSON, is invalidMetadata",
        arguments: [
            "[1, 2]", "\"text\"", "42", "null", "true", "{", "{\"a\": }", "", "{'a': 1}",
            "{\"a\":1}x",
        ])
    func invalidMetadata(_ metadata: String) async throws {
        try await rejected(
            TroveError.self, matches: { if case .invalidMetadata = $0 { true } else { false } }
        ) {
            try await $0.insert(
                VectorEntry(id: 100, content: "x", metadata: metadata, vector: [1, 0, 0, 0]))
        }
        try await rejected(
            TroveError.self, matches: { if case .invalidMetadata = $0 { true } else { false } }
        ) {
            try await $0.update(
                VectorEntry(id: 1, content: "x", metadata: metadata, vector: [1, 0, 0, 0]))
        }
    }

    @Test("raw SQL cannot store non-object metadata or a wrong-length vector (CHECK constraints)")
    func rawSQLConstraints() async throws {
        try await rejected(SQLiteError.self, matches: { $0.code == .constraint }) {
            try await $0.database.execute("UPDATE items SET metadata = '[1]' WHERE id = 1")
        }
        try await rejected(SQLiteError.self, matches: { $0.code == .constraint }) {
            try await $0.database.execute("UPDATE items SET embedding = x'00000000' WHERE id = 1")
        }
    }

    @Test(
        "malformed FTS5 syntax is invalidTextQuery; the same text typed by a person is not an error",
        arguments: [
            "\"unterminated", "AND", "a AND", "(a OR b", "NEAR(a b", "nosuchcolumn: word",
            "a + * b",
            "NOT", "^", "a OR OR b", ")", "*",
        ])
    func malformedFTS5(_ query: String) async throws {
        try await rejected(
            TroveError.self, matches: { if case .invalidTextQuery = $0 { true } else { false } }
        ) {
            _ = try await $0.search(Query().matching(.fts5(query)))
        }
        try await rejected(
            TroveError.self, matches: { if case .invalidTextQuery = $0 { true } else { false } }
        ) {
            _ = try await $0.search(
                Query().nearest(to: [1, 0, 0, 0], in: "embedding").matching(.fts5(query)))
        }
        let collection = try await seededCollection(try Database())
        _ = try await collection.search(Query().matching(.typed(query)))
        _ = try await collection.search(
            Query().nearest(to: [1, 0, 0, 0], in: "embedding").matching(.typed(query)))
    }

    @Test(
        "hostile SQL in where: fragments is invalidFilter and runs nothing",
        arguments: [
            "1); DROP TABLE items; --",
            "1); DELETE FROM items; --",
            "id > 0; DELETE FROM items",
            "id IN (DELETE FROM items RETURNING id)",
            "(SELECT 1 FROM items) OR (1 = 1",
            "1 = 1) OR (1 = 1",
            "load_extension('/tmp/x')",
            "nosuchcolumn = 1",
            // a placeholder without a binding value is fine (NULL); two without values is not
            "id = ?",
            "id = ? AND source = ? AND content = ?",
        ])
    func hostileFilter(_ sql: String) async throws {
        let collection = try await seededCollection(try Database())
        let before = try await CollectionSnapshot(collection)
        for run in [
            {
                _ = try await collection.search(
                    vector: [1, 0, 0, 0], where: .sql(sql, [.integer(1)]),
                    limit: 5)
            },
            {
                _ = try await collection.search(
                    Query(.sql(sql, [.integer(1)])).matching(.typed("row")).limit(5))
            },
            {
                _ = try await collection.search(
                    Query(.sql(sql, [.integer(1)])).nearest(to: [1, 0, 0, 0], in: "embedding")
                        .matching(.typed("row")))
            },
        ] as [() async throws -> Void] {
            do {
                try await run()
                // Accepted only when it was a plain, read-only predicate over the columns.
                #expect(sql == "id = ?", "accepted hostile filter \(sql)")
            } catch let error as TroveError {
                guard case .invalidFilter = error else {
                    Issue.record("wrong error \(error)")
                    continue
                }
            }
        }
        #expect(try await CollectionSnapshot(collection) == before)
        #expect(
            try await collection.database.query(
                "SELECT name FROM sqlite_master WHERE name = 'items'"
            ).count == 1)
    }

    @Test("hostile values in bindings and source are data, never SQL")
    func hostileValues() async throws {
        let collection = try await seededCollection(try Database())
        let before = try await CollectionSnapshot(collection)
        let hostile = "' OR 1=1; DROP TABLE items; --"
        #expect(
            try await collection.search(vector: [1, 0, 0, 0], where: .source(hostile)).isEmpty)
        #expect(
            try await collection.search(
                vector: [1, 0, 0, 0],
                where: .sql("source = ?", [.text(hostile)])
            ).isEmpty)
        #expect(
            try await collection.search(Query(.source(hostile)).matching(.typed("row"))).isEmpty)
        #expect(try await collection.count(where: .source(hostile)) == 0)
        #expect(try await collection.delete(where: .source(hostile)) == 0)
        #expect(try await CollectionSnapshot(collection) == before)
        // Stored as data and read back byte for byte.
        try await collection.insert(
            VectorEntry(id: 500, content: hostile, source: hostile, vector: [0, 0, 1, 0]))
        #expect(try await collection.fetch(id: 500)?.source == hostile)
        #expect(try await collection.count() == before.count + 1)
    }

    @Test(
        "hostile collection and table names are invalidName and create nothing",
        arguments: [
            "items; DROP TABLE items", "x\"; DROP TABLE items; --", "", "1abc", "a b", "a-b",
            "sqlite_master",
            "trove_meta", "SQLITE_x", "naïve", String(repeating: "a", count: 65), "a\0b",
            "items_fts)",
        ])
    func hostileNames(_ name: String) async throws {
        let database = try Database()
        let collection = try await seededCollection(database)
        let before = try await CollectionSnapshot(collection)
        let objects = try await database.query("SELECT count(*) FROM sqlite_master")[0].int(at: 0)
        await expectError(
            TroveError.self, { _ = try await SearchCollection(name, in: database, dimension: 4) },
            matches: { if case .invalidName = $0 { true } else { false } })
        #expect(
            try await database.query("SELECT count(*) FROM sqlite_master")[0].int(at: 0) == objects)
        #expect(try await CollectionSnapshot(collection) == before)
    }

    @Test(
        "a name that collides with an existing table of the app is invalidName, the table untouched"
    )
    func collidingName() async throws {
        let database = try Database()
        try await database.execute(
            script: "CREATE TABLE mine(x); INSERT INTO mine VALUES (1); CREATE TABLE notes_log(y)")
        await expectError(
            TroveError.self, { _ = try await SearchCollection("mine", in: database, dimension: 4) },
            matches: { if case .invalidName = $0 { true } else { false } })
        await expectError(
            TroveError.self,
            { _ = try await SearchCollection("notes", in: database, dimension: 4) },
            matches: { if case .invalidName = $0 { true } else { false } })
        #expect(try await database.query("SELECT x FROM mine")[0].int(at: 0) == 1)
        #expect(try await database.collectionNames().isEmpty)
        #expect(
            try await database.query("SELECT count(*) FROM sqlite_master WHERE name LIKE 'notes%'")[
                0
            ].int(at: 0) == 1)
    }

    @Test(
        "topK 0, negative and huge are invalidLimit; the maximum itself works",
        arguments: [0, -1, Int.min, Query.maximumLimit + 1, Int.max])
    func badTopK(_ k: Int) async throws {
        let expected = TroveError.invalidLimit(k, maximum: Query.maximumLimit)
        try await rejected(TroveError.self, matches: { $0 == expected }) {
            _ = try await $0.search(vector: [1, 0, 0, 0], limit: k)
        }
        try await rejected(TroveError.self, matches: { $0 == expected }) {
            _ = try await $0.search(Query().matching(.typed("row")).limit(k))
        }
        try await rejected(TroveError.self, matches: { $0 == expected }) {
            _ = try await $0.search(
                Query().nearest(to: [1, 0, 0, 0], in: "embedding").matching(.typed("row")).limit(k))
        }
        let collection = try await seededCollection(try Database())
        #expect(
            try await collection.search(vector: [1, 0, 0, 0], limit: Query.maximumLimit).count == 20
        )
        #expect(
            try await collection.search(
                Query().nearest(to: [1, 0, 0, 0], in: "embedding").matching(.typed("row")).limit(
                    Query.maximumLimit)
            ).count == 20)
    }

    @Test("10 MB of text is stored, indexed and read back; a 2,000-word typed query does not fail")
    func enormousText() async throws {
        let collection = try await seededCollection(try Database())
        let before = try await CollectionSnapshot(collection)
        var rng = SeededGenerator(seed: 99)
        var words: [String] = []
        var size = 0
        while size < 10_000_000 {
            let word = "w\(rng.next() % 50_000)"
            words.append(word)
            size += word.utf8.count + 1
        }
        let text = words.joined(separator: " ") + " needleword"
        try await collection.insert(VectorEntry(id: 1000, content: text, vector: [0, 0, 0, 1]))
        #expect(try await collection.fetch(id: 1000)?.content == text)
        #expect(try await collection.search(Query().matching("needleword")).map(\.id) == [1000])
        // The earlier rows answer exactly as before.
        #expect(try await collection.count() == before.count + 1)
        for row in before.rows { #expect(try await collection.fetch(id: row.id) == row) }
        let query = words.prefix(2_000).joined(separator: " ")
        do {
            let hits = try await collection.search(Query().matching(.typed(query)).limit(5))
            #expect(hits.first?.id == 1000)
        } catch let error as TroveError {
            // A query too large for FTS5's parser may be refused, but only with a typed error.
            guard case .invalidTextQuery = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }
}
