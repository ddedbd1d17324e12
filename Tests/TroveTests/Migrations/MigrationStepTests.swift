import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Every declarative step forward on data: the migrated collection must equal a fresh one
/// created with the final schema and holding the expected documents (columns, every index,
/// trigger and full-text table, stored schema, rows), and `verify()` must find nothing.
@Suite("Migration steps")
struct MigrationStepTests {
    static let base = DocumentSchema(
        fields: [
            .text("title"), .text("body"), .integer("year", indexed: true),
            .text("tag", optional: true),
        ],
        indexes: [IndexDefinition([Field("year"), Field("title")])],
        fullText: FullTextDefinition(["title": 2, "body": 1]))

    static func documents(_ count: Int = 30, seed: UInt64 = 7) -> [Document] {
        var rng = SeededGenerator(seed: seed)
        let words = ["river", "stone", "cloud", "paper", "garden", "window", "engine", "ticket"]
        return (1...Int64(count)).map { id in
            Document(
                id: .int(id),
                [
                    "title": .string(
                        (0..<2).map { _ in words.randomElement(using: &rng)! }.joined(
                            separator: " ")),
                    "body": .string(
                        (0..<6).map { _ in words.randomElement(using: &rng)! }.joined(
                            separator: " ")),
                    "year": .int(Int64.random(in: 1990...2020, using: &rng)),
                    "tag": id % 4 == 0 ? .null : .string("t\(id % 3)"),
                ])
        }
    }

