import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// The one query value on search collections: the same answers as the conveniences.
@Suite("Collection.search(Query)")
struct CollectionQueryTests {
    @Test("filters, legs and fusion give the same results as the equivalent convenience calls")
    func sameAsConveniences() async throws {
        let db = try Database()
        let notes = try await SearchCollection("notes", in: db, dimension: 6)
        var rng = SeededGenerator(seed: 4)
        let words = ["router", "reset", "garden", "lamp", "ticket", "orbit"]
        try await notes.insert(
            (1...80).map { i in
                VectorEntry(
                    id: .int(Int64(i)),
                    content: (0..<5).map { _ in words.randomElement(using: &rng)! }.joined(
                        separator: " "),
                    source: i % 2 == 0 ? "a.pdf" : "b.md", metadata: #"{"page": \#(i % 13)}"#,
                    vector: rng.unitVector(dimension: 6))
            })
        let q = rng.unitVector(dimension: 6)
        let filter = Field("source") == "a.pdf" && Field("metadata", path: "$.page") <= 6
        let legacy: Filter = .source("a.pdf") && .sql("json_extract(metadata, '$.page') <= ?", [6])

        let vector = try await notes.search(Query(filter).nearest(to: q, in: "embedding").limit(7))
        #expect(vector == (try await notes.search(vector: q, where: legacy, limit: 7)))
        let text = try await notes.search(Query(filter).matching(.typed("router garden")).limit(7))
        #expect(
            text
                == (try await notes.search(Query(legacy).matching(.typed("router garden")).limit(7)))
        )
        let hybrid = try await notes.search(
            Query(filter).nearest(to: q, in: "embedding").matching(.typed("lamp")).limit(5))
        #expect(
            hybrid
                == (try await notes.search(
                    Query(legacy).nearest(to: q, in: "embedding").matching(.typed("lamp")).limit(5)))
        )
        #expect(!vector.isEmpty && !text.isEmpty && !hybrid.isEmpty)
        let paged = try await notes.search(
            Query(filter).nearest(to: q, in: "embedding").limit(3).offset(2))
        #expect(paged.map(\.id) == Array(vector.map(\.id)[2..<5]))

        await #expect(throws: TroveError.notVectorField(field: "content", type: "text")) {
            try await notes.search(Query().nearest(to: q, in: "content"))
        }
        await #expect(throws: TroveError.self) { try await notes.search(Query(filter)) }
        await #expect(
            throws: TroveError.unknownField(
                field: "colour",
                known: [
                    "id", "content", "source", "metadata", "embedding", "created_at", "updated_at",
                ])
        ) {
            try await notes.search(Query(Field("colour") == "red").matching(.typed("lamp")))
        }
    }
}
