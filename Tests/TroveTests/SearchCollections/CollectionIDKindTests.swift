import Foundation
import Testing
import Trove
import TroveTestSupport

/// Search collections with UUID or String ids (`CollectionConfiguration.ids`): the table keys
/// its text and vector indexes by an internal row id, entries left without an id get UUIDv7s,
/// and every read, write, search, reopen, verify and dump works as with Int64 ids.
@Suite struct CollectionIDKindTests {
    static let words = ["harbour", "ferry", "tulip", "frost", "river", "stone", "oat", "milk"]

    @Test(arguments: [IDKind.uuid, .string], [IndexKind.flat, .hnsw()])
    func textIDsWorkEverywhere(ids: IDKind, index: IndexKind) async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("ids.trove")
        let notes = try await SearchCollection(
            "notes", in: Database(path: path), dimension: 8, index: index, ids: ids)
        var rng = SeededGenerator(seed: 5)
        var given: [DocumentID] = []
        for i in 0..<40 {
            let text = (0..<4).map { _ in
                Self.words[Int.random(in: 0..<Self.words.count, using: &rng)]
            }.joined(
                separator: " ")
            given.append(
                try await notes.insert(
                    VectorEntry(
                        content: "\(text) note\(i)", source: "s\(i % 3)",
                        vector: rng.vector(dimension: 8))))
        }
        // Generated ids are of the collection's kind, unique and time-ordered (UUIDv7).
        #expect(given.allSatisfy { $0.kind == ids })
        #expect(Set(given).count == given.count)
        #expect(given.map(\.description) == given.map(\.description).sorted())
        // A chosen id of the kind, and a batch with explicit ids.
        let chosen: DocumentID = ids == .uuid ? .uuid(UUID()) : "chosen-note"
        try await notes.insert(
            VectorEntry(
                id: chosen, content: "the chosen quasar", source: "c",
                vector: rng.vector(dimension: 8)))

        // Another kind of id is refused; nothing written.
        await #expect(
            throws: TroveError.typeMismatch(field: "id", expected: "\(ids) id", value: "7")
        ) {
            try await notes.insert(
                VectorEntry(id: 7, content: "wrong", vector: rng.vector(dimension: 8)))
        }
        #expect(try await notes.count() == 41)

        // Reads, searches and writes by id.
        let probe = try #require(try await notes.fetch(id: given[17]))
        #expect(probe.id == given[17] && probe.content.hasSuffix("note17"))
        #expect(try await notes.search(vector: probe.vector, limit: 1).map(\.id) == [given[17]])
        #expect(try await notes.search(Query().matching(.typed("note17"))).map(\.id) == [given[17]])
        #expect(
            try await notes.search(
                Query().nearest(to: probe.vector, in: "embedding").matching(.typed("quasar")).limit(
                    2)
            )
            .map(\.id).sorted() == [given[17], chosen].sorted())
        #expect(try await notes.fetch(Query(Field.id == chosen.value)).map(\.id) == [chosen])
        #expect(try await notes.contains(id: chosen))
        _ = try await notes.patch(chosen, [Field("source"): "patched"])
        #expect(try await notes.fetch(id: chosen)?.source == "patched")
        try await notes.update(
            VectorEntry(id: given[3], content: "rewritten nebula", vector: probe.vector))
        #expect(try await notes.search(Query().matching(.typed("nebula"))).map(\.id) == [given[3]])
        #expect(try await notes.delete(id: given[17]))
        #expect(try await notes.fetch(id: given[17]) == nil)
        let expected = [given[3], try await nearestBut(notes, probe.vector)]
        #expect(try await notes.search(vector: probe.vector, limit: 2).map(\.id) == expected)

        // Reopened: the id kind is frozen; asking for another is a mismatch.
        let reopened = try Database(path: path)
        let again = try await SearchCollection(named: "notes", in: reopened)
        #expect(again.configuration.ids == ids)
        #expect(try await again.search(Query().matching(.typed("nebula"))).map(\.id) == [given[3]])
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection("notes", in: reopened, dimension: 8, index: index)
        }
        #expect(try await reopened.verify().isHealthy)

        // A dump loads into a new file with the same ids.
        let dump = directory.path("notes.dump")
        _ = try await reopened.dump(to: dump)
        let loaded = try Database(path: directory.path("loaded.trove"))
        _ = try await loaded.load(from: dump)
        let all = Query().sorted(by: .ascending("id"))
        #expect(
            try await SearchCollection(named: "notes", in: loaded).fetch(all)
                == (try await again.fetch(all)))
        #expect(
            try await SearchCollection(named: "notes", in: loaded).search(
                Query().matching(.typed("nebula"))
            )
            .map(\.id) == [
                given[3]
            ])
    }

    /// The nearest entry to `vector` other than the rewritten one (the exact answer).
    private func nearestBut(_ notes: SearchCollection, _ vector: [Float]) async throws -> DocumentID
    {
        let exact = try await notes.search(
            Query().nearest(to: vector, in: "embedding").limit(2).exact(true))
        return exact[1].id
    }
}
