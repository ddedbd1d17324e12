import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

@Suite("Document updates: changed columns only, function-free checks")
struct DocumentUpdateTests {
    static let schema = DocumentSchema(
        fields: [
            .text("title"), .text("body"), .integer("year", indexed: true), .real("score"),
            .json("tags", optional: true),
        ],
        fullText: FullTextDefinition(fields: ["title", "body"]))

    @Test(
        "an update sets only what changed: the text index, the log, the version and every field stay right"
    )
    func changedColumnsOnly() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("u.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert(
            (1...20).map { i in
                Document(
                    id: .int(Int64(i)),
                    [
                        "title": .string("title \(i)"), "body": "kettle",
                        "year": .int(Int64(2000 + i)), "score": 0.5,
                        "tags": ["a"],
                    ])
            })
        let logBefore = try await db.query("SELECT count(*) FROM docs_log")[0].int64(at: 0)!
        // Only the score: FTS5 keeps the row (its trigger is not even run).
        #expect(
            try await docs.update(
                Document(
                    id: 3,
                    [
                        "title": "title 3", "body": "kettle", "year": 2003, "score": 0.75,
                        "tags": ["a"],
                    ]))
                == 2)
        // Nothing changed at all: still a new version and a log entry.
        #expect(
            try await docs.update(
                Document(
                    id: 4,
                    [
                        "title": "title 4", "body": "kettle", "year": 2004, "score": 0.5,
                        "tags": ["a"],
                    ])) == 2
        )
        // The body (full text), the indexed year, and a cleared optional.
        #expect(
            try await docs.update(
                Document(
                    id: 5, ["title": "title 5", "body": "zeppelin", "year": 1999, "score": 0.5]))
                == 2)
        #expect(
            try await db.query("SELECT count(*) FROM docs_log")[0].int64(at: 0)! == logBefore + 3)
        #expect(
            try await docs.fetch(id: 3)?.fields == [
                "title": "title 3", "body": "kettle", "year": 2003, "score": 0.75, "tags": ["a"],
            ])
        #expect(
            try await docs.fetch(id: 5)?.fields == [
                "title": "title 5", "body": "zeppelin", "year": 1999, "score": 0.5, "tags": .null,
            ])
        #expect(
            try await docs.search(Query().matching(.typed("zeppelin"))).map(\.record.id) == [5])
        #expect(try await docs.search(Query().matching(.typed("kettle")).limit(50)).count == 19)
        #expect(try await docs.fetch(Query(Field("year") < 2000)).map(\.id) == [5])
        try await db.execute(script: "INSERT INTO docs_fts(docs_fts) VALUES ('integrity-check')")
        // Versions still guard: a stale version is refused and changes nothing.
        await #expect(throws: TroveError.versionConflict(id: 3, expected: 1, actual: 2)) {
            try await docs.update(
                Document(id: 3, ["title": "x", "body": "y", "year": 1, "score": 0]), ifVersion: 1)
        }
        #expect(try await docs.fetch(id: 3)?.fields["title"] == "title 3")
    }

    @Test(
        "a unique violation on update names the field and writes nothing, inside a transaction that goes on"
    )
    func failedUpdateWritesNothing() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("u.trove"))
        let docs = try await db.documents(
            "docs", schema: DocumentSchema(fields: [.text("name", unique: true), .integer("n")]))
        try await docs.insert([
            Document(id: 1, ["name": "a", "n": 1]), Document(id: 2, ["name": "b", "n": 2]),
        ])
        try await db.write { tx in
            let writer = try tx.documents("docs")
            #expect(throws: TroveError.uniqueViolation(field: "name", value: "\"a\"")) {
                try writer.update(Document(id: 2, ["name": "a", "n": 20]))
            }
            try writer.update(Document(id: 1, ["name": "a", "n": 10]))
        }
        #expect(try await docs.fetch(id: 2)?.fields == ["name": "b", "n": 2])
        #expect(try await docs.fetch(id: 2)?.version == 1)
        #expect(try await docs.fetch(id: 1)?.fields == ["name": "a", "n": 10])
    }

    @Test(
        "the checks without function calls accept exactly what typeof accepted",
        arguments: [
            "5", "2.0", "2.5", "'5'", "'2.0'", "'abc'", "''", "x'01'", "x''", "1e30", "-0.0",
            "'  7'",
            "9223372036854775807",
        ])
    func checks(literal: String) throws {
        let types: [(FieldType, String, String)] = [
            (.text, "TEXT", "typeof(c) = 'text'"), (.integer, "INTEGER", "typeof(c) = 'integer'"),
            (.real, "REAL", "typeof(c) IN ('real', 'integer')"),
            (.date, "REAL", "typeof(c) IN ('real', 'integer')"),
            (.data, "BLOB", "typeof(c) = 'blob'"),
        ]
        let connection = try Connection(.inMemory)
        for (type, affinity, typeofCheck) in types {
            let layout = DocumentLayout(
                name: "t", schema: DocumentSchema(fields: [FieldDefinition("c", type)]))
            let ours = try layout.columnDefinition(FieldDefinition("c", type))
            func stored(_ definition: String) throws -> String? {
                try connection.execute(
                    script: "DROP TABLE IF EXISTS t; CREATE TABLE t(\(definition))")
                do {
                    try connection.execute(script: "INSERT INTO t VALUES (\(literal))")
                } catch let error as SQLiteError where error.code == .constraint {
                    return nil
                }
                return try connection.query("SELECT quote(c) FROM t")[0].string(at: 0)
            }
            #expect(!ours.contains("typeof"), "\(ours)")
            #expect(
                try stored(ours)
                    == stored(
                        "\"c\" \(affinity) NOT NULL CHECK (\(typeofCheck.replacingOccurrences(of: "c", with: "\"c\"")))"
                    ),
                "\(type) \(literal)")
        }
    }

    @Test("JSON fields read in place round-trip every value, escapes included")
    func jsonRoundTrip() async throws {
        var rng = SeededGenerator(seed: 5)
        let strings = ModelCodingDifferentialTests.texts
        func value(_ depth: Int) -> Value {
            switch Int.random(in: 0...(depth > 2 ? 3 : 5), using: &rng) {
            case 0: return .string(strings.randomElement(using: &rng)!)
            case 1: return .int(Int64.random(in: -1_000...1_000, using: &rng))
            case 2: return .double(Double(Int.random(in: -100...100, using: &rng)) / 8)
            case 3: return Bool.random(using: &rng) ? .bool(true) : .null
            case 4:
                return .array(
                    (0..<Int.random(in: 0...3, using: &rng)).map { _ in value(depth + 1) })
            default:
                return .object(
                    Dictionary(
                        (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                            (strings.randomElement(using: &rng)!, value(depth + 1))
                        },
                        uniquingKeysWith: { a, _ in a }))
            }
        }
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("j.trove"))
        let docs = try await db.documents(
            "docs", schema: DocumentSchema(fields: [.json("v", optional: true)]))
        let documents = (1...200).map { Document(id: .int(Int64($0)), ["v": value(0)]) }
        try await docs.insert(documents)
        let fetched = try await docs.fetch()
        #expect(fetched.map(\.fields) == documents.map { $0.fields })
    }
}
