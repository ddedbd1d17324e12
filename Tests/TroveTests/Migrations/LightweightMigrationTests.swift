import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Lightweight migrations: the steps derived from the difference between two schemas.
@Suite("Lightweight migrations")
struct LightweightMigrationTests {
    static let v1 = DocumentSchema(
        fields: [
            .text("title"), .text("body"), .integer("year", indexed: true),
            .text("tag", optional: true),
            .vector("v", dimension: 4, optional: true),
        ],
        indexes: [IndexDefinition([Field("year"), Field("title")])],
        fullText: FullTextDefinition(["title": 2, "body": 1]))

    static var v2: DocumentSchema {
        var schema = DocumentSchema(
            fields: [
                .integer("rank", default: 1), .text("headline"), .text("body"), .real("year"),
                .json("labels", optional: true), .vector("v", dimension: 4, optional: true),
            ],
            indexes: [
                IndexDefinition([Field("rank")]),
                IndexDefinition([Field("labels", path: "$.main")]),
            ],
            fullText: FullTextDefinition(["headline": 1, "body": 1], tokenizer: "porter unicode61"))
        schema.vectorIndexes = ["v": .hnsw()]
        return schema
    }

    @Test("a collection reaches the target schema: renamed, removed, changed, added, re-indexed")
    func reachesTarget() async throws {
        var rng = SeededGenerator(seed: 2)
        let docs = MigrationStepTests.documents().map { d in
            var d = d
            d["v"] = .vector(rng.unitVector(dimension: 4))
            return d
        }
        let expected = docs.map { d in
            Document(
                id: d.id,
                [
                    "rank": 1, "headline": d["title"]!, "body": d["body"]!,
                    "year": .double(Double(d["year"]!.intValue!)),
                    "labels": .null, "v": d["v"]!,
                ])
        }
        try await MigrationStepTests.migrate(
            Self.v1, docs, [.lightweight("c", to: Self.v2, renamed: ["title": "headline"])],
            expect: Self.v2, expected)
    }

    @Test("a missing collection is created; an up-to-date one is left alone")
    func createsAndIsIdempotent() async throws {
        let db = try Database()
        var migrator = Migrator()
        migrator.registerMigration("1", steps: [.lightweight("c", to: Self.v1)])
        migrator.registerMigration("2", steps: [.lightweight("c", to: Self.v1)])
        try await migrator.migrate(db, upTo: "1")
        try await db.documents(named: "c").insert(MigrationStepTests.documents(3))
        let before = try await db.query("SELECT type, name, sql FROM sqlite_master ORDER BY name")
            .map(\.values)
        try await migrator.migrate(db)
        #expect(
            try await db.query("SELECT type, name, sql FROM sqlite_master ORDER BY name").map(
                \.values) == before)
        #expect(try await db.documents(named: "c").schema == Self.v1)
    }

    @Test("changes a schema cannot say are refused before any change")
    func refusals() async throws {
        var other = Self.v1
        other.id = .string
        try await MigrationStepTests.expectRefusal(
            Self.v1, MigrationStepTests.documents(), [.lightweight("c", to: other)],
            MigrationError.invalidStep(
                migration: "m", reason: "c: the id kind cannot change (int64 to string)"))
        try await MigrationStepTests.expectRefusal(
            Self.v1, MigrationStepTests.documents(),
            [.lightweight("c", to: Self.v1.adding(.text("owner")))],
            MigrationError.requiredFieldWithoutDefault(collection: "c", field: "owner", rows: 30))
        var sourced = Self.v1
        sourced.embeddingSources = [
            "v": EmbeddingSource(
                textField: "body", manifest: HashingEmbedder(dimension: 4).manifest)
        ]
        try await MigrationStepTests.expectRefusal(
            Self.v1, MigrationStepTests.documents(), [.lightweight("c", to: sourced)],
            MigrationError.invalidStep(
                migration: "m",
                reason:
                    "c: the embedding sources differ; change the model with changeEmbeddingModel"))
    }
}
