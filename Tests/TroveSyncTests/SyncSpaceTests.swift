import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

struct Task_: Model {
    var id: UUID
    var title: String
    var done: Bool
    var due: Date?
}

@Suite struct SyncSpaceTests {
    @Test func aNoteInsertedOnOneDeviceArrivesOnAnotherWithAllItsFields() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([
            Notes.note("n1", title: "Oat milk", body: "buy oat milk", rank: 3)
        ])
        #expect(try await a.sync.refreshStatus().pendingChanges == 1)
        #expect(try await a.sync.push() == 1)
        #expect(try await b.sync.pull() == 1)
        let note = try #require(try await b.notes.fetch(id: "n1"))
        #expect(note["title"] == "Oat milk")
        #expect(note["rank"] == 3)
        #expect(try await a.canonicalDump() == b.canonicalDump())
        let status = try await a.sync.refreshStatus()
        #expect(
            status.pendingChanges == 0 && status.unacknowledgedChangeSets == 0
                && status.lastPushedSequence == 1)
        #expect(await b.sync.status.lastPulledSequence == 1)
    }

    @Test func rawSQLWritesAreCapturedLikeAPIWrites() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.database.execute(
            "INSERT INTO notes(id, title) VALUES ('r1', 'raw'), ('r2', 'raw too')")
        try await a.database.execute("UPDATE notes SET rank = 5 WHERE id = 'r1'")
        try await a.database.execute("DELETE FROM notes WHERE id = 'r2'")
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "r1")?["rank"] == 5)
        #expect(try await b.notes.fetch(id: "r2") == nil)
        #expect(try await a.canonicalDump() == b.canonicalDump())
    }

    @Test func recordsWrittenBeforeSyncWasEnabledArePushed() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let database = try Database(path: directory.path("old.trove"))
        let notes = try await database.documents("notes", schema: Notes.schema())
        try await notes.insert([Notes.note("old1", title: "from before")])
        let a = try await Device.make("a", database: database, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "old1")?["title"] == "from before")
    }

    @Test func modelCollectionsSync() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        var spaces: [(Database, SyncSpace)] = []
        for _ in 0..<2 {
            let database = try Database()
            _ = try await database.models(Task_.self)
            spaces.append(
                (
                    database,
                    try await SyncSpace(
                        database: database, space: "tasks", key: key, transport: server,
                        collections: ["Task_"])
                ))
        }
        let id = UUID()
        try await spaces[0].0.models(Task_.self).insert(
            Task_(
                id: id, title: "Call", done: false, due: Date(timeIntervalSince1970: 1_800_000_000))
        )
        try await spaces[0].1.push()
        try await spaces[1].1.pull()
        let task = try #require(try await spaces[1].0.models(Task_.self).fetch(id: id))
        #expect(task.title == "Call" && task.due == Date(timeIntervalSince1970: 1_800_000_000))
    }

    @Test func collectionsWithInt64IdsAreRefusedWithNothingWritten() async throws {
        let database = try Database()
        _ = try await database.documents(
            "counters", schema: DocumentSchema(fields: [.integer("n")]))
        await #expect(throws: SyncError.int64IDs(collection: "counters")) {
            try await SyncSpace(
                database: database, space: "s", key: try SyncKey.random(),
                transport: InProcessTransport(),
                collections: ["counters"])
        }
        let tables = try await database.query(
            "SELECT name FROM sqlite_master WHERE name LIKE '_trove_sync_%'")
        #expect(tables.isEmpty)
    }

    @Test func aDatabaseSyncsOneSpace() async throws {
        let database = try Database()
        _ = try await database.documents("notes", schema: Notes.schema())
        let key = try SyncKey.random()
        _ = try await SyncSpace(
            database: database, space: "one", key: key, transport: InProcessTransport(),
            collections: ["notes"])
        await #expect(throws: SyncError.spaceMismatch(bound: "one", requested: "two")) {
            try await SyncSpace(
                database: database, space: "two", key: key, transport: InProcessTransport(),
                collections: ["notes"])
        }
        await #expect(throws: SyncError.unknownCollection("missing")) {
            try await SyncSpace(
                database: database, space: "one", key: key, transport: InProcessTransport(),
                collections: ["missing"])
        }
    }

    /// Checks `condition` every 50 ms until it holds or `seconds` of wall clock have passed, and
    /// once more after the deadline (a starved test task may wake only then). Polling a state
    /// that stays true cannot miss it, unlike waiting for the one status that announces it.
    private func eventually(_ seconds: Int, _ condition: () async throws -> Bool) async rethrows
        -> Bool
    {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let last = ContinuousClock.now >= deadline
            if try await condition() { return true }
            if last { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// What B's ``SyncSpace/statuses`` stream delivered, recorded as it arrives.
    private actor Heard {
        var pulled = false
        var failed = false
        var afterFailure = false
        func note(_ status: SyncStatus) {
            if status.lastPulledSequence >= 1 { pulled = true }
            if status.lastError != nil { failed = true } else if failed { afterFailure = true }
        }
    }

    @Test func runKeepsTwoDevicesInSyncAndStatusesReportIt() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        // A short longest backoff: the failure below makes both loops back off, and a test
        // starved for a while would otherwise wait out a 30 s backoff after the server is back.
        let runs = [a, b].map { device in
            Task {
                try await device.sync.run(pollInterval: .seconds(1), maximumBackoff: .seconds(1))
            }
        }
        defer { for run in runs { run.cancel() } }
        let heard = Heard()
        let statuses = b.sync.statuses
        let listening = Task { for await status in statuses { await heard.note(status) } }
        defer { listening.cancel() }
        try await a.notes.insert([Notes.note("live", title: "while running", body: "oat milk")])
        // B hears of it (A pushes on commit, the transport notifies B) without any call here.
        #expect(try await eventually(120) { try await b.notes.fetch(id: "live") != nil })
        #expect(await eventually(120) { await b.sync.status.lastPulledSequence >= 1 })
        #expect(
            await eventually(120) { await heard.pulled }, "the statuses stream reports the pull")
        // A failing server shows in the status, and the loop recovers when it is back.
        struct Down: Error {}
        server.failure = Down()
        try await b.notes.insert([
            Notes.note("while-down", title: "written while the server is down")
        ])
        #expect(await eventually(120) { await b.sync.status.lastError != nil })
        #expect(
            await eventually(120) { await heard.failed }, "the statuses stream reports the failure")
        #expect(try await a.notes.fetch(id: "while-down") == nil)
        server.failure = nil
        #expect(try await eventually(120) { try await a.notes.fetch(id: "while-down") != nil })
        #expect(await eventually(120) { await b.sync.status.lastError == nil })
        #expect(
            await eventually(120) { await heard.afterFailure },
            "the statuses stream reports the recovery")
    }

    @Test func theLastErrorIsKeptInTheDatabaseUntilASuccess() async throws {
        struct Down: Error {}
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let database = try Database(path: directory.path("a.trove"))
        #expect(try await SyncSpace.boundSpace(of: database) == nil)
        let a = try await Device.make(
            "a", database: database, transport: server, key: key, space: "errands")
        #expect(try await SyncSpace.boundSpace(of: database) == "errands")
        try await a.notes.insert([Notes.note("n1", title: "first")])
        server.failure = Down()
        await #expect(throws: SyncError.transport(String(describing: Down()))) {
            try await a.sync.push()
        }
        // Another process (a new SyncSpace on the file) reads the failure.
        let later = try await SyncSpace(
            database: database, space: "errands", key: key, transport: server,
            collections: ["notes"])
        #expect(await later.status.lastError == .transport(String(describing: Down())))
        try await later.recordFailure(SyncError.wrongKey(space: "errands"))
        #expect(await later.status.lastError == .wrongKey(space: "errands"))
        server.failure = nil
        #expect(try await later.push() == 1)
        let clean = try await SyncSpace(
            database: database, space: "errands", key: key, transport: server,
            collections: ["notes"])
        #expect(await clean.status.lastError == nil)
    }
}