    /// Seeds `start` with `seed`, migrates with `steps`, and compares with a fresh collection.
    @discardableResult
    static func migrate(
        _ start: DocumentSchema, _ seed: [Document], _ steps: [MigrationStep],
        expect schema: DocumentSchema, _ expected: [Document], path: String? = nil
    ) async throws -> Database {
        let db = try path.map { try Database(path: $0) } ?? Database()
        let before = try await db.documents("c", schema: start)
        if !seed.isEmpty { try await before.insert(seed) }
        var migrator = Migrator()
        migrator.registerMigration("m", steps: steps)
        try await migrator.migrate(db)
        let fresh = try Database()
        let reference = try await fresh.documents("c", schema: schema)
        if !expected.isEmpty { try await reference.insert(expected) }
        let migrated = try await CollectionShape.of("c", in: db)
        let wanted = try await CollectionShape.of("c", in: fresh)
        #expect(migrated.schema == wanted.schema)
        #expect(migrated.columns == wanted.columns)
        #expect(
            migrated.objects == wanted.objects,
            "\(migrated.objects.symmetricDifference(wanted.objects))")
        #expect(migrated.documents == wanted.documents)
        #expect(try await db.documents(named: "c").verify() == [])
        return db
    }

    /// Expects `steps` to fail with `error` and leave the file exactly as it was.
    static func expectRefusal<E: Error & Equatable>(
        _ start: DocumentSchema, _ seed: [Document], _ steps: [MigrationStep], _ error: E
    ) async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let collection = try await db.documents("c", schema: start)
        if !seed.isEmpty { try await collection.insert(seed) }
        let before = try await FileSnapshot.of(db)
        var migrator = Migrator()
        migrator.registerMigration("m", steps: steps)
        await #expect(throws: error) { try await migrator.migrate(db) }
        #expect(try await FileSnapshot.of(db) == before)
        #expect(try await migrator.pendingMigrations(in: db) == ["m"])
    }

    static func with(_ documents: [Document], _ change: (inout Document) -> Void) -> [Document] {
        documents.map {
            var d = $0
            change(&d)
            return d
        }
    }

    // MARK: add

    @Test("add an optional field, a defaulted field and an indexed field (ALTER TABLE)")
    func addField() async throws {
        let docs = Self.documents()
        let schema = Self.base.adding(.text("note", optional: true)).adding(
            .integer("rank", default: 3, indexed: true))
        try await Self.migrate(
            Self.base, docs,
            [
                .addField(.text("note", optional: true), to: "c"),
                .addField(.integer("rank", default: 3, indexed: true), to: "c"),
            ], expect: schema,
            Self.with(docs) {
                $0["note"] = .null
                $0["rank"] = 3
            })
        // Defaults of every literal kind ALTER TABLE takes (a negative integer, a bool, JSON, a blob).
        let literals: [FieldDefinition] = [
            .integer("delta", default: -5), .bool("flag", default: false),
            .json("meta", default: ["a": 1]), .data("blob", default: .data(Data([1, 2]))),
        ]
        try await Self.migrate(
            Self.base, docs, literals.map { .addField($0, to: "c") },
            expect: literals.reduce(Self.base) { $0.adding($1) },
            Self.with(docs) { d in for f in literals { d[f.name] = f.defaultValue } })
    }

    @Test(
        "add fields SQLite cannot ADD: a real default, a unique field, a required field to an empty collection"
    )
    func addFieldRebuilds() async throws {
        let docs = Self.documents()
        try await Self.migrate(
            Self.base, docs, [.addField(.real("score", default: 0.5), to: "c")],
            expect: Self.base.adding(.real("score", default: 0.5)),
            Self.with(docs) { $0["score"] = 0.5 })
        try await Self.migrate(
            Self.base, docs, [.addField(.text("code", optional: true, unique: true), to: "c")],
            expect: Self.base.adding(.text("code", optional: true, unique: true)),
            Self.with(docs) { $0["code"] = .null })
        try await Self.migrate(
            Self.base, [], [.addField(.text("must"), to: "c")],
            expect: Self.base.adding(.text("must")), [])
    }

    @Test("a required field without a default on a non-empty collection fails before any change")
    func requiredFieldWithoutDefault() async throws {
        try await Self.expectRefusal(
            Self.base, Self.documents(), [.addField(.text("must"), to: "c")],
            MigrationError.requiredFieldWithoutDefault(collection: "c", field: "must", rows: 30))
        try await Self.expectRefusal(
            Self.base, Self.documents(),
            [.addField(.text("code", default: "x", unique: true), to: "c")],
            MigrationError.duplicateValues(
                collection: "c", keys: ["code"], value: "\"x\" (the default)"))
        try await Self.expectRefusal(
            Self.base, Self.documents(), [.addField(.text("title", optional: true), to: "c")],
            MigrationError.invalidStep(migration: "m", reason: "c already has a field title"))
    }

    @Test("adding a declared field moves the values undeclared documents kept under that name")
    func addFieldFromUndeclared() async throws {
        let start = DocumentSchema.documents()
        let docs: [Document] = (1...10).map { (n: Int64) -> Document in
            var fields: [String: Value] = ["name": .string("n\(n)")]
            if n % 3 != 0 { fields["year"] = .int(2000 + n) }
            return Document(id: .int(n), fields)
        }
        var schema = start
        schema.fields = [.integer("year", optional: true)]
        try await Self.migrate(
            start, docs, [.addField(.integer("year", optional: true), to: "c")], expect: schema,
            Self.with(docs) { if $0["year"] == nil { $0["year"] = .null } })
        // A stored value of the wrong type names its document.
        try await Self.expectRefusal(
            start, docs + [Document(id: 11, ["year": "soon"])],
            [.addField(.integer("year", optional: true), to: "c")],
            MigrationError.transformFailed(
                collection: "c", field: "year", id: 11,
                reason:
                    "\(TroveError.typeMismatch(field: "year", expected: "integer", value: "\"soon\""))"
            ))
    }

    // MARK: rename, remove

    @Test(
        "rename a field in the full-text index, a per-field index, a compound index and a vector index"
    )
    func renameField() async throws {
        var start = Self.base.adding(.vector("embedding", dimension: 4, optional: true))
        start.vectorIndexes = ["embedding": .hnsw()]
        var rng = SeededGenerator(seed: 3)
        let docs = Self.with(Self.documents()) {
            $0["embedding"] = .vector(rng.unitVector(dimension: 4))
        }
        var schema = start
        schema.fields = [
            .text("headline"), .text("body"), .integer("published", indexed: true),
            .text("tag", optional: true),
            .vector("vec", dimension: 4, optional: true),
        ]
        schema.indexes = [IndexDefinition([Field("published"), Field("headline")])]
        schema.fullText = FullTextDefinition(["headline": 2, "body": 1])
        schema.vectorIndexes = ["vec": .hnsw()]
        let renamed = docs.map { d in
            Document(
                id: d.id,
                [
                    "headline": d["title"]!, "body": d["body"]!, "published": d["year"]!,
                    "tag": d["tag"]!,
                    "vec": d["embedding"]!,
                ])
        }
        let db = try await Self.migrate(
            start, docs,
            [
                .renameField("title", to: "headline", in: "c"),
                .renameField("year", to: "published", in: "c"),
                .renameField("embedding", to: "vec", in: "c"),
            ], expect: schema, renamed)
        let c = try await db.documents(named: "c")
        let word = docs[0]["title"]!.stringValue!.split(separator: " ")[0]
        let hits = try await c.search(
            Query().matching(.typed(String(word)), in: ["headline"]).limit(100))
        #expect(
            Set(hits.map(\.record.id))
                == Set(renamed.filter { $0["headline"]!.stringValue!.contains(word) }.map(\.id)))
        let nearest = try await c.search(
            Query().nearest(to: docs[5]["embedding"]!.vectorValue!, in: "vec").limit(1))
        #expect(nearest.first?.record.id == docs[5].id)
    }

    @Test("remove a field with its own index; a field an index or the text index uses is refused")
    func removeField() async throws {
        var start = Self.base
        start.indexes = []
        let docs = Self.documents()
        var schema = start
        schema.fields.removeAll { $0.name == "year" }
        try await Self.migrate(
            start, docs, [.removeField("year", from: "c")], expect: schema,
            Self.with(docs) { $0["year"] = nil })
        // A unique field: SQLite cannot DROP it, so the table is rebuilt.
        let unique = start.adding(.text("code", optional: true, unique: true))
        try await Self.migrate(
            unique, Self.with(docs) { $0["code"] = .string("k\($0.id)") },
            [.removeField("code", from: "c")],
            expect: start, docs)
        try await Self.expectRefusal(
            Self.base, docs, [.removeField("year", from: "c")],
            MigrationError.fieldInUse(
                collection: "c", field: "year", usedBy: "the index on year, title"))
        try await Self.expectRefusal(
            Self.base, docs, [.removeField("body", from: "c")],
            MigrationError.fieldInUse(collection: "c", field: "body", usedBy: "the full-text index")
        )
        try await Self.expectRefusal(
            Self.base, docs, [.removeField("nope", from: "c")],
            TroveError.unknownField(field: "nope", known: ["title", "body", "year", "tag"]))
    }

    @Test(
        "rebuilds keep string ids, row ids and versions", arguments: [IDKind.int64, .string, .uuid])
    func rebuildKeepsIdentity(_ kind: IDKind) async throws {
        var start = Self.base
        start.id = kind
        let ids: [DocumentID] = (1...30).map { n in
            switch kind {
            case .int64: .int(Int64(n))
            case .string: .string("note-\(n)")
            case .uuid: .uuid(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!)
            }
        }
        let docs = zip(Self.documents(), ids).map { Document(id: $1, $0.fields) }
        var schema = start
        schema.fields.removeAll { $0.name == "tag" }
        schema.fields.append(.real("weight", default: 0.5))
        let dir = try TemporaryDirectory()
        let path = dir.path("t.trove")
        do {
            let db = try Database(path: path)
            let c = try await db.documents("c", schema: start)
            try await c.insert(docs)
            try await c.patch(ids[2], [Field("tag"): "changed"])  // version 2
        }
        let before = try await Database(path: path).query("SELECT rowid, id FROM c ORDER BY rowid")
            .map {
                "\($0[0]) \($0[1])"
            }
        // DROP COLUMN, then a rebuild (a parenthesised default).
        let db = try await Self.migrate(
            start, [],
            [.removeField("tag", from: "c"), .addField(.real("weight", default: 0.5), to: "c")],
            expect: schema,
            Self.with(docs) {
                $0["tag"] = nil
                $0["weight"] = 0.5
            }, path: path)
        #expect(
            try await db.query("SELECT rowid, id FROM c ORDER BY rowid").map { "\($0[0]) \($0[1])" }
                == before)
        #expect(try await db.documents(named: "c").fetch(id: ids[2])?.version == 2)
        let word = docs[2]["body"]!.stringValue!.split(separator: " ")[0]
        #expect(
            try await db.documents(named: "c").search(
                Query().matching(.typed(String(word))).limit(100)
            ).contains {
                $0.record.id == ids[2]
            })
    }

    // MARK: change type

    @Test("change a field's type with a transform; integer to real as is")
    func changeField() async throws {
        let start = DocumentSchema(fields: [
            .text("count"), .integer("n"), .text("when", optional: true),
        ])
        let docs: [Document] = (1...20).map {
            Document(
                id: .int($0),
                [
                    "count": .string("\($0 * 10)"), "n": .int($0),
                    "when": $0 % 2 == 0 ? .string("2026-01-0\($0 % 9 + 1)T00:00:00Z") : .null,
                ])
        }
        let schema = DocumentSchema(fields: [
            .integer("count", indexed: true), .real("n"), .date("when", optional: true),
        ])
        let formatter = ISO8601DateFormatter()
        try await Self.migrate(
            start, docs,
            [
                .changeField("count", in: "c", to: .integer("count", indexed: true)) { old in
                    .int(Int64(old.stringValue!)!)
                },
                .changeField("n", in: "c", to: .real("n")),
                .changeField("when", in: "c", to: .date("when", optional: true)) { old in
                    old.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }.map(
                        Value.date) ?? .null
                },
            ], expect: schema,
            docs.map { d in
                Document(
                    id: d.id,
                    [
                        "count": .int(Int64(d["count"]!.stringValue!)!),
                        "n": .double(Double(d["n"]!.intValue!)),
                        "when": d["when"]!.stringValue.flatMap { formatter.date(from: $0) }.map(
                            Value.date) ?? .null,
                    ])
            })
    }

    @Test("a transform over a full-text field leaves the text index in step with the new values")
    func transformFullTextField() async throws {
        let docs = Self.documents()
        let db = try await Self.migrate(
            Self.base, docs,
            [
                .changeField("body", in: "c", to: .text("body")) { old in
                    .string(old.stringValue! + " zebra\(old.stringValue!.count % 2)")
                }
            ], expect: Self.base,
            Self.with(docs) {
                $0["body"] = .string(
                    $0["body"]!.stringValue! + " zebra\($0["body"]!.stringValue!.count % 2)")
            })
        let hits = try await db.documents(named: "c").search(
            Query().matching(.typed("zebra1")).limit(100))
        #expect(
            Set(hits.map(\.record.id))
                == Set(docs.filter { $0["body"]!.stringValue!.count % 2 == 1 }.map(\.id)))
        #expect(!hits.isEmpty)
    }

    @Test("a transform that fails, or returns the wrong type, rolls the migration back")
    func transformFailure() async throws {
        let start = DocumentSchema(fields: [.text("count"), .text("other")])
        let docs: [Document] = (1...20).map {
            Document(id: .int($0), ["count": .string($0 == 13 ? "many" : "\($0)"), "other": "x"])
        }
        struct NotANumber: Error, CustomStringConvertible {
            var description: String { "not a number" }
        }
        try await Self.expectRefusal(
            start, docs,
            [
                // an earlier step, rolled back too
                .addField(.text("extra", optional: true), to: "c"),
                .changeField("count", in: "c", to: .integer("count")) { old in
                    guard let n = Int64(old.stringValue!) else { throw NotANumber() }
                    return .int(n)
                },
            ],
            MigrationError.transformFailed(
                collection: "c", field: "count", id: 13, reason: "not a number"))
        try await Self.expectRefusal(
            start, docs, [.changeField("count", in: "c", to: .integer("count")) { $0 }],
            MigrationError.transformFailed(
                collection: "c", field: "count", id: 1,
                reason:
                    "\(TroveError.typeMismatch(field: "count", expected: "integer", value: "\"1\""))"
            ))
        try await Self.expectRefusal(
            start, docs, [.changeField("other", in: "c", to: .text("other", unique: true))],
            MigrationError.duplicateValues(collection: "c", keys: ["other"], value: "'x'"))
        let optional = DocumentSchema(fields: [.text("t", optional: true)])
        try await Self.expectRefusal(
            optional, [Document(id: 1, ["t": "a"]), Document(id: 2)],
            [.changeField("t", in: "c", to: .text("t"))],
            MigrationError.nullValues(collection: "c", field: "t", rows: 1))
    }

    // MARK: indexes

    @Test("add and drop B-tree, unique and full-text indexes")
    func indexes() async throws {
        let docs = Self.documents()
        var schema = Self.base
        schema.indexes = [
            IndexDefinition([Field("tag")]), IndexDefinition([Field("body")], unique: true),
        ]
        schema.fields = schema.fields.map {
            var f = $0
            f.isIndexed = false
            return f
        }
        schema.fullText = FullTextDefinition(["body": 1], tokenizer: "porter unicode61")
        let db = try await Self.migrate(
            Self.base, docs,
            [
                .dropIndex(IndexDefinition([Field("year"), Field("title")]), from: "c"),
                .dropIndex(IndexDefinition([Field("year")]), from: "c"),
                .addIndex(IndexDefinition([Field("tag")]), to: "c"),
                .addIndex(IndexDefinition([Field("body")], unique: true), to: "c"),
                .addFullTextIndex(
                    FullTextDefinition(["body": 1], tokenizer: "porter unicode61"), to: "c"),
            ], expect: schema, docs)
        let c = try await db.documents(named: "c")
        let plan = try await c.explain(Query(Field("tag") == "t1"))
        #expect(plan.joined().contains("c_i0"))
        // Porter stemming: "windows" finds "window".
        let hits = try await c.search(Query().matching(.typed("windows")).limit(100))
        #expect(
            Set(hits.map(\.record.id))
                == Set(docs.filter { $0["body"]!.stringValue!.contains("window") }.map(\.id)))

        var noText = Self.base
        noText.fullText = nil
        let plain = try await Self.migrate(
            Self.base, docs, [.dropFullTextIndex(from: "c")], expect: noText, docs)
        await #expect(throws: TroveError.self) {
            try await plain.documents(named: "c").search(Query().matching(.typed("river")))
        }
    }

    @Test("a unique index over duplicate values is refused before any change")
    func uniqueIndexDuplicates() async throws {
        let docs = Self.documents()
        try await Self.expectRefusal(
            Self.base, docs, [.addIndex(IndexDefinition([Field("tag")], unique: true), to: "c")],
            MigrationError.duplicateValues(collection: "c", keys: ["tag"], value: "'t0'"))
        try await Self.expectRefusal(
            Self.base, docs, [.dropIndex(IndexDefinition([Field("body")]), from: "c")],
            MigrationError.invalidStep(
                migration: "m",
                reason: "c has no such index (a unique field's constraint changes with changeField)"
            ))
    }

    @Test("change a vector field's index from flat to HNSW")
    func vectorIndexKind() async throws {
        let start = DocumentSchema(fields: [.vector("v", dimension: 8)])
        var rng = SeededGenerator(seed: 11)
        let docs: [Document] = (1...200).map {
            Document(id: .int($0), ["v": .vector(rng.unitVector(dimension: 8))])
        }
        var schema = start
        schema.vectorIndexes = ["v": .hnsw()]
        let db = try await Self.migrate(
            start, docs, [.setVectorIndex(.hnsw(), for: "v", in: "c")], expect: schema, docs)
        let c = try await db.documents(named: "c")
        #expect(
            try await c.search(Query().nearest(to: docs[17]["v"]!.vectorValue!, in: "v").limit(1))
                .first?.record.id
                == 18)
        #expect(
            try await c.explain(Query().nearest(to: docs[0]["v"]!.vectorValue!, in: "v").limit(1))
                .joined().contains(
                    "HNSW"))
    }

    // MARK: collections

    @Test(
        "create and drop collections; custom steps see the collections as earlier steps left them")
    func collectionsAndCustomSteps() async throws {
        let db = try Database()
        let old = try await db.documents("old", schema: DocumentSchema(fields: [.text("name")]))
        try await old.insert([Document(id: 1, ["name": "a"]), Document(id: 2, ["name": "b"])])
        var migrator = Migrator()
        migrator.registerMigration(
            "split",
            steps: [
                .createCollection("people", schema: DocumentSchema(fields: [.text("name")])),
                .addField(.integer("age", default: 0), to: "people"),
                .custom { context in
                    let rows = try context.query("SELECT id, name FROM old ORDER BY id")
                    let people = try context.documents("people")
                    try people.insert(
                        rows.map {
                            Document(
                                id: .int($0.int64(at: 0)!),
                                ["name": .string($0.string(at: 1)!), "age": 30])
                        })
                    #expect(try people.reader.count() == 2)
                },
                .dropCollection("old"),
            ])
        try await migrator.migrate(db)
        #expect(try await db.collectionNames() == ["people"])
        #expect(
            try await db.documents(named: "people").fetch(id: 2)
                == Document(id: 2, ["name": "b", "age": 30]).withVersion(1))
        await #expect(throws: TroveError.collectionNotFound("old")) {
            try await db.documents(named: "old")
        }
    }
}

extension Document {
    func withVersion(_ version: Int64) -> Document {
        var copy = self
        copy.version = version
        return copy
    }
}
