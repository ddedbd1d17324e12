import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

/// What sync brings is searchable at once: every derived index follows applied changes through
/// the change log, and vectors arrive as data (nothing is embedded again).
@Suite struct SearchOnArrivalTests {
    static func hybrid(_ text: String) -> Query {
        Query().nearest(to: Notes.embedder.vector(text), in: "embedding").matching(.typed(text)).limit(3)
    }

    @Test(arguments: [IndexKind.flat, .hnsw()])
    func aNotePushedByOneDeviceIsFoundByHybridSearchOnAnotherAfterItsPull(index: IndexKind) async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        var schema = Notes.schema()
        schema.vectorIndexes = ["embedding": index]
        let a = try await Device.make("a", in: directory, transport: server, key: key, schema: schema)
        let b = try await Device.make("b", in: directory, transport: server, key: key, schema: schema)
        try await b.notes.insert([Notes.note("b1", title: "Groceries", body: "bread and butter")])
        // B's indexes are built before anything arrives, so the arrival must reach them.
        #expect(try await b.notes.search(Self.hybrid("oat milk")).map(\.document.id) == ["b1"])
        try await a.notes.insert([Notes.note("a1", title: "Shopping", body: "remember the oat milk")])
        try await a.sync.push()
        try await b.sync.pull()
        let hits = try await b.notes.search(Self.hybrid("oat milk"))
        #expect(hits.first?.document.id == "a1")
        #expect(hits.first?.textRank != nil)
        #expect(hits.first?.vectorRanks.first ?? nil != nil)
        // The vector is the sender's, byte for byte.
        #expect(try await b.notes.fetch(id: "a1")?["embedding"] == .vector(Notes.embedder.vector("remember the oat milk")))
        // An edit and a delete reach the indexes too.
        _ = try await a.notes.patch("a1", [Field("body"): "river stones", Field("embedding"): .vector(Notes.embedder.vector("river stones"))])
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.search(Self.hybrid("river stones")).first?.document.id == "a1")
        #expect(try await b.notes.search(Query().matching(.typed("oat milk"))).isEmpty)
        _ = try await a.notes.delete(id: "a1")
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.search(Self.hybrid("river stones")).map(\.document.id) == ["b1"])
    }

    @Test func vectorsOfAnotherEmbeddingModelAreRefusedAndStayQueued() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let other = HashingEmbedder(dimension: 16, modelID: "test/other-model")
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key, schema: Notes.schema(embedder: other))
        try await a.notes.insert([Notes.note("a1", title: "Shopping", body: "oat milk")])
        try await a.sync.push()
        do {
            try await b.sync.pull()
            Issue.record("vectors of another model were accepted")
        } catch let error as SyncError {
            guard case .embeddingModelMismatch(let collection, let field, let local, let remote) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(collection == "notes" && field == "embedding")
            #expect(local == "test/other-model" && remote == "test/hashing-bow")
        }
        #expect(try await b.notes.count() == 0)
        let status = await b.sync.status
        #expect(status.queued.map(\.reason) == [.embeddingModelMismatch(collection: "notes", field: "embedding")])
        #expect(status.lastPulledSequence == 1)
    }
}
