import Foundation
import Testing
import Trove
import TroveTestSupport

/// Writes `Fixtures/format3.trove` with the code of the day (run by hand, never in CI):
///
/// ```
/// TROVE_WRITE_FIXTURE=/tmp/format3.trove swift test --skip-build --filter FormatFixtureGenerator
/// ```
///
/// Kept so the next format's fixture is written the same way, before its change lands.
@Suite("Format fixture generator")
struct FormatFixtureGenerator {
    static let target = ProcessInfo.processInfo.environment["TROVE_WRITE_FIXTURE"]

    @Test("writes the fixture of the current format", .enabled(if: target != nil))
    func write() async throws {
        let path = try #require(Self.target)
        try? FileManager.default.removeItem(atPath: path)
        let db = try Database(path: path)
        // A flat, Int64-id collection with text search, sources and metadata; row 4 updated
        // and row 5 deleted so the change log holds every kind of entry.
        let notes = try await SearchCollection("notes", in: db, dimension: 4)
        try await notes.insert([
            VectorEntry(
                id: 1, content: "Call the plumber about the kitchen sink", source: "home.md",
                metadata: #"{"list": "home", "priority": 2}"#, vector: [0.9, 0.1, 0, 0.1]),
            VectorEntry(
                id: 2, content: "Quarterly report due Friday", source: "work.md",
                metadata: #"{"list": "work", "priority": 3}"#, vector: [0, 0.2, 0.9, 0.1]),
            VectorEntry(
                id: 3, content: "Buy basil, tomatoes and bread", source: "home.md",
                metadata: #"{"list": "home", "priority": 4}"#, vector: [0.8, 0, 0.1, 0.3]),
            VectorEntry(
                id: 4, content: "Dentist appointment", source: "health.md",
                vector: [0.1, 0.9, 0.1, 0]),
            VectorEntry(
                id: 5, content: "Old plumber invoice", source: "home.md",
                vector: [0.7, 0.1, 0.1, 0.1]),
        ])
        try await notes.update(
            VectorEntry(
                id: 4, content: "Book the dentist for Tuesday at 10", source: "health.md",
                vector: [0.1, 0.9, 0.1, 0.05]))
        _ = try await notes.delete(id: 5)
        // An HNSW collection (l2) whose graph is saved, then one more row the snapshot has not seen.
        let pages = try await SearchCollection(
            "pages", in: db, dimension: 3, metric: .l2, index: .hnsw())
        var random = SeededGenerator(seed: 42)
        try await pages.insert(
            (1...20).map { i in
                VectorEntry(
                    id: DocumentID.int(Int64(i)), content: "page \(i) about topic \(i % 4)",
                    source: "book-\(i % 3)",
                    vector: [Float(i % 7), Float.random(in: 0...3, using: &random), Float(i % 5)])
            })
        _ = try await pages.saveIndex()
        try await pages.insert(
            VectorEntry(
                id: 21, content: "page 21 about topic 1", source: "book-0", vector: [5, 1, 1]))
        // A UUID-id collection (an internal `_rowid`, the log keyed on `rid`), with a flat snapshot saved.
        let tasks = try await SearchCollection(
            "tasks", in: db, dimension: 2, metric: .l2, ids: .uuid)
        for i in 0..<6 {
            let id = DocumentID.uuid(UUID(uuidString: "00000000-0000-7000-8000-00000000000\(i)")!)
            try await tasks.insert(
                VectorEntry(
                    id: id, content: "task \(i) water the garden", source: "t\(i % 2)",
                    vector: [Float(i), Float(6 - i)]))
        }
        _ = try await tasks.saveIndex()
        // A document collection beside them.
        let items = try await db.documents(
            "items", schema: DocumentSchema(fields: [.text("title"), .integer("year")]))
        try await items.insert(Document(id: 1, ["title": "Dune", "year": 1965]))
        try await items.insert(Document(id: 2, ["title": "Foundation", "year": 1951]))
    }
}
