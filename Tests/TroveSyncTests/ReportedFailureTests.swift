import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

/// Each failure other sync products' users reported, as its own test.
@Suite struct ReportedFailureTests {
    struct Down: Error {}

    /// sqlite-data #492: changes dropped silently when an upload fails.
    @Test func anUploadErrorKeepsEveryChangeForTheNextPush() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "first")])
        // The key is checked first (a server that is down then fails the push before anything
        // is sealed); the failure here comes after sealing, where changes could get lost.
        try await a.sync.verifyKey()
        server.failure = Down()
        await #expect(throws: SyncError.self) { try await a.sync.push() }
        let failed = await a.sync.status
        #expect(failed.unacknowledgedChangeSets == 1)
        #expect(failed.lastError != nil)
        try await a.notes.insert([Notes.note("n2", title: "second")])
        server.failure = nil
        #expect(try await a.sync.push() == 2)
        #expect(await a.sync.status.lastError == nil)
        try await b.sync.pull()
        #expect(try await b.notes.count() == 2)
        #expect(server.feed(space: "space").count == 2)
    }

    /// A lost acknowledgement: the retry sends the same change set, the server keeps one.
    @Test func aRetriedPushCreatesNoDuplicate() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "first")])
        try await a.sync.push()
        let sent = try #require(server.feed(space: "space").first)
        #expect(try await server.push([sent], space: "space") == [1])
        #expect(server.feed(space: "space").count == 1)
    }

    /// sqlite-data #421: data lost on delete-then-reinsert.
    @Test func aReinsertAfterADeleteIsANewLifeEverywhere() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "v1", body: "old body")])
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await a.notes.delete(id: "n1"))
        try await a.notes.insert([Notes.note("n1", title: "v2")])
        try await a.sync.push()
        try await b.sync.pull()
        let note = try #require(try await b.notes.fetch(id: "n1"))
        #expect(note["title"] == "v2")
        #expect(note["body"] == .null)
        // A device that saw only the delete, then the re-insert, in either order, agrees.
        let c = try await Device.make("c", in: directory, transport: server, key: key)
        try await c.sync.pull()
        #expect(try await c.notes.fetch(id: "n1")?["title"] == "v2")
        #expect(try await a.canonicalDump() == b.canonicalDump())
        #expect(try await a.canonicalDump() == c.canonicalDump())
    }

    /// sqlite-data #362: a remote change lacking a field set it to NULL.
    @Test func aChangeLackingAFieldLeavesItUntouched() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "title", body: "body", rank: 1)])
        try await a.sync.push()
        try await b.sync.pull()
        // Offline, concurrently: A changes the title, B the rank.
        _ = try await a.notes.patch("n1", [Field("title"): "new title"])
        _ = try await b.notes.patch("n1", [Field("rank"): 7])
        try await a.sync.push()
        try await b.sync.push()
        try await a.sync.pull()
        try await b.sync.pull()
        for device in [a, b] {
            let note = try #require(try await device.notes.fetch(id: "n1"))
            #expect(note["title"] == "new title")
            #expect(note["rank"] == 7)
            #expect(note["body"] == "body")
        }
        #expect(try await a.sync.conflicts().isEmpty)
    }

    /// SyncKit #175: values written by a migration were never synced.
    @Test func aMigrationsWritesAreSynced() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([
            Notes.note("n1", title: "lower"), Notes.note("n2", title: "case"),
        ])
        try await a.sync.push()
        try await b.sync.pull()
        var migrator = Migrator()
        migrator.registerMigration("uppercase titles") { context in
            _ = try context.execute("UPDATE notes SET title = upper(title)")
        }
        try await migrator.migrate(a.database)
        try await a.sync.push()
        // B has not run the migration: the change set names a newer schema, so it waits.
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "n1")?["title"] == "lower")
        try await migrator.migrate(b.database)
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "n1")?["title"] == "LOWER")
        #expect(try await b.notes.fetch(id: "n2")?["title"] == "CASE")
        let (da, db) = (try await a.canonicalDump(), try await b.canonicalDump())
        #expect(da == db, "\(da.filter { !db.contains($0) }) vs \(db.filter { !da.contains($0) })")
    }

    /// SyncKit #109: a device on an older app version met records of a newer schema.
    @Test func anOlderDeviceQueuesNewerChangeSetsAndAppliesThemAfterItsMigration() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "old")])
        try await a.sync.push()
        try await b.sync.pull()
        var migrator = Migrator()
        migrator.registerMigration(
            "add colour", steps: [.addField(.text("colour", default: "blue"), to: "notes")])
        try await migrator.migrate(a.database)
        _ = try await a.notes.patch("n1", [Field("colour"): "red"])
        try await a.notes.insert([Document(id: "n2", ["title": "new", "colour": "green"])])
        try await a.sync.push()
        #expect(try await b.sync.pull() == 0)
        let queued = await b.sync.status.queued
        #expect(!queued.isEmpty)
        #expect(
            queued.allSatisfy { if case .newerSchema(1, 0) = $0.reason { true } else { false } })
        #expect(try await b.notes.count() == 1)
        try await migrator.migrate(b.database)
        #expect(try await b.sync.pull() == queued.count)
        #expect(await b.sync.status.queued.isEmpty)
        #expect(try await b.notes.fetch(id: "n1")?["colour"] == "red")
        #expect(try await b.notes.fetch(id: "n2")?["colour"] == "green")
        // B's migration wrote the default into n1 unseen; the queued newer value still won.
        try await b.sync.push()
        try await a.sync.pull()
        #expect(try await a.notes.fetch(id: "n1")?["colour"] == "red")
        #expect(try await a.canonicalDump() == b.canonicalDump())
    }

    /// sqlite-data #226: auto-increment integer keys collide across devices.
    @Test func int64IdsAreRefusedWithHowToMigrate() async throws {
        let database = try Database()
        _ = try await database.documents("items", schema: DocumentSchema(fields: [.text("name")]))
        do {
            _ = try await SyncSpace(
                database: database, space: "s", key: try SyncKey.random(),
                transport: InProcessTransport(),
                collections: ["items"])
            Issue.record("an Int64-id collection was accepted")
        } catch let error as SyncError {
            #expect(error == .int64IDs(collection: "items"))
            #expect(error.description.contains(".uuid"))
        }
    }

    /// sqlite-data #354: "last edit wins" that was not deterministic; and the losing value kept.
    @Test func concurrentEditsPickTheSameWinnerEverywhereAndKeepTheLoser() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "start")])
        try await a.sync.push()
        try await b.sync.pull()
        _ = try await a.notes.patch("n1", [Field("title"): "from a"])
        try await Task.sleep(for: .milliseconds(5))
        _ = try await b.notes.patch("n1", [Field("title"): "from b"])
        try await a.sync.push()
        try await b.sync.push()
        try await a.sync.pull()
        try await b.sync.pull()
        #expect(try await a.notes.fetch(id: "n1")?["title"] == "from b")
        #expect(try await b.notes.fetch(id: "n1")?["title"] == "from b")
        let conflicts = try await a.sync.conflicts()
        #expect(conflicts.count == 1)
        let conflict = try #require(conflicts.first)
        #expect(conflict.losingValue == .text("from a"))
        #expect(conflict.losingDevice == a.sync.device)
        #expect(conflict.winningDevice == b.sync.device)
        #expect(await a.sync.status.conflicts == 1)
        // Restore: the losing value becomes the newest write, everywhere.
        try await a.sync.restore(conflict)
        #expect(try await a.sync.conflicts().isEmpty)
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "n1")?["title"] == "from a")
        #expect(try await a.canonicalDump() == b.canonicalDump())
    }
}
