import Foundation
import Testing
import TroveTestSupport

@testable import Trove

/// The upgrade to format 4: search collections of older files move to the one document layout,
/// in one transaction.
@Suite("Format 4 upgrade", .serialized)
struct FormatFourUpgradeTests {
    /// The schema of every object of collection `name` (its table, log, text index, indexes and
    /// triggers), snapshots left out, as `type name: sql`.
    static func objects(_ db: Database, _ name: String) async throws -> [String] {
        try await db.query(
            """
            SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master
            WHERE (name = ?1 OR name LIKE ?1 || '\\_%' ESCAPE '\\' OR tbl_name = ?1) AND name != ?1 || '_index'
            ORDER BY name
            """, bindings: [.text(name)]
        ).map { $0.string(at: 0) ?? "" }
    }

    @Test(
        "an upgraded search collection has exactly the objects a new one gets",
        arguments: ["notes", "pages", "tasks"])
    func sameLayoutAsNew(name: String) async throws {
        let dir = try TemporaryDirectory()
        let path = try FormatUpgradeTests.fixtureCopy(in: dir, name: "format3.trove")
        let upgraded = try Database(path: path)
        let configuration = try #require(try await upgraded.configuration(of: name))
        let fresh = try Database(path: dir.path("fresh.trove"))
        _ = try await SearchCollection(name, in: fresh, configuration: configuration)
        #expect(try await Self.objects(upgraded, name) == Self.objects(fresh, name))
        // The change log lost no entry, and no longer keeps an AUTOINCREMENT counter.
        #expect(
            try await upgraded.query("SELECT count(*) FROM sqlite_sequence")[0].int64(at: 0) == 0)
    }

    @Test("the saved snapshots are kept: the graph and the flat matrix load from the file")
    func snapshotsKept() async throws {
        let dir = try TemporaryDirectory()
        let path = try FormatUpgradeTests.fixtureCopy(in: dir, name: "format3.trove")
        let db = try Database(path: path)
        #expect(
            try await db.query("SELECT DISTINCT name FROM pages_index").map { $0.string(at: 0) }
                == ["embedding"])
        #expect(
            try await db.query("SELECT DISTINCT name FROM tasks_index").map { $0.string(at: 0) }
                == ["embedding.flat"])
        let pages = try await SearchCollection(named: "pages", in: db)
        let stats = try await pages.loadIndex()
        // Loaded from the graph saved at seq 20, then row 21 replayed from the kept log.
        #expect(
            stats.origin == .snapshot && stats.vectorCount == 21 && stats.snapshotWatermark == 20)
        let tasks = try await SearchCollection(named: "tasks", in: db)
        #expect(try await tasks.loadIndex().origin == .snapshot)
        // Seqs go on after the kept history: a write logs after the newest entry.
        try await pages.insert(VectorEntry(id: 22, content: "page 22", vector: [1, 2, 3]))
        #expect(try await db.query("SELECT max(seq) FROM pages_log")[0].int64(at: 0) == 22)
    }

    struct InjectedFault: Error {}

    @Test("an upgrade that fails part way leaves the file as it was, and the next open upgrades it")
    func failedUpgradeLeavesFile() async throws {
        let dir = try TemporaryDirectory()
        let path = try FormatUpgradeTests.fixtureCopy(in: dir, name: "format3.trove")
        func snapshot() async throws -> [String] {
            let db = try Database(path: path, readOnly: true)
            var out = try await db.query(
                "SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name"
            )
            .map { $0.string(at: 0) ?? "" }
            out += try await db.query("SELECT key || '=' || value FROM trove_meta ORDER BY key").map
            {
                $0.string(at: 0) ?? ""
            }
            for table in [
                "notes", "notes_log", "pages", "pages_log", "pages_index", "tasks", "tasks_log",
                "tasks_index",
                "sqlite_sequence",
            ] {
                out += try await db.query("SELECT * FROM \(table) ORDER BY 1, 2").map { row in
                    table + ": " + (0..<row.count).map { "\(row[$0])" }.joined(separator: "|")
                }
            }
            return out
        }
        let before = try await snapshot()
        // The fault strikes after the first two collections moved, before the third.
        #expect(throws: InjectedFault.self) {
            try Database.$upgradeFault.withValue({ name in
                if name == "pages" { throw InjectedFault() }
            }) {
                _ = try Database(path: path)
            }
        }
        #expect(try await snapshot() == before)
        let db = try Database(path: path)
        #expect(
            try await db.query("SELECT value FROM trove_meta WHERE key = 'format_version'").first?
                .string("value")
                == "4")
        #expect(try await db.verify().isHealthy)
    }
}
