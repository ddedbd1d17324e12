import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@testable import TroveSync

/// Snapshots for new devices: a device that joins from the newest snapshot and pulls the tail
/// ends in the same state as one that replayed the whole feed; a snapshot that cannot be used is
/// refused and the feed pulled instead.
@Suite struct SnapshotTests {
    /// Two devices edit at random and sync; one uploads a snapshot part way; more edits follow.
    /// A device joining from the snapshot plus the tail and one replaying the feed end with the
    /// same dump as the writers. Many seeds.
    @Test(arguments: 0..<12)
    func aDeviceJoinedFromASnapshotEqualsOneThatReplayedTheFeed(seed: UInt64) async throws {
        var random = SeededGenerator(seed: 0x5a09_0000 + seed)
        let server = InProcessTransport()
        // A device that pulled nothing yet and is within the horizon: nothing is pruned, so the
        // replaying device below finds the whole feed.
        _ = try await server.reportCursor(0, device: "holdout", space: "space")
        let key = try SyncKey.random()
        let writers = [
            try await Device.make("a", database: Database(), transport: server, key: key),
            try await Device.make("b", database: Database(), transport: server, key: key),
        ]
        var snapshotTaken = false
        for step in 0..<90 {
            let device = writers[Int.random(in: 0..<writers.count, using: &random)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0: try await device.sync.push()
            case 1: try await device.sync.pull()
            default: try await ConvergenceTests.edit(device, using: &random)
            }
            if step >= 45, !snapshotTaken {
                snapshotTaken = true
                try await device.sync.uploadSnapshot()
            }
        }
        for _ in 0..<2 {
            for device in writers { try await device.sync.push() }
            for device in writers { try await device.sync.pull() }
        }
        let state = try await server.feedState(space: "space", fullSize: true)
        let snapshot = try #require(state.snapshot)
        #expect(snapshot.upToSequence > 0)

        let joined = try await Device.make(
            "joined", database: Database(), transport: server, key: key)
        let replayed = try await Device.make(
            "replayed", database: Database(), transport: FeedOnlyTransport(server), key: key)
        let joinedApplied = try await joined.sync.pull()
        let replayedApplied = try await replayed.sync.pull()
        #expect(
            joinedApplied <= replayedApplied,
            "seed \(seed): the joined device applied more change sets")

