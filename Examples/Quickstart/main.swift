// Quickstart: a collection of notes with declared fields, a filtered and ordered query, a search.
// Run: swift run example-quickstart [folder]   (the database is created in the folder, default: a temporary one)
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("quickstart-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let notes = try await database.documents("notes", schema: DocumentSchema(
    fields: [
        .text("title"), .text("body"), .integer("priority", default: 0, indexed: true),
        .vector("embedding", dimension: 3),
    ],
    fullText: FullTextDefinition(["title": 2, "body": 1])))

try await notes.insert([
    Document(id: 1, ["title": "Groceries", "body": "Buy oat milk and bread", "priority": 1, "embedding": [0.9, 0.1, 0.0]]),
    Document(id: 2, ["title": "Dentist", "body": "Tuesday at 10, bring the card", "priority": 3, "embedding": [0.0, 0.2, 0.9]]),
    Document(id: 3, ["title": "Plumber", "body": "Call about the kitchen sink", "priority": 2, "embedding": [0.1, 0.9, 0.1]]),
])

// Filter and order run in SQLite, on the declared index.
for note in try await notes.fetch(Query(Field("priority") >= 2).sorted(by: .descending("priority"))) {
    print("priority", note["priority"]!, note["title"]!)
}

// Words (BM25 over title and body), nearest vectors, or both fused.
let words = try await notes.search(Query().matching(.typed("kitchen sink?")))
print("words:", words.map { $0.record["title"]! })
let near = try await notes.search(Query().nearest(to: [0.1, 0.1, 0.9], in: "embedding").limit(2))
print("nearest:", near.map { $0.record["title"]! })
let both = try await notes.search(Query().nearest(to: [0.2, 0.8, 0.1], in: "embedding").matching(.typed("plumber")).limit(1))
print("hybrid:", both[0].record["title"]!, "vector rank", both[0].vectorRanks[0]!, "text rank", both[0].textRank!)
