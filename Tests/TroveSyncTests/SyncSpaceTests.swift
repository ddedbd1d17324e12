import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

@Suite struct SyncSpaceTests {
    @Test func aNoteInsertedOnOneDeviceArrivesOnAnotherWithAllItsFields() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "Oat milk", body: "buy oat milk", rank: 3)])
        #expect(try await a.sync.push() == 1)
        #expect(try await b.sync.pull() == 1)
        let note = try #require(try await b.notes.fetch(id: "n1"))
        #expect(note["title"] == "Oat milk")
        #expect(note["rank"] == 3)
        #expect(try await a.canonicalDump() == b.canonicalDump())
        let status = try await a.sync.refreshStatus()
        #expect(status.pendingChanges == 0 && status.unacknowledgedChangeSets == 0 && status.lastPushedSequence == 1)
    }

    @Test func collectionsWithInt64IdsAreRefusedWithNothingWritten() async throws {
        let database = try Database()
        _ = try await database.documents("counters", schema: DocumentSchema(fields: [.integer("n")]))
        await #expect(throws: SyncError.int64IDs(collection: "counters")) {
            try await SyncSpace(
                database: database, space: "s", key: try SyncKey.random(), transport: InProcessTransport(),
                collections: ["counters"])
        }
        let tables = try await database.query("SELECT name FROM sqlite_master WHERE name LIKE '_trove_sync_%'")
        #expect(tables.isEmpty)
        #expect(SyncError.int64IDs(collection: "counters").description.contains("DocumentSchema(id: .uuid)"))
    }
}
