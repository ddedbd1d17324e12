import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("DocumentCollection")
struct DocumentCollectionTests {
    static let notes = DocumentSchema(
        id: .string,
        fields: [
            .text("title"), .text("body", default: ""),
            .text("email", optional: true, unique: true),
            .integer("stars", default: 0), .real("score", optional: true),
            .bool("done", default: false),
            .date("due", optional: true), .data("blob", optional: true),
            .json("meta", optional: true),
        ],
        indexes: [IndexDefinition([Field("title"), Field("stars")], unique: true)])

    static func open(_ schema: DocumentSchema = notes) async throws -> (
        TemporaryDirectory, Database, DocumentCollection
    ) {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("notes.trove"))
        return (dir, db, try await db.documents("notes", schema: schema))
    }

    @Test("every field type round-trips, with defaults for missing fields")
    func roundTrip() async throws {
        let (dir, _, notes) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let due = Date(timeIntervalSince1970: 1_800_000_000.25)
        try await notes.insert(
            Document(
                id: "a",
                [
                    "title": "Dentist", "email": "a@x.org", "stars": 3, "score": 0.5, "done": true,
                    "due": .date(due),
                    "blob": .data(Data([0, 1, 2, 255])),
                    "meta": ["tags": ["x", "y"], "n": 2, "ok": false],
                ]))
        let got = try #require(try await notes.fetch(id: "a"))
        #expect(got["title"] == "Dentist")
        #expect(got["body"] == "")
        #expect(got["stars"] == 3)
        #expect(got["score"] == 0.5)
        #expect(got["done"] == true)
        #expect(got["due"] == .date(due))
        #expect(got["blob"] == .data(Data([0, 1, 2, 255])))
        #expect(got["meta"] == ["tags": ["x", "y"], "n": 2, "ok": false])
        #expect(got.version == 1)
        try await notes.insert(Document(id: "b", ["title": "Plumber"]))
        let b = try #require(try await notes.fetch(id: "b"))
        #expect(b["stars"] == 0 && b["done"] == false && b["email"] == .null)
    }

    @Test("bad input is a typed error naming the field, and nothing of the batch is written")
    func typedErrors() async throws {
        let (dir, db, notes) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        try await notes.insert(Document(id: "keep", ["title": "Keep", "email": "k@x.org"]))
        let good = Document(id: "g", ["title": "Good"])
        let cases: [(Document, TroveError)] = [
            (
                Document(id: "u", ["title": "T", "color": "red"]),
                .unknownField(field: "color", known: ["id"] + Self.notes.fields.map(\.name))
            ),
            (
                Document(id: "t", ["title": 5]),
                .typeMismatch(field: "title", expected: "text", value: "5")
            ),
            (Document(id: "m", ["body": "no title"]), .missingField(field: "title")),
            (Document(id: "n", ["title": .null]), .missingField(field: "title")),
            (Document(id: "keep", ["title": "Again"]), .duplicateDocumentID("keep")),
            (
                Document(id: "e", ["title": "E", "email": "k@x.org"]),
                .uniqueViolation(field: "email", value: "\"k@x.org\"")
            ),
            (
                Document(id: "i", ["title": "Keep", "stars": 0]),
                .uniqueViolation(field: "title+stars", value: "'Keep', 0")
            ),
            (
                Document(id: .int(3), ["title": "T"]),
                .typeMismatch(field: "id", expected: "string id", value: "3")
            ),
            (
                Document(id: "j", ["title": "T", "meta": .date(Date())]),
                .typeMismatch(
                    field: "meta", expected: "json", value: Value.date(Date()).description)
            ),
        ]
        for (bad, expected) in cases {
            let error = await #expect(throws: TroveError.self) {
                try await notes.insert([good, bad])
            }
            if case .typeMismatch(let field, _, _) = expected,
                case .typeMismatch(let f2, _, _)? = error
            {
                #expect(field == f2)
            } else {
                #expect(error == expected)
            }
            #expect(try await notes.count() == 1, "nothing of the batch was written for \(bad)")
        }
        #expect(try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") == 1)
    }

    @Test("upsert, update, patch, compare-and-set and deletes")
    func mutations() async throws {
        let (dir, _, notes) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        try await notes.insert([
            Document(id: "a", ["title": "A", "meta": ["n": 1]]), Document(id: "b", ["title": "B"]),
            Document(id: "c", ["title": "C", "stars": 5]),
        ])
        try await notes.upsert([
            Document(id: "a", ["title": "A2"]), Document(id: "d", ["title": "D"]),
        ])
        #expect(try await notes.fetch(id: "a")?["title"] == "A2")
        #expect(try await notes.fetch(id: "a")?.version == 2)
        #expect(try await notes.fetch(id: "a")?["meta"] == .null, "upsert replaces every field")

        let v = try await notes.update(
            Document(id: "b", ["title": "B2", "stars": 2]), ifVersion: 1)
        #expect(v == 2)
        await #expect(throws: TroveError.versionConflict(id: "b", expected: 1, actual: 2)) {
            try await notes.update(Document(id: "b", ["title": "B3"]), ifVersion: 1)
        }
        await #expect(throws: TroveError.documentNotFound("zz")) {
            try await notes.update(Document(id: "zz", ["title": "Z"]))
        }

        let patched = try await notes.patch(
            "c", [Field("stars"): 6, Field("meta", path: "$.a"): ["x": 1]])
        #expect(
            patched["stars"] == 6 && patched["title"] == "C" && patched["meta"] == ["a": ["x": 1]])
        let again = try await notes.patch(
            "c", [Field("meta", path: "$.a.x"): .null, Field("score"): 1.5],
            ifVersion: patched.version)
        #expect(again["meta"] == ["a": [:]] && again["score"] == 1.5)
        await #expect(throws: TroveError.self) {
            try await notes.patch("c", [Field("stars"): "six"])
        }
        await #expect(
            throws: TroveError.versionConflict(id: "c", expected: 1, actual: again.version)
        ) {
            try await notes.patch("c", [Field("stars"): 1], ifVersion: 1)
        }

        #expect(try await notes.delete(id: "d"))
        #expect(try await !notes.delete(id: "d"))
        #expect(try await notes.delete(where: Field("stars") > 5) == 1)
        #expect(try await notes.fetch().map(\.id) == ["a", "b"])

        // Raw SQL updates raise the version too.
        try await notes.database.execute("UPDATE notes SET stars = 9 WHERE id = 'a'")
        #expect(try await notes.fetch(id: "a")?.version == 3)
    }

    @Test(
        "an update that fails inside a transaction leaves nothing and the transaction goes on; each update logs once"
    )
    func updatesInsideATransaction() async throws {
        let (dir, db, notes) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        try await notes.insert([
            Document(id: "a", ["title": "A", "email": "a@x.org"]),
            Document(id: "b", ["title": "B"]),
            Document(id: "k", ["title": "Keep"]),
        ])
        let logged = try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") ?? 0
        // Updates take no savepoint (one statement each): a failed one must still leave nothing.
        let versions = try await db.write { tx -> [Int64] in
            let t = try tx.documents("notes")
            #expect(throws: TroveError.uniqueViolation(field: "email", value: "\"a@x.org\"")) {
                try t.update(Document(id: "b", ["title": "B1", "email": "a@x.org"]))
            }
            #expect(throws: TroveError.uniqueViolation(field: "title+stars", value: "'Keep', 0")) {
                try t.update(Document(id: "b", ["title": "Keep"]))
            }
            #expect(throws: TroveError.versionConflict(id: "b", expected: 7, actual: 1)) {
                try t.update(Document(id: "b", ["title": "B2"]), ifVersion: 7)
            }
            #expect(throws: TroveError.documentNotFound("zz")) {
                try t.update(Document(id: "zz", ["title": "Z"]))
            }
            let first = try t.update(Document(id: "b", ["title": "B3", "stars": 4]))
            return [
                first,
                try t.update(Document(id: "b", ["title": "B4", "stars": 4]), ifVersion: first),
            ]
        }
        #expect(versions == [2, 3])
        let b = try #require(try await notes.fetch(id: "b"))
        #expect(b["title"] == "B4" && b["stars"] == 4 && b["email"] == .null && b.version == 3)
        #expect(try await notes.fetch(id: "a")?.version == 1)
        #expect(try await notes.fetch(id: "k")?.version == 1)
        #expect(
            try await db.query("SELECT count(*) AS n FROM notes_log").first?.int("n") == logged + 2)
    }

    @Test("scan stops early; UUID and integer ids work")
    func scanAndIDs() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("ids.trove"))
        let things = try await db.documents(
            "things", schema: DocumentSchema(id: .uuid, fields: [.integer("n")]))
        let ids = (0..<5).map { _ in UUID() }
        try await things.insert(
            ids.enumerated().map { Document(id: .uuid($1), ["n": .int(Int64($0))]) })
        #expect(try await things.fetch(id: .uuid(ids[2]))?["n"] == 2)
        let seen = try await db.read { r -> Int in
            var count = 0
            try r.documents("things").scan { _ in
                count += 1
                return count < 3
            }
            return count
        }
        #expect(seen == 3)
        let numbered = try await db.documents(
            "numbered", schema: DocumentSchema(fields: [.text("s")]))
        try await numbered.insert([Document(id: 10, ["s": "x"]), Document(id: -4, ["s": "y"])])
        #expect(try await numbered.fetch().map(\.id) == [-4, 10])
    }

    @Test("schemaless documents keep undeclared fields, queryable by path")
    func schemaless() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("free.trove"))
        let events = try await db.documents("events", schema: .documents(id: .string))
        try await events.insert([
            Document(id: "e1", ["kind": "click", "user": ["name": "Ada", "age": 36]]),
            Document(id: "e2", ["kind": "view", "user": ["name": "Bo", "age": 20]]),
        ])
        #expect(
            try await events.fetch(Query(Field("user", path: "$.age") > 30)).map(\.id) == ["e1"])
        #expect(try await events.fetch(id: "e2")?["user"] == ["name": "Bo", "age": 20])
        await #expect(
            throws: TroveError.invalidPath(
                field: "user", path: "$.a'b", reason: "unexpected character '''")
        ) {
            try await events.fetch(Query(Field("user", path: "$.a'b") == 1))
        }
    }

    @Test("a schema mismatch on reopen changes nothing; names that collide are refused")
    func reopen() async throws {
        let (dir, db, notes) = try await Self.open()
        try await notes.insert(Document(id: "a", ["title": "A"]))
        var other = Self.notes
        other.fields.append(.text("extra", optional: true))
        await #expect(throws: TroveError.self) { try await db.documents("notes", schema: other) }
        let reopened = try Database(path: dir.path("notes.trove"))
        #expect(try await reopened.documents(named: "notes").count() == 1)
        #expect(try await reopened.collectionNames() == ["notes"])
        try await reopened.execute("CREATE TABLE clash(x)")
        await #expect(
            throws: TroveError.invalidName(
                "clash", reason: "the file already has a table, index or trigger named clash")
        ) {
            try await reopened.documents("clash", schema: DocumentSchema(fields: [.text("t")]))
        }
        #expect(try await reopened.dropCollection("notes"))
        #expect(try await reopened.collectionNames() == [])
    }
}
