import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveSync

/// Snapshots, cursors, pruning and byte budgets on the real server (schema version 3).
@Suite struct PostgresSnapshotTests {
    @Test(arguments: 0..<3)
    func aDeviceJoinedFromASnapshotEqualsOneThatReplayedTheFeed(seed: UInt64) async throws {
        var random = SeededGenerator(seed: 0x9095_0000 + seed)
        let role = try SyncServerFixture.newDevice()
        let space = SyncServerFixture.newSpaceName()
        let key = try SyncKey.random()
        let transports = try (0..<4).map { _ in try PostgresTransport(url: role.url) }
        defer { transports.forEach { $0.close() } }
        try await transports[0].createSpace(space)
        // A device within the horizon that pulled nothing: the feed is kept whole for the replay.
        _ = try await transports[0].reportCursor(0, device: "holdout", space: space)
        let writers = [
            try await Device.make(
                "a", database: Database(), transport: transports[0], key: key, space: space),
            try await Device.make(
                "b", database: Database(), transport: transports[1], key: key, space: space),
        ]
        for step in 0..<60 {
            let device = writers[Int.random(in: 0..<2, using: &random)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0: try await device.sync.push()
            case 1: try await device.sync.pull()
            default: try await ConvergenceTests.edit(device, using: &random)
            }
            if step == 30 { try await device.sync.uploadSnapshot() }
        }
        for _ in 0..<2 {
            for device in writers { try await device.sync.push() }
            for device in writers { try await device.sync.pull() }
        }
        let joined = try await Device.make(
            "joined", database: Database(), transport: transports[2], key: key, space: space)
        let replayed = try await Device.make(
            "replayed", database: Database(), transport: FeedOnlyTransport(transports[3]), key: key,
            space: space)
        try await joined.sync.pull()
        try await replayed.sync.pull()
        let reference = try await writers[0].canonicalDump()
        #expect(try await joined.canonicalDump() == reference, "seed \(seed)")
        #expect(try await replayed.canonicalDump() == reference, "seed \(seed)")
        #expect(await joined.sync.status.missing.isEmpty)
        #expect(await joined.sync.status.refusedSnapshot == nil)
    }

