import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveSQLite
import TroveTestSupport

/// Changing the embedding model of a vector field: every row re-embedded, progress reported,
/// the new manifest recorded, concurrent writers caught up with.
@Suite("Re-embedding migrations", .serialized)
struct ReembeddingMigrationTests {
    static let old = HashingEmbedder(dimension: 16, modelID: "test/old")
    static let new = HashingEmbedder(dimension: 24, modelID: "test/new", checksum: "1111")

    static func schema(_ embedder: HashingEmbedder) -> DocumentSchema {
        DocumentSchema(
            fields: [
                .text("body", optional: true),
                .vector("embedding", dimension: embedder.dimension, optional: true),
            ],
            embeddingSources: [
                "embedding": EmbeddingSource(textField: "body", manifest: embedder.manifest)
            ])
    }

    static let words = [
        "oat", "milk", "bread", "river", "stone", "cloud", "paper", "garden", "lamp", "orbit",
    ]

    static func seed(_ db: Database, count: Int) async throws -> [Document] {
        var rng = SeededGenerator(seed: 5)
        let docs: [Document] = (1...Int64(count)).map { id in
            if id % 10 == 0 { return Document(id: .int(id), ["body": .null, "embedding": .null]) }
            let text = (0..<4).map { _ in words.randomElement(using: &rng)! }.joined(separator: " ")
            return Document(
                id: .int(id), ["body": .string(text), "embedding": .vector(old.vector(text))])
        }
        try await db.documents("notes", schema: schema(old)).insert(docs)
        return docs
    }

    /// Records progress reports from the embedding task.
    final class Reports: @unchecked Sendable {
        // @unchecked Sendable: `items` is only touched under `lock`.
        private let lock = NSLock()
        private var items: [ReembeddingProgress] = []
        func append(_ p: ReembeddingProgress) { lock.withLock { items.append(p) } }
        var all: [ReembeddingProgress] { lock.withLock { items } }
    }

    @Test("every row is re-embedded with progress, the new manifest and dimension are recorded")
    func reembeds() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("t.trove"))
        let docs = try await Self.seed(db, count: 50)
        // Load the old in-memory index, so the migration must replace it.
        _ = try await db.documents(named: "notes").search(
            Query().nearest(to: Self.old.vector("oat"), in: "embedding").limit(3))
        let reports = Reports()
        var migrator = Migrator()
        migrator.registerMigration(
            "new model",
            steps: [
                .changeEmbeddingModel(
                    of: "embedding", in: "notes", from: "body", to: Self.new, batchSize: 10
                ) {
                    reports.append($0)
                }
            ])
        try await migrator.migrate(db)
        #expect(reports.all.map(\.completed) == [0, 10, 20, 30, 40, 45])
        #expect(
            reports.all.allSatisfy {
                $0.total == 45 && $0.collection == "notes" && $0.field == "embedding"
            })
        let notes = try await db.documents(named: "notes")
        #expect(notes.schema == Self.schema(Self.new))
        for doc in try await notes.fetch() {
            let text = doc["body"]?.stringValue
            #expect(doc["embedding"] == (text.map { .vector(Self.new.vector($0)) } ?? .null))
            #expect(doc.version == 1)
        }
        let target = docs[6]["body"]!.stringValue!
        let hits = try await notes.search(
            Query().nearest(to: Self.new.vector(target), in: "embedding").limit(1))
        #expect(hits.first?.record["body"]?.stringValue == target)
        #expect(try await notes.verify() == [])
        // The old model's schema is now a mismatch.
        await #expect(throws: TroveError.self) {
            try await db.documents("notes", schema: Self.schema(Self.old))
        }
        // Reopened: the file holds the new manifest.
        let reopened = try Database(path: dir.path("t.trove"))
        #expect(
            try await reopened.documents(named: "notes").schema.embeddingSources["embedding"]?
                .manifest
                == Self.new.manifest)
    }

    /// An embedder that, during its first call, lets another connection write to the collection.
    struct InterferingEmbedder: Embedder {
        let inner: HashingEmbedder
        let path: String
        let calls: Counter
        var manifest: EmbeddingManifest { inner.manifest }

        func embed(_ texts: [String]) async throws -> [[Float]] {
            if calls.increment() == 1 {
                let other = try Database(path: path)
                let notes = try await other.documents(named: "notes")
                try await notes.patch(3, [Field("body"): "changed meanwhile"])
                try await notes.insert(
                    Document(id: 1000, ["body": "added meanwhile", "embedding": .null]))
            }
            calls.add(texts: texts.count)
            return try await inner.embed(texts)
        }
    }

    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: both counts are only touched under `lock`.
        private let lock = NSLock()
        private var calls = 0
        private var embedded = 0
        func increment() -> Int {
            lock.withLock {
                calls += 1
                return calls
            }
        }
        func add(texts: Int) { lock.withLock { embedded += texts } }
        var texts: Int { lock.withLock { embedded } }
    }

    @Test("rows written by another connection while embedding are embedded too")
    func concurrentWriter() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("t.trove")
        let db = try Database(path: path)
        _ = try await Self.seed(db, count: 30)
        let counter = Counter()
        let embedder = InterferingEmbedder(inner: Self.new, path: path, calls: counter)
        let reports = Reports()
        var migrator = Migrator()
        migrator.registerMigration(
            "new model",
            steps: [
                .changeEmbeddingModel(
                    of: "embedding", in: "notes", from: "body", to: embedder, batchSize: 100
                ) {
                    reports.append($0)
                }
            ])
        try await migrator.migrate(db)
        // 27 texts, then the changed and the added one (the other 26 vectors were reused).
        #expect(counter.texts == 27 + 2)
        #expect(reports.all.map(\.completed) == [0, 27, 26, 28])
        let notes = try await db.documents(named: "notes")
        #expect(
            try await notes.fetch(id: 3)?["embedding"]
                == .vector(Self.new.vector("changed meanwhile")))
        #expect(
            try await notes.fetch(id: 1000)?["embedding"]
                == .vector(Self.new.vector("added meanwhile")))
        #expect(try await notes.count() == 31)
    }

    @Test("re-embedding needs its text field as it is when the migration starts")
    func refusals() async throws {
        let db = try Database()
        _ = try await Self.seed(db, count: 5)
        var migrator = Migrator()
        migrator.registerMigration(
            "bad",
            steps: [
                .changeEmbeddingModel(of: "embedding", in: "notes", from: "title", to: Self.new)
            ])
        await #expect(
            throws: MigrationError.invalidStep(
                migration: "bad",
                reason:
                    "re-embedding reads notes.title, which must be a text field when the migration starts"
            )
        ) {
            try await migrator.migrate(db)
        }
        var second = Migrator()
        second.registerMigration(
            "mixed",
            steps: [
                .custom { try $0.execute("UPDATE notes SET body = 'rewritten' WHERE id = 1") },
                .changeEmbeddingModel(of: "embedding", in: "notes", from: "body", to: Self.new),
            ])
        await #expect(
            throws: MigrationError.invalidStep(
                migration: "mixed",
                reason:
                    "an earlier step of this migration changed notes.body; re-embed in a migration of its own"
            )
        ) {
            try await second.migrate(db)
        }
        #expect(try await db.documents(named: "notes").schema == Self.schema(Self.old))
    }
}
