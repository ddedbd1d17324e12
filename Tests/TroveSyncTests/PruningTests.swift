import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@testable import TroveSync

/// Pruning below the newest snapshot and the slowest live cursor, and a device that comes back
/// after the horizon.
@Suite struct PruningTests {
    @Test func theFeedIsPrunedBelowTheSnapshotAndTheSlowestLiveCursor() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let b = try await Device.make("b", database: Database(), transport: server, key: key)
        for i in 0..<5 {
            try await a.notes.insert([Notes.note("a\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        try await b.sync.pull()  // b at 5
        try await a.notes.insert([Notes.note("a5", title: "note 5")])
        try await a.sync.push()  // 6 change sets
        // Without a snapshot nothing goes, whatever the cursors.
        try await a.sync.pull()
        #expect(server.feed(space: "space").count == 6)
        // A snapshot up to 6: b has pulled only 5, so 1-5 go and 6 stays.
        try await a.sync.uploadSnapshot()
        #expect(server.feed(space: "space").map(\.serverSequence) == [6])
        try await b.sync.pull()
        #expect(server.feed(space: "space").isEmpty)
        let state = try await server.feedState(space: "space", fullSize: true)
        #expect(state.prunedUpTo == 6 && state.changeSets == 0 && state.snapshot?.upToSequence == 6)
        #expect(try await b.canonicalDump() == a.canonicalDump())
    }

    /// A device away past the horizon no longer holds pruning back; when it comes back it starts
    /// from the snapshot, and its own unpushed changes (pending and sealed) are kept and pushed.
    @Test(arguments: 0..<6)
    func aDeviceBackAfterTheHorizonStartsFromTheSnapshotAndKeepsItsChanges(seed: UInt64)
        async throws
    {
        var random = SeededGenerator(seed: 0x9e70_0000 + seed)
        let server = InProcessTransport()
        server.horizon = .seconds(3_600)
        let clock = ServerClock()
        server.now = { clock.now }
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let away = try await Device.make("away", database: Database(), transport: server, key: key)
        for _ in 0..<30 {
            try await ConvergenceTests.edit(
                [a, away][Int.random(in: 0..<2, using: &random)], using: &random)
        }
        for device in [a, away, a, away] {
            try await device.sync.push()
            try await device.sync.pull()
        }
        // The away device writes offline: one change sealed but not acknowledged, one pending.
        try await away.notes.insert([Notes.note("offline-1", title: "written offline")])
        server.failure = SyncError.transport("offline")
        _ = try? await away.sync.push()
        server.failure = nil
        #expect(await away.sync.status.unacknowledgedChangeSets == 1)
        try await away.notes.insert([Notes.note("offline-2", title: "also offline")])
        let cursor = await away.sync.status.lastPulledSequence

        // Two hours later the others go on; the away device's cursor is past the horizon.
        clock.advance(by: 7_200)
        for _ in 0..<30 { try await ConvergenceTests.edit(a, using: &random) }
        try await a.notes.insert([Notes.note("while-away", title: "written while away")])
        try await a.sync.uploadSnapshot()
        let state = try await server.feedState(space: "space", fullSize: true)
        #expect(
            state.prunedUpTo > cursor, "seed \(seed): the feed was not pruned past the away device")
        #expect(state.changeSets == 0)

        try await away.sync.push()
        try await away.sync.pull()
        try await a.sync.pull()
        try await away.sync.pull()
        #expect(try await away.notes.fetch(id: "while-away") != nil)
        #expect(try await a.notes.fetch(id: "offline-1")?["title"] == "written offline")
        #expect(try await a.notes.fetch(id: "offline-2")?["title"] == "also offline")
        #expect(try await away.canonicalDump() == a.canonicalDump(), "seed \(seed)")
        let status = try await away.sync.refreshStatus()
        #expect(status.isInSync, "seed \(seed): \(status)")
    }

    /// Back after the horizon with only a snapshot it cannot use: it pulls what is left of the
    /// feed and says which change sets it misses, never that it is in sync.
    @Test func aDeviceBackAfterTheHorizonWithAnUnusableSnapshotReportsWhatItMisses() async throws {
        let server = InProcessTransport()
        server.horizon = .seconds(3_600)
        let clock = ServerClock()
        server.now = { clock.now }
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let away = try await Device.make("away", database: Database(), transport: server, key: key)
        try await a.notes.insert([Notes.note("n0", title: "before")])
        try await a.sync.push()
        try await away.sync.pull()
        clock.advance(by: 7_200)
        for i in 1...3 {
            try await a.notes.insert([Notes.note("n\(i)", title: "while away")])
            try await a.sync.push()
        }
        try await a.sync.uploadSnapshot()  // prunes 1-4: the away device is past the horizon
        try await a.notes.insert([Notes.note("n4", title: "after the snapshot")])
        try await a.sync.push()
        // The newest snapshot is one nobody can open (it replaces the good one).
        _ = try await server.putSnapshotPart(
            Data(repeating: 3, count: 50), part: 0, of: 1, upTo: 4, device: "zzzz", space: "space")
        #expect(try await server.finishSnapshot(upTo: 4, device: "zzzz", space: "space"))

        try await away.sync.pull()
        let status = await away.sync.status
        #expect(status.refusedSnapshot != nil)
        #expect(try await away.notes.fetch(id: "n4") != nil)
        #expect(try await away.notes.fetch(id: "n2") == nil)
        let missing = try #require(status.missing.first)
        #expect(
            missing.device == a.sync.device && missing.firstMissing == 2 && missing.lastMissing == 4
        )
        #expect(!status.isInSync)
    }

    /// A device that has reported no cursor yet holds nothing back, so the feed can be pruned
    /// between two pages of its first pull: it starts again from the snapshot then, not at the
    /// next change set left (which would skip the pruned ones for good).
    @Test func aDeviceWhoseNextChangeSetsArePrunedDuringAPullStartsFromTheSnapshot() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        for i in 0..<4 {
            try await a.notes.insert([Notes.note("a\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        let pages = PagedTransport(server, pageSize: 2)
        let b = try await Device.make("b", database: Database(), transport: pages, key: key)
        // After b's first page (1-2): a writes 5, uploads a snapshot up to 5 (b reported no
        // cursor, so 1-5 go) and writes 6.
        pages.beforePage(after: 2) {
            try await a.notes.insert([Notes.note("a4", title: "note 4")])
            try await a.sync.push()
            try await a.sync.uploadSnapshot()
            try await a.notes.insert([Notes.note("a5", title: "note 5")])
            try await a.sync.push()
        }
        try await b.sync.pull()
        #expect(server.feed(space: "space").map(\.serverSequence) == [6])
        for i in 0..<6 {
            #expect(try await b.notes.fetch(id: .string("a\(i)")) != nil, "a\(i)")
        }
        #expect(try await b.canonicalDump() == a.canonicalDump())
        let status = try await b.sync.refreshStatus()
        #expect(status.missing.isEmpty && status.isInSync, "\(status)")
    }

    /// A new device that cannot have the snapshot (it keeps being replaced while downloaded, or
    /// none is complete for a while) with the feed pruned: the pull fails (and the next one
    /// tries again) instead of going on after the pruned change sets for good.
    @Test(arguments: [false, true])
    func aPullWithoutTheSnapshotItNeedsFailsWhenTheFeedWasPruned(hidden: Bool) async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        for i in 0..<3 {
            try await a.notes.insert([Notes.note("a\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        try await a.sync.uploadSnapshot()  // prunes 1-3: b reported no cursor
        try await a.notes.insert([Notes.note("a3", title: "note 3")])
        try await a.sync.push()  // 4 stays
        let pages = PagedTransport(server, pageSize: 2)
        if hidden { pages.snapshotHidden = true } else { pages.partsGone = true }
        let b = try await Device.make("b", database: Database(), transport: pages, key: key)
        await #expect(throws: SyncError.self) { try await b.sync.pull() }
        #expect(await b.sync.status.lastPulledSequence == 0)
        (pages.partsGone, pages.snapshotHidden) = (false, false)
        try await b.sync.pull()
        #expect(try await b.canonicalDump() == a.canonicalDump())
        #expect(try await b.sync.refreshStatus().isInSync)
    }
}
