import Testing
import Trove
import TroveVecKit

/// The store's table is an ordinary document collection: Trove's own queries reach it.
@Suite("VectorStore's collection")
struct VectorStoreCollectionTests {
    @Test("typed text, filters and the database reach the store's rows")
    func troveForms() async throws {
        let store = try VectorStore(dbPath: ":memory:", dimension: 2)
        try await store.insertBatch([
            TroveVecKit.VectorEntry(id: 1, content: "oat milk", source: "a", vector: [1, 0]),
            TroveVecKit.VectorEntry(id: 2, content: "milk (2 l)", source: "b", vector: [0, 1]),
        ])
        // A typed query needs no FTS5 syntax: "milk (2" would be malformed FTS5.
        let typed = try await store.collection.search(
            Query(Field("source") == "b").matching(.typed("milk (2")))
        #expect(typed.map(\.record.id) == [2])
        let hybrid = try await store.collection.search(
            Query().nearest(to: [1, 0], in: "embedding").matching(.typed("milk")).limit(1))
        #expect(hybrid.first?.record.id == 1)
        #expect(try await store.database.collectionNames() == ["chunks"])
        #expect(try await store.collection.count(where: Field("source") == "a") == 1)
    }
}
