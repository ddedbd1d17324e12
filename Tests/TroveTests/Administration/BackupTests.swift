import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Online backup (while a writer runs, encrypted stays encrypted) and compaction.
@Suite("Backup and compaction", .serialized)
struct BackupTests {
    static let schema = DocumentSchema(
        fields: [.text("body"), .integer("n", indexed: true), .vector("v", dimension: 8)],
        fullText: FullTextDefinition(fields: ["body"]))

    static func batch(_ start: Int, _ count: Int) -> [Document] {
        (start..<(start + count)).map { i in
            Document(
                id: .int(Int64(i)),
                [
                    "body": .string("note \(i) about backups"), "n": .int(Int64(i)),
                    "v": .vector((0..<8).map { Float(($0 + i) % 11) + 1 }),
                ])
        }
    }

    @Test(
        "a backup taken while a writer keeps inserting opens, verifies and holds a consistent prefix"
    )
    func backupWhileWriting() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("live.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert(Self.batch(0, 2_000))
        let writer = Task {
            var next = 2_000
            while !Task.isCancelled {
                try await docs.insert(Self.batch(next, 50))
                next += 50
            }
            return next
        }
        try await Task.sleep(for: .milliseconds(50))
        try await db.backup(to: dir.path("copy.trove"))
        try await Task.sleep(for: .milliseconds(50))
        writer.cancel()
        let written = try await writer.value
        #expect(written > 2_000)

        let copy = try Database(path: dir.path("copy.trove"))
        #expect(try await copy.query("PRAGMA integrity_check").first?.string(at: 0) == "ok")
        let copied = try await copy.documents(named: "docs")
        #expect(try await copied.verify().isEmpty)
        let count = try await copied.count()
        #expect(count >= 2_000 && count % 50 == 0 && count <= written)
        // A consistent snapshot: ids 0..<count, nothing half-written.
        let maxID = try await copy.query("SELECT max(id) FROM docs").first?.int64(at: 0)
        #expect(maxID == Int64(count - 1))
        #expect(try await copied.search(Query().matching(.typed("backups")).limit(5)).count == 5)
    }

    @Test("an existing target is a typed error unless overwriting is asked for")
    func existingTarget() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("a.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert(Self.batch(0, 10))
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: dir.path("b.trove")))
        await #expect(throws: TroveError.fileExists(path: dir.path("b.trove"))) {
            try await db.backup(to: dir.path("b.trove"))
        }
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: dir.path("b.trove"))) == Data("keep me".utf8))
        try await db.backup(to: dir.path("b.trove"), overwrite: true)
        await #expect(throws: TroveError.self) {
            try await db.backup(to: dir.path("a.trove"), overwrite: true)
        }
        await #expect(throws: TroveError.self) {
            try await db.dump(to: dir.path("a.trove"), overwrite: true)
        }
        #expect(try await docs.count() == 10)
        let copy = try Database(path: dir.path("b.trove"))
        #expect(try await copy.documents(named: "docs").count() == 10)
    }

    @Test("an in-memory database backs up to a file")
    func inMemory() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database()
        try await db.documents("docs", schema: Self.schema).insert(Self.batch(0, 25))
        try await db.backup(to: dir.path("m.trove"))
        #expect(
            try await Database(path: dir.path("m.trove")).documents(named: "docs").count() == 25)
    }

    @Test("the backup of an encrypted database is encrypted and opens with the same key")
    func encrypted() async throws {
        let dir = try TemporaryDirectory()
        let key = Encryption.key(Data((0..<32).map { UInt8($0 * 3) }))
        let db = try Database(path: dir.path("secret.trove"), encryption: key)
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert(Self.batch(0, 300))
        try await db.backup(to: dir.path("secret-copy.trove"))
        #expect(try EncryptionInfo.of(path: dir.path("secret-copy.trove")) != nil)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir.path("secret-copy.trove")))
        #expect(bytes.range(of: Data("about backups".utf8)) == nil)
        #expect(throws: EncryptionError.self) {
            _ = try Database(path: dir.path("secret-copy.trove"))
        }
        let copy = try Database(path: dir.path("secret-copy.trove"), encryption: key)
        let copied = try await copy.documents(named: "docs")
        #expect(try await copied.count() == 300)
        #expect(try await copied.verify().isEmpty)
        #expect(try await copy.query("PRAGMA integrity_check").first?.string(at: 0) == "ok")
    }

    @Test("compaction gives deleted space back and keeps every row and index")
    func compaction() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("c.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        try await docs.insert(Self.batch(0, 3_000))
        try await db.checkpoint()
        #expect(try await docs.delete(where: Field("n") >= 300) == 2_700)
        let report = try await db.compact()
        #expect(report.bytesAfter < report.bytesBefore / 2)
        #expect(try await docs.count() == 300)
        #expect(try await docs.verify().isEmpty)
        #expect(
            try await docs.search(Query().nearest(to: [1, 2, 3, 4, 5, 6, 7, 8], in: "v").limit(3))
                .count == 3)
        #expect(try await db.query("PRAGMA integrity_check").first?.string(at: 0) == "ok")
    }
}
