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
    func aDeviceBackAfterTheHorizonStartsFromTheSnapshotAndKeepsItsChanges(seed: UInt64) async throws {
        var random = SeededGenerator(seed: 0x9e70_0000 + seed)
        let server = InProcessTransport()
        server.horizon = .seconds(3_600)
        let clock = Clock()
        server.now = { clock.now }
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let away = try await Device.make("away", database: Database(), transport: server, key: key)
        for _ in 0..<30 { try await ConvergenceTests.edit([a, away][Int.random(in: 0..<2, using: &random)], using: &random) }
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
        #expect(state.prunedUpTo > cursor, "seed \(seed): the feed was not pruned past the away device")
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
        let clock = Clock()
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
        _ = try await server.putSnapshotPart(Data(repeating: 3, count: 50), part: 0, of: 1, upTo: 4, device: "zzzz", space: "space")
        #expect(try await server.finishSnapshot(upTo: 4, device: "zzzz", space: "space"))

        try await away.sync.pull()
        let status = await away.sync.status
        #expect(status.refusedSnapshot != nil)
        #expect(try await away.notes.fetch(id: "n4") != nil)
        #expect(try await away.notes.fetch(id: "n2") == nil)
        let missing = try #require(status.missing.first)
        #expect(missing.device == a.sync.device && missing.firstMissing == 2 && missing.lastMissing == 4)
        #expect(!status.isInSync)
    }
}

/// A server clock the tests move forward.
final class Clock: @unchecked Sendable {
    // Guarded by `lock`: the transport reads it from any thread.
    private let lock = NSLock()
    private var current = Date()
    var now: Date { lock.withLock { current } }
    func advance(by seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// Gaps in a writer's sequence numbers: noticed, named in the status, and no "in sync" past them.
@Suite struct WithheldChangeSetTests {
    @Test func aWithheldChangeSetIsReportedUntilItArrives() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let b = try await Device.make("b", database: Database(), transport: server, key: key)
        for i in 1...3 {
            try await a.notes.insert([Notes.note("n\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        // The server withholds a's second change set.
        let withheld = try #require(server.feed(space: "space").first { $0.deviceSequence == 2 })
        server.deleteChangeSet(device: withheld.device, deviceSequence: 2, space: "space")
        try await b.sync.pull()
        let status = await b.sync.status
        #expect(!status.isInSync)
        let missing = try #require(status.missing.first)
        #expect(status.missing.count == 1)
        #expect(missing.device == a.sync.device && missing.firstMissing == 2 && missing.lastMissing == 2 && missing.highestReceived == 3)
        // Pulling again does not make it go away.
        try await b.sync.pull()
        #expect(await b.sync.status.missing.count == 1)
        // It arrives (the server hands it over late): the gap closes.
        _ = try await server.push([withheld], space: "space")
        try await b.sync.pull()
        #expect(await b.sync.status.missing.isEmpty)
        #expect(await b.sync.status.isInSync)
    }

    @Test func aQuarantinedChangeSetCountsAsReceived() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let b = try await Device.make("b", database: Database(), transport: server, key: key)
        for i in 1...3 {
            try await a.notes.insert([Notes.note("n\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        server.replacePayload(at: 2, space: "space", with: Data(repeating: 1, count: 40))
        try await b.sync.pull()
        let status = await b.sync.status
        #expect(status.quarantined.count == 1)
        #expect(status.missing.isEmpty)
        #expect(status.isInSync)
    }

    /// A pull's byte budget: change sets within it come together, one over it comes alone.
    @Test func pullsCarryAByteBudget() async throws {
        let server = InProcessTransport()
        let sets = [10, 10, 100, 10].enumerated().map { index, size in
            SealedChangeSet(device: "d", deviceSequence: Int64(index + 1), payload: Data(repeating: 0, count: size))
        }
        _ = try await server.push(sets, space: "s")
        #expect(try await server.pull(space: "s", after: 0, limit: 10, maxBytes: 25).map(\.deviceSequence) == [1, 2])
        #expect(try await server.pull(space: "s", after: 2, limit: 10, maxBytes: 25).map(\.deviceSequence) == [3])
        #expect(try await server.pull(space: "s", after: 3, limit: 10, maxBytes: 25).map(\.deviceSequence) == [4])
        #expect(try await server.pull(space: "s", after: 0, limit: 2, maxBytes: 1_000).map(\.deviceSequence) == [1, 2])
    }
}
