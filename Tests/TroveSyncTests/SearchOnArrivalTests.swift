import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

/// What sync brings is searchable at once: every derived index follows applied changes through
/// the change log, and vectors arrive as data (nothing is embedded again).
@Suite struct SearchOnArrivalTests {
    static func hybrid(_ text: String) -> Query {
        Query().nearest(to: Notes.embedder.vector(text), in: "embedding").matching(.typed(text))
            .limit(3)
    }

    @Test(arguments: [IndexKind.flat, .hnsw()])
    func aNotePushedByOneDeviceIsFoundByHybridSearchOnAnotherAfterItsPull(index: IndexKind)
        async throws
    {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        var schema = Notes.schema()
        schema.vectorIndexes = ["embedding": index]
        let a = try await Device.make(
            "a", in: directory, transport: server, key: key, schema: schema)
        let b = try await Device.make(
            "b", in: directory, transport: server, key: key, schema: schema)
        try await b.notes.insert([Notes.note("b1", title: "Groceries", body: "bread and butter")])
        // B's indexes are built before anything arrives, so the arrival must reach them.
        #expect(try await b.notes.search(Self.hybrid("oat milk")).map(\.record.id) == ["b1"])
        try await a.notes.insert([
            Notes.note("a1", title: "Shopping", body: "remember the oat milk")
        ])
        try await a.sync.push()
        try await b.sync.pull()
        let hits = try await b.notes.search(Self.hybrid("oat milk"))
        #expect(hits.first?.record.id == "a1")
        #expect(hits.first?.textRank != nil)
        #expect(hits.first?.vectorRanks.first ?? nil != nil)
        // The vector is the sender's, byte for byte.
        #expect(
            try await b.notes.fetch(id: "a1")?["embedding"]
                == .vector(Notes.embedder.vector("remember the oat milk")))
        // An edit and a delete reach the indexes too.
        _ = try await a.notes.patch(
            "a1",
            [
                Field("body"): "river stones",
                Field("embedding"): .vector(Notes.embedder.vector("river stones")),
            ])
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.search(Self.hybrid("river stones")).first?.record.id == "a1")
        #expect(try await b.notes.search(Query().matching(.typed("oat milk"))).isEmpty)
        _ = try await a.notes.delete(id: "a1")
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.search(Self.hybrid("river stones")).map(\.record.id) == ["b1"])
    }

    @Test func vectorsOfAnotherEmbeddingModelAreRefusedAndStayQueued() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let other = HashingEmbedder(dimension: 16, modelID: "test/other-model")
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make(
            "b", in: directory, transport: server, key: key, schema: Notes.schema(embedder: other))
        try await a.notes.insert([Notes.note("a1", title: "Shopping", body: "oat milk")])
        try await a.sync.push()
        do {
            try await b.sync.pull()
            Issue.record("vectors of another model were accepted")
        } catch let error as SyncError {
            guard
                case .embeddingModelMismatch(let collection, let field, let local, let remote) =
                    error
            else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(collection == "notes" && field == "embedding")
            #expect(local == "test/other-model" && remote == "test/hashing-bow")
        }
        #expect(try await b.notes.count() == 0)
        let status = await b.sync.status
        #expect(
            status.queued.map(\.reason) == [
                .embeddingModelMismatch(collection: "notes", field: "embedding")
            ])
        #expect(status.lastPulledSequence == 1)
    }

    /// Search collections sync like document collections once their ids cannot collide
    /// (`CollectionConfiguration.ids`): the entry, its vector and its metadata arrive as data and
    /// reach the text index and the vector index of the other device, edits and deletes too.
    @Test(arguments: [IDKind.uuid, .string])
    func aSearchCollectionWithUniqueIDsSyncsAndIsSearchableOnArrival(ids: IDKind) async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        func device(_ name: String) async throws -> (notes: SearchCollection, sync: SyncSpace) {
            let database = try Database(path: directory.path("\(name).trove"))
            let notes = try await SearchCollection(
                "notes", in: database, embedder: Notes.embedder, ids: ids)
            let sync = try await SyncSpace(
                database: database, space: "space", key: key, transport: server,
                collections: ["notes"])
            return (notes, sync)
        }
        let a = try await device("a")
        let b = try await device("b")
        let bread = try await b.notes.insert(
            VectorEntry(content: "bread and butter", source: "b.md"))
        // B's indexes are built before anything arrives, so the arrival must reach them.
        #expect(try await b.notes.search("oat milk", limit: 3).map(\.id) == [bread])
        let milk = try await a.notes.insert(
            VectorEntry(content: "remember the oat milk", source: "a.md", metadata: #"{"day":2}"#))
        #expect(milk.kind == ids)
        try await a.sync.push()
        try await b.sync.pull()
        let hits = try await b.notes.search("oat milk", limit: 3)
        #expect(hits.first?.id == milk)
        #expect(hits.first?.textRank != nil && hits.first?.vectorRank != nil)
        let arrived = try #require(try await b.notes.fetch(id: milk))
        #expect(arrived == (try await a.notes.fetch(id: milk)))
        #expect(
            arrived.vector == Notes.embedder.vector("remember the oat milk")
                && arrived.metadata == #"{"day":2}"#)

        // An edit on B reaches A's indexes; a delete on A reaches B's.
        try await b.notes.update(
            VectorEntry(
                id: milk, content: "river stones", source: "a.md",
                vector: Notes.embedder.vector("river stones")))
        try await b.sync.push()
        try await a.sync.pull()
        #expect(try await a.notes.search("river stones", limit: 3).first?.id == milk)
        #expect(try await a.notes.search("oat milk", mode: .text).isEmpty)
        #expect(try await a.notes.delete(id: milk))
        try await a.sync.push()
        try await b.sync.pull()
        try await a.sync.pull()
        #expect(try await b.notes.fetch(id: milk) == nil)
        #expect(try await b.notes.search("river stones", limit: 3).map(\.id) == [bread])
        // Both devices hold the same entries.
        let all = Query().sorted(by: .ascending("id"))
        #expect(try await a.notes.fetch(all) == (try await b.notes.fetch(all)))
        #expect(try await a.notes.count() == 1)
        // Times Trove sets travel as data: the writer's, on every device.
        let times = all.select(["created_at", "updated_at"])
        #expect(
            try await a.notes.page(times).documents.map(\.fields)
                == (try await b.notes.page(times).documents.map(\.fields)))
    }

    @Test func aSearchCollectionWithInt64IDsIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("a.trove"))
        _ = try await SearchCollection("plain", in: database, dimension: 3)
        await #expect(throws: SyncError.int64IDs(collection: "plain")) {
            _ = try await SyncSpace(
                database: database, space: "space", key: try SyncKey.random(),
                transport: InProcessTransport(),
                collections: ["plain"])
        }
    }
}
