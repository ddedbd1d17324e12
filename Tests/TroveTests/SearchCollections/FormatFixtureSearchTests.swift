import Foundation
import Testing
import Trove
import TroveTestSupport

/// Every fixture of an older format opens, is upgraded in place, and answers the same searches
/// (hits and their order) as the code of the day it was last changed answered them: the upgrade
/// loses no row, no text index entry and no vector.
@Suite("Format fixture searches", .serialized)
struct FormatFixtureSearchTests {
    /// The searches asked of every fixture, by name: ids in rank order.
    static func answers(_ db: Database) async throws -> [String: [String]] {
        var out: [String: [String]] = [:]
        func ids(_ hits: [Hit<VectorEntry>]) -> [String] { hits.map { "\($0.id)" } }
        let names = try await db.collectionNames()
        if names.contains("notes") {
            let notes = try await SearchCollection(named: "notes", in: db)
            out["notes.vector"] = ids(
                try await notes.search(vector: [0.0, 0.2, 0.9, 0.1], limit: 4))
            out["notes.text"] = ids(try await notes.search(Query().matching(.typed("plumber"))))
            out["notes.hybrid"] = ids(
                try await notes.search(
                    Query().matching(.typed("dentist")).nearest(
                        to: [0.9, 0.1, 0.0, 0.1], in: "embedding"
                    ).limit(3)))
            out["notes.filtered"] = ids(
                try await notes.search(
                    vector: [0.0, 0.2, 0.9, 0.1], where: .source("home.md"), limit: 2))
            out["notes.count"] = [String(try await notes.count())]
        }
        if names.contains("pages") {
            let pages = try await SearchCollection(named: "pages", in: db)
            out["pages.vector"] = ids(try await pages.search(vector: [5, 1, 2], limit: 5))
            out["pages.filtered"] = ids(
                try await pages.search(vector: [1, 1, 1], where: .source("book-1"), limit: 3))
            out["pages.count"] = [String(try await pages.count())]
        }
        if names.contains("tasks") {
            let tasks = try await SearchCollection(named: "tasks", in: db)
            out["tasks.vector"] = ids(try await tasks.search(vector: [2, 4], limit: 3))
            out["tasks.text"] = ids(
                try await tasks.search(Query().matching(.typed("garden")).limit(2)))
        }
        return out
    }

    static let expected: [String: [String: [String]]] = [
        // Recorded with the format-3 code (2628f22) before the move to format 4.
        "format1.trove": [
            "notes.count": ["3"], "notes.filtered": ["3"], "notes.hybrid": ["2", "1", "3"],
            "notes.text": ["3"],
            "notes.vector": ["2", "3", "1"], "pages.count": ["20"], "pages.filtered": [],
            "pages.vector": ["5", "4", "6", "3", "7"],
        ],
        "format2.trove": [
            "notes.count": ["4"], "notes.filtered": ["3", "1"], "notes.hybrid": ["4", "1", "3"],
            "notes.text": ["1"],
            "notes.vector": ["2", "4", "3", "1"], "pages.count": ["20"], "pages.filtered": [],
            "pages.vector": ["5", "4", "6", "3", "7"],
        ],
        "format3.trove": [
            "notes.count": ["4"], "notes.filtered": ["3", "1"], "notes.hybrid": ["4", "1", "3"],
            "notes.text": ["1"],
            "notes.vector": ["2", "4", "3", "1"], "pages.count": ["21"],
            "pages.filtered": ["1", "16", "7"],
            "pages.vector": ["12", "21", "6", "11", "13"],
            "tasks.text": [
                "00000000-0000-7000-8000-000000000000", "00000000-0000-7000-8000-000000000001",
            ],
            "tasks.vector": [
                "00000000-0000-7000-8000-000000000002", "00000000-0000-7000-8000-000000000001",
                "00000000-0000-7000-8000-000000000003",
            ],
        ],
    ]

    @Test(
        "every fixture opens, upgrades and answers the same searches",
        arguments: ["format1.trove", "format2.trove", "format3.trove"])
    func sameAnswers(fixture: String) async throws {
        let dir = try TemporaryDirectory()
        let path = try FormatUpgradeTests.fixtureCopy(in: dir, name: fixture)
        let db = try Database(path: path)
        let answers = try await Self.answers(db)
        #expect(answers == Self.expected[fixture])
        #expect(try await db.verify().isHealthy)
    }
}
