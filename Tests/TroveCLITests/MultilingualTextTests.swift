import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// Words of unspaced scripts found through the tool (issue 15), and older databases that keep
/// their frozen tokenizer until `trove repair --retokenize`.
@Suite("Multilingual text search in the CLI", .serialized)
struct MultilingualTextTests {
    func multilingualFixture() throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("zh.md", "数据库管理系统的性能优化")
        try fixture.write("ja.md", "東京で寿司を食べました")
        try fixture.write("th.md", "พรุ่งนี้ต้องไปซื้อผักที่ตลาด")
        try fixture.write("ko.md", "내일 회의는 오후 세시에 시작합니다")
        try fixture.write("en.md", "Groceries for the weekend: apples and oat milk.")
        return fixture
    }

    @Test(
        "a new database finds CJK, Thai and Korean words by bigrams, and English by stems",
        arguments: [
            ("数据库", "zh.md"), ("性能优化", "zh.md"), ("東京", "ja.md"), ("寿司", "ja.md"),
            ("ตลาด", "th.md"), ("ซื้อผัก", "th.md"), ("회의는", "ko.md"), ("grocery", "en.md"),
        ])
    func unspacedScripts(query: String, file: String) async throws {
        let fixture = try multilingualFixture()
        let index = await fixture.trove(["index", "."])
        #expect(index.status == 0, "\(index.err)")
        let found = try await fixture.json(["search", "--mode", "text", query])
        let hits = results(found)
        #expect(hits.first?["source"]?.string == fixture.path(file), "\(query): \(hits)")
        #expect(hits.count == 1, "\(query) should match one note only: \(hits)")
    }

    @Test("trove stats names the tokenizer, in text and JSON")
    func statsNamesTokenizer() async throws {
        let fixture = try multilingualFixture()
        _ = await fixture.trove(["index", "."])
        let stats = await fixture.trove(["stats"])
        #expect(
            stats.out.contains("FTS5 BM25 (trove bigram remove_diacritics 2 porter 1)"),
            "\(stats.out)")
        let json = try await fixture.json(["stats"])
        #expect(json["tokenizer"]?.string == "trove bigram remove_diacritics 2 porter 1")
    }

    @Test(
        "a database with the old porter unicode61 tokenizer still opens and searches, then retokenizes"
    )
    func oldDatabaseKeepsItsTokenizerUntilRetokenized() async throws {
        let fixture = try multilingualFixture()
        // A database as trove 0.1 created it: the notes collection with `porter unicode61`.
        try FileManager.default.createDirectory(
            atPath: (fixture.database as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        do {
            let database = try Database(path: fixture.database)
            _ = try await SearchCollection(
                "notes", in: database, embedder: HashingEmbedder(),
                tokenizer: "porter unicode61 remove_diacritics 2")
        }
        let index = await fixture.trove(["index", "."])
        #expect(index.status == 0, "\(index.err)")
        #expect(
            try await fixture.json(["stats"])["tokenizer"]?.string
                == "porter unicode61 remove_diacritics 2")
        // English works as before; a CJK word inside an unspaced run does not match.
        let english = try await fixture.json(["search", "--mode", "text", "groceries"])
        #expect(results(english).first?["source"]?.string == fixture.path("en.md"))
        #expect(results(try await fixture.json(["search", "--mode", "text", "数据库"])).isEmpty)

        let repair = await fixture.trove(["repair", "--retokenize"])
        #expect(repair.status == 0, "\(repair.err)")
        #expect(
            repair.out.contains(
                "retokenized notes: porter unicode61 remove_diacritics 2 -> trove bigram"))
        #expect(
            try await fixture.json(["stats"])["tokenizer"]?.string
                == "trove bigram remove_diacritics 2 porter 1")
        let chinese = try await fixture.json(["search", "--mode", "text", "数据库"])
        #expect(results(chinese).first?["source"]?.string == fixture.path("zh.md"))
        // Records, vectors and file hashes survived: re-indexing changes nothing.
        let again = await fixture.trove(["index", "."])
        #expect(again.err.contains("0 added, 0 updated, 0 removed, 5 unchanged"), "\(again.err)")
        let vector = try await fixture.json(["search", "--mode", "vector", "東京で寿司を食べました"])
        #expect(results(vector).first?["source"]?.string == fixture.path("ja.md"))
        // A second run has nothing to do.
        let twice = await fixture.trove(["repair", "--retokenize"])
        #expect(twice.out.contains("notes already use trove bigram"))
    }
}
