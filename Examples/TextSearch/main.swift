// Text search over a document collection: BM25 ranking, words in any script (Chinese, Japanese,
// Thai need no spaces), phrases, prefixes, and typed text against raw FTS5 syntax.
// Run: swift run example-text-search [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("text-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
// The default tokenizer cuts Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar text into
// overlapping two-character terms, so 東京 is found inside 東京で寿司を食べた; English words are
// cut as FTS5's unicode61 cuts them (accents removed: "cafe" finds "café").
let articles = try await database.documents("articles", schema: DocumentSchema(
    fields: [.text("title"), .text("body")],
    fullText: FullTextDefinition(["title": 2, "body": 1])))

try await articles.insert([
    Document(id: 1, ["title": "Databases at home", "body": "A small database keeps recipes, receipts and notes"]),
    Document(id: 2, ["title": "Oat milk", "body": "Oat milk and bread from the café on the corner"]),
    Document(id: 3, ["title": "Milk prices", "body": "The price of milk rose; oat drinks cost more than milk"]),
    Document(id: 4, ["title": "数据库管理", "body": "城市的数据库管理系统"]),
    Document(id: 5, ["title": "東京旅行", "body": "東京で寿司を食べた"]),
    Document(id: 6, ["title": "Data plans", "body": "Mobile data for the city"]),
])

/// Prints the ids found, best first, with FTS5's BM25 score (more negative is a better match).
func show(_ label: String, _ query: TextQuery) async throws {
    let hits = try await articles.search(Query().matching(query).limit(5))
    let list = hits.map { "\($0.record.id) (bm25 \(String(format: "%.3f", $0.bm25 ?? 0)))" }
    print(label, "->", list.isEmpty ? "nothing" : list.joined(separator: ", "))
}

// Typed text: what a person types into a search box. Words are OR-ed and ranked by BM25 (title
// weighs 2, body 1); stop words are dropped; punctuation and operators are just text, so it
// never throws.
try await show("typed milk", .typed("milk"))
try await show("typed oat milk", .typed("oat milk"))
try await show("typed cafe (no accent)", .typed("cafe"))
try await show("typed database AND (", .typed("database AND ("))

// Words in scripts written without spaces.
try await show("typed 城市", .typed("城市"))
try await show("typed 数据库", .typed("数据库"))
try await show("typed 東京", .typed("東京"))

// Quotes make a phrase: its words in order, next to each other.
try await show("typed \"oat milk\"", .typed("\"oat milk\""))
try await show("typed \"milk oat\"", .typed("\"milk oat\""))

// Raw FTS5 syntax: prefixes, AND/OR/NOT, NEAR, column filters.
try await show("fts5 data*", .fts5("data*"))
try await show("fts5 milk NOT bread", .fts5("milk NOT bread"))
try await show("fts5 title:milk", .fts5("title:milk"))
try await show("fts5 NEAR(oat bread, 3)", .fts5("NEAR(oat bread, 3)"))

// Raw syntax can be malformed; typed text cannot.
do {
    _ = try await articles.search(Query().matching(.fts5("database AND (")))
} catch let error as TroveError {
    if case .invalidTextQuery = error { print("fts5 database AND ( -> invalid FTS5 syntax") }
}