        let reference = try await writers[0].canonicalDump()
        #expect(
            try await writers[1].canonicalDump() == reference, "seed \(seed): the writers differ")
        let viaSnapshot = try await joined.canonicalDump()
        let viaFeed = try await replayed.canonicalDump()
        #expect(
            viaSnapshot == viaFeed,
            "seed \(seed): snapshot has \(viaSnapshot.filter { !viaFeed.contains($0) }), feed has \(viaFeed.filter { !viaSnapshot.contains($0) })"
        )
        #expect(
            viaSnapshot == reference, "seed \(seed): the joined device differs from the writers")
        for device in [joined, replayed] {
            let report = try await device.database.verify()
            #expect(report.isHealthy, "seed \(seed): \(device.name): \(report.problems)")
            // A remote delete that cascaded to a link still alive here is this device's change
            // to send (as with any pull): sent, the device is in sync.
            try await device.sync.push()
            let status = try await device.sync.refreshStatus()
            #expect(status.lastPulledSequence == state.lastSequence)
            #expect(status.missing.isEmpty, "seed \(seed): \(device.name) misses \(status.missing)")
            #expect(status.isInSync)
        }
        // The joined device goes on syncing like any other: its edit reaches the writers.
        try await joined.notes.insert([Notes.note("from-joined", title: "joined later")])
        try await joined.sync.push()
        try await writers[0].sync.pull()
        #expect(try await writers[0].notes.fetch(id: "from-joined")?["title"] == "joined later")
    }

    /// The policy: due after so many change sets (or bytes) since the newest snapshot, and only
    /// once the feed after it is at least as large as it; never when manual.
    @Test func aSnapshotIsDueByThePolicy() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        #expect(await a.sync.snapshotPolicy == .standard)
        await a.sync.setSnapshotPolicy(SnapshotPolicy(changeSets: 3, bytes: .max))
        for i in 0..<2 {
            try await a.notes.insert([
                Notes.note("n\(i)", title: "note \(i)", body: "a body long enough to weigh")
            ])
            try await a.sync.push()
        }
        #expect(try await a.sync.snapshotIfDue() == nil)
        try await a.notes.insert([
            Notes.note("n2", title: "note 2", body: "a body long enough to weigh")
        ])
        try await a.sync.push()
        let first = try #require(try await a.sync.snapshotIfDue())
        #expect(first.upToSequence == 3)
        #expect(try await a.sync.snapshotIfDue() == nil)
        // Three more small change sets: due by count, but smaller than the snapshot together.
        for i in 0..<3 {
            _ = try await a.notes.patch(.string("n0"), [Field("rank"): .int(Int64(i))])
            try await a.sync.push()
        }
        let state = try #require(try await a.sync.feedState())
        #expect(state.changeSetsSinceSnapshot == 3)
        if state.bytesSinceSnapshot < first.bytes {
            #expect(try await a.sync.snapshotIfDue() == nil)
        }
        await a.sync.setSnapshotPolicy(.manual)
        #expect(try await a.sync.snapshotIfDue() == nil)
        // A transport without snapshots: none is due, and asking for one says why.
        let plain = try await Device.make(
            "plain", database: Database(), transport: FeedOnlyTransport(server), key: key)
        #expect(try await plain.sync.snapshotIfDue() == nil)
        await #expect(throws: SyncError.self) { try await plain.sync.uploadSnapshot() }
    }

    /// What is uploaded is ciphertext in parts, and a snapshot is made only from the full state.
    @Test func aSnapshotNeedsTheFullStateAndIsSealed() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "marker-title-7731", body: "marker-body")]
        )
        let uploaded = try await a.sync.uploadSnapshot()
        #expect(uploaded.upToSequence == 1 && uploaded.parts == 1)
        let part = try #require(try await server.snapshotPart(0, of: uploaded, space: "space"))
        #expect(part.range(of: Data("marker-title-7731".utf8)) == nil)
        // A snapshot of one part does not open as another part or for another space.
        #expect(throws: Snapshot.Refusal.self) {
            try Snapshot.open(
                [part],
                descriptor: SnapshotDescriptor(
                    upToSequence: 2, device: a.sync.device, parts: 1, bytes: 0),
                key: key, space: "space")
        }
        #expect(throws: Snapshot.Refusal.self) {
            try Snapshot.open([part], descriptor: uploaded, key: key, space: "other")
        }
        // Queued change sets mean this device lacks part of the state: no snapshot from it.
        try await a.database.syncWrite { connection in
            try connection.execute(
                "INSERT INTO \(SyncTables.queue)(server_sequence, device, device_sequence, payload, reason) VALUES (99, 'x', 1, x'00', 'collection\tx')"
            )
        }
        await #expect(throws: SyncError.self) { try await a.sync.uploadSnapshot() }
    }

    /// A snapshot that does not open, is of an unknown format or a newer schema, or is older than
    /// the device's cursor is refused; the device pulls the feed and ends like the others.
    @Test(arguments: ["garbage", "format", "schema"])
    func aRefusedSnapshotFallsBackToTheFeed(kind: String) async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "one"), Notes.note("n2", title: "two")])
        try await a.sync.push()
        _ = try await a.notes.delete(id: "n2")
        try await a.sync.push()
        let upTo = try await server.feedState(space: "space", fullSize: false).lastSequence
        let writer = "feedfacefeedfacefeedfacefeedface"
        let parts: [Data]
        switch kind {
        case "garbage":
            parts = [Data(repeating: 7, count: 64)]
        case "format":
            let plain = Array("TSN9 a later format".utf8)
            parts = [
                Data(
                    try AuthenticatedEncryption.seal(
                        plain, key: key.bytes,
                        associatedData: Snapshot.associatedData(
                            space: "space", device: writer, upTo: upTo, part: 0, parts: 1)))
            ]
        default:
            parts = try Snapshot(schemaVersion: 99, upTo: upTo, writers: [:], groups: []).seal(
                key: key, space: "space", device: writer)
        }
        try await server.putSnapshotPart(
            parts[0], part: 0, of: 1, upTo: upTo, device: writer, space: "space")
        #expect(try await server.finishSnapshot(upTo: upTo, device: writer, space: "space"))

        let b = try await Device.make("b", database: Database(), transport: server, key: key)
        #expect(try await b.sync.pull() == 2)
        let status = await b.sync.status
        #expect(
            status.refusedSnapshot?.contains("refused") == true,
            "\(kind): \(String(describing: status.refusedSnapshot))")
        #expect(status.lastError == nil)
        #expect(try await b.canonicalDump() == a.canonicalDump())
        #expect(status.isInSync)
    }

    @Test func aSnapshotOlderThanTheCursorIsRefused() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        _ = try await server.reportCursor(0, device: "holdout", space: "space")
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "one")])
        try await a.sync.uploadSnapshot()
        try await a.notes.insert([Notes.note("n2", title: "two")])
        try await a.sync.push()
        let b = try await Device.make(
            "b", database: Database(), transport: FeedOnlyTransport(server), key: key)
        try await b.sync.pull()
        // The same database with a transport that offers the snapshot, asked to start from it.
        let again = try await SyncSpace(
            database: b.database, space: "space", key: key, transport: server,
            collections: ["notes"])
        #expect(try await again.joinFromSnapshot(cursor: 0) == false)
        #expect(try await again.refreshStatus().refusedSnapshot?.contains("pulled up to 2") == true)
        #expect(try await b.canonicalDump() == a.canonicalDump())
    }
}
