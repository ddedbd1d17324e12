import Foundation
import Testing
import Trove
import TroveTestSupport

/// The README's quick start, as written (only the file path differs), so it stays correct.
@Suite("README")
struct ReadmeTests {
    @Test("the quick start runs as written")
    func quickStart() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("notes.trove"))
        let notes = try await database.collection("notes", dimension: 3)

        try await notes.insertBatch([
            VectorEntry(id: 1, content: "Buy oat milk and bread", source: "groceries.md", vector: [0.9, 0.1, 0.0]),
            VectorEntry(id: 2, content: "Dentist on Tuesday at 10", source: "calendar",
                        metadata: #"{"day": "tue"}"#, vector: [0.0, 0.2, 0.9]),
            VectorEntry(id: 3, content: "Call the plumber about the sink", source: "home.md", vector: [0.1, 0.9, 0.1]),
        ])

        let near = try await notes.search(vector: [0.1, 0.1, 0.9], topK: 2)
        #expect(near.map(\.id) == [2, 3])
        let words = try await notes.searchText(.typed("dentist?"))
        #expect(words.map(\.id) == [2])
        let both = try await notes.searchHybrid(text: .typed("plumber"), vector: [0.1, 0.8, 0.2], topK: 2)
        #expect(both.first?.id == 3)
        #expect(both.first?.vectorRank == 1 && both.first?.textRank == 1)
    }
}