    /// The feed is pruned below the snapshot and the slowest cursor seen within the horizon; a
    /// device whose cursor is older than the horizon comes back through the snapshot with its
    /// unpushed change.
    @Test func pruningAndADeviceBackAfterTheHorizon() async throws {
        let server = try SyncServerFixture.server()
        let role = try SyncServerFixture.newDevice()
        let space = SyncServerFixture.newSpaceName()
        let key = try SyncKey.random()
        let transports = try (0..<2).map { _ in try PostgresTransport(url: role.url) }
        defer { transports.forEach { $0.close() } }
        try await transports[0].createSpace(space)
        let a = try await Device.make(
            "a", database: Database(), transport: transports[0], key: key, space: space)
        let away = try await Device.make(
            "away", database: Database(), transport: transports[1], key: key, space: space)
        for i in 0..<4 {
            try await a.notes.insert([Notes.note("a\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        try await away.sync.pull()  // away at 4
        try await away.notes.insert([Notes.note("offline", title: "written offline")])
        for i in 4..<8 {
            try await a.notes.insert([Notes.note("a\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        try await a.sync.uploadSnapshot()
        var state = try await transports[0].feedState(space: space, fullSize: true)
        #expect(state.prunedUpTo == 4 && state.changeSets == 4, "\(state)")

        // The away device was last seen 100 days ago: it no longer holds pruning back.
        try server.psql(
            "UPDATE trove_sync.cursors SET seen_at = now() - interval '100 days' WHERE device = '\(away.sync.device)'"
        )
        try await a.notes.insert([Notes.note("a8", title: "note 8")])
        try await a.sync.uploadSnapshot()
        state = try await transports[0].feedState(space: space, fullSize: true)
        #expect(
            state.prunedUpTo == 9 && state.changeSets == 0 && state.snapshot?.upToSequence == 9,
            "\(state)")

        try await away.sync.push()
        try await away.sync.pull()
        try await a.sync.pull()
        #expect(try await away.notes.fetch(id: "a8") != nil)
        #expect(try await a.notes.fetch(id: "offline")?["title"] == "written offline")
        #expect(try await away.canonicalDump() == a.canonicalDump())
        #expect(await away.sync.status.isInSync)
    }

    @Test func pullsCarryAByteBudgetAndSnapshotsFollowRowLevelSecurity() async throws {
        let role = try SyncServerFixture.newDevice()
        let stranger = try SyncServerFixture.newDevice(prefix: "stranger")
        let space = SyncServerFixture.newSpaceName()
        let transport = try PostgresTransport(url: role.url)
        let strangerTransport = try PostgresTransport(url: stranger.url)
        defer {
            transport.close()
            strangerTransport.close()
        }
        try await transport.createSpace(space)
        let sets = [10, 10, 100, 10].enumerated().map { index, size in
            SealedChangeSet(
                device: "d", deviceSequence: Int64(index + 1),
                payload: Data(repeating: 1, count: size))
        }
        _ = try await transport.push(sets, space: space)
        #expect(
            try await transport.pull(space: space, after: 0, limit: 10, maxBytes: 25).map(
                \.deviceSequence) == [1, 2])
        #expect(
            try await transport.pull(space: space, after: 2, limit: 10, maxBytes: 25).map(
                \.deviceSequence) == [3])
        #expect(
            try await transport.pull(space: space, after: 3, limit: 10, maxBytes: 25).map(
                \.deviceSequence) == [4])
        #expect(
            try await transport.pull(space: space, after: 0, limit: 2, maxBytes: 1_000).map(
                \.deviceSequence) == [1, 2])

        try await transport.putSnapshotPart(
            Data([1, 2]), part: 0, of: 2, upTo: 4, device: "d", space: space)
        #expect(try await transport.finishSnapshot(upTo: 4, device: "d", space: space) == false)
        #expect(try await transport.feedState(space: space, fullSize: false).snapshot == nil)
        try await transport.putSnapshotPart(
            Data([3]), part: 1, of: 2, upTo: 4, device: "d", space: space)
        #expect(try await transport.finishSnapshot(upTo: 4, device: "d", space: space))
        let snapshot = try #require(
            try await transport.feedState(space: space, fullSize: false).snapshot)
        #expect(snapshot == SnapshotDescriptor(upToSequence: 4, device: "d", parts: 2, bytes: 3))
        #expect(try await transport.snapshotPart(1, of: snapshot, space: space) == Data([3]))

        // Pruned up to the slowest cursor (2), not the snapshot (4).
        #expect(try await transport.reportCursor(2, device: "d", space: space) == 2)
        #expect(
            try await transport.pull(space: space, after: 0, limit: 10).map(\.deviceSequence) == [
                3, 4,
            ])
        // Another member (not the owner, who may delete change sets) cannot prune further with SQL
        // of its own: pruned_up_to does not move past the bound, and rows above it do not delete.
        let server = try SyncServerFixture.server()
        let member = try SyncServerFixture.newDevice(prefix: "member")
        try await transport.addMember(member.role, toSpace: space)
        do {
            _ = try server.psql(
                "UPDATE trove_sync.spaces SET pruned_up_to = 4 WHERE name = '\(space)'",
                user: member.role,
                password: member.password, sqlStateOnly: true)
            Issue.record("a member moved pruned_up_to past the slowest cursor")
        } catch TestPostgresError.command(_, _, let output) {
            #expect(output.contains("TS005"), "\(output)")
        }
        // Spaces first, in the order push, pull and a schema re-install lock them.
        let deleted = try server.psql(
            "SELECT FROM trove_sync.spaces WHERE false; "
                + "WITH d AS (DELETE FROM trove_sync.changes c WHERE c.space_id = trove_sync.space_id('\(space)') RETURNING 1) "
                + "SELECT count(*) FROM d", user: member.role, password: member.password)
        #expect(deleted.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        #expect(
            try await transport.pull(space: space, after: 0, limit: 10).map(\.deviceSequence) == [
                3, 4,
            ])

        // Another role sees nothing of it, and cannot prune or report a cursor.
        await #expect(throws: PostgresError.self) {
            try await strangerTransport.snapshotPart(0, of: snapshot, space: space)
        }
        await #expect(throws: PostgresError.self) {
            try await strangerTransport.feedState(space: space, fullSize: true)
        }
        await #expect(throws: PostgresError.self) {
            try await strangerTransport.reportCursor(9, device: "x", space: space)
        }
        await #expect(throws: PostgresError.self) {
            try await strangerTransport.putSnapshotPart(
                Data([0]), part: 0, of: 1, upTo: 9, device: "x", space: space)
        }
    }

    /// An upload cut off and sent again in fewer parts completes; a complete snapshot is kept
    /// whole when its device sends it again; a device whose state is already the newest snapshot
    /// uploads nothing.
    @Test func aSnapshotSentAgainCompletesAndACompleteOneIsKept() async throws {
        let role = try SyncServerFixture.newDevice()
        let space = SyncServerFixture.newSpaceName()
        let transport = try PostgresTransport(url: role.url)
        defer { transport.close() }
        try await transport.createSpace(space)
        let part = { (byte: UInt8) in Data([byte]) }
        // Three parts, cut off after two; sent again as two parts.
        for i in 0..<2 {
            try await transport.putSnapshotPart(
                part(UInt8(i)), part: i, of: 3, upTo: 5, device: "d", space: space)
        }
        #expect(try await !transport.finishSnapshot(upTo: 5, device: "d", space: space))
        for i in 0..<2 {
            try await transport.putSnapshotPart(
                part(UInt8(10 + i)), part: i, of: 2, upTo: 5, device: "d", space: space)
        }
        #expect(try await transport.finishSnapshot(upTo: 5, device: "d", space: space))
        let stored = try #require(
            try await transport.feedState(space: space, fullSize: false).snapshot)
        #expect(stored.parts == 2)
        // Sent again once complete: the stored parts stay as they were, and it stays complete.
        try await transport.putSnapshotPart(
            part(99), part: 0, of: 1, upTo: 5, device: "d", space: space)
        #expect(try await transport.feedState(space: space, fullSize: false).snapshot == stored)
        #expect(try await transport.snapshotPart(0, of: stored, space: space) == part(10))

        // Through a device: a second upload with nothing new returns the stored snapshot.
        let other = SyncServerFixture.newSpaceName()
        try await transport.createSpace(other)
        let device = try await Device.make(
            "a", database: Database(), transport: transport, key: try SyncKey.random(),
            space: other)
        try await device.notes.insert(Document(["title": "one"]))
        let first = try await device.sync.uploadSnapshot()
        #expect(try await device.sync.uploadSnapshot() == first)
        #expect(try await transport.feedState(space: other, fullSize: false).snapshot == first)
    }
}
