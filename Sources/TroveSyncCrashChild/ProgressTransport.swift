import Foundation
import TroveSync

/// A PostgreSQL transport that says what it is doing on standard output ("~ pushing n",
/// "~ pushed n", "~ pulled n", "~ snapshot part", "~ epoch"), so that the fault harness can kill
/// the device inside a push, right after a pull (in the apply), inside a snapshot upload or
/// inside a removal, however loaded the machine.
///
/// It forwards every request of the protocols a sync space looks for (snapshots, membership),
/// so the space behaves exactly as it does over ``PostgresTransport`` itself.
struct ProgressTransport: SnapshotTransport, MembershipTransport {
    let base: PostgresTransport

    func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] {
        TroveSyncCrashChild.say("~ pushing \(changeSets.count)")
        let sequences = try await base.push(changeSets, space: space)
        TroveSyncCrashChild.say("~ pushed \(changeSets.count)")
        return sequences
    }

    func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        announce(try await base.pull(space: space, after: after, limit: limit), after: after)
    }

    func pull(space: String, after: Int64, limit: Int, maxBytes: Int) async throws
        -> [SealedChangeSet]
    {
        announce(
            try await base.pull(space: space, after: after, limit: limit, maxBytes: maxBytes),
            after: after)
    }

    /// Says how many came, and (`G after first`) when the page does not start right after the
    /// cursor: the change sets between were pruned or deleted.
    private func announce(_ changeSets: [SealedChangeSet], after: Int64) -> [SealedChangeSet] {
        if let first = changeSets.first?.serverSequence, first != after + 1 {
            TroveSyncCrashChild.say("G \(after) \(first)")
        }
        if !changeSets.isEmpty { TroveSyncCrashChild.say("~ pulled \(changeSets.count)") }
        return changeSets
    }

    func notifications(space: String) -> AsyncStream<Void> { base.notifications(space: space) }

    func keyCheck(space: String) async throws -> Data? { try await base.keyCheck(space: space) }

    func setKeyCheck(_ check: Data, space: String) async throws -> Data {
        try await base.setKeyCheck(check, space: space)
    }

    func putSnapshotPart(
        _ payload: Data, part: Int, of parts: Int, upTo: Int64, device: String, space: String
    ) async throws {
        TroveSyncCrashChild.say("~ snapshot part \(part)")
        try await base.putSnapshotPart(
            payload, part: part, of: parts, upTo: upTo, device: device, space: space)
    }

    func finishSnapshot(upTo: Int64, device: String, space: String) async throws -> Bool {
        try await base.finishSnapshot(upTo: upTo, device: device, space: space)
    }

    func snapshotPart(_ part: Int, of snapshot: SnapshotDescriptor, space: String) async throws
        -> Data?
    {
        let data = try await base.snapshotPart(part, of: snapshot, space: space)
        if part == 0 { TroveSyncCrashChild.say("J \(snapshot.upToSequence)") }
        TroveSyncCrashChild.say("~ snapshot fetched \(part)")
        return data
    }

    func reportCursor(_ pulledUpTo: Int64, device: String, space: String) async throws -> Int64 {
        let pruned = try await base.reportCursor(pulledUpTo, device: device, space: space)
        TroveSyncCrashChild.say("C \(pulledUpTo) \(pruned)")
        return pruned
    }

    func feedState(space: String, fullSize: Bool) async throws -> FeedState {
        try await base.feedState(space: space, fullSize: fullSize)
    }

    func keyEpoch(space: String) async throws -> Int64 { try await base.keyEpoch(space: space) }

    func devices(space: String) async throws -> [SyncDeviceRecord] {
        try await base.devices(space: space)
    }

    func wrappedKeys(for device: String, space: String) async throws -> [WrappedSpaceKey] {
        try await base.wrappedKeys(for: device, space: space)
    }

    func putDevice(_ record: SyncDeviceRecord, keys: [WrappedSpaceKey], space: String)
        async throws
    {
        try await base.putDevice(record, keys: keys, space: space)
    }

    func startEpoch(_ epoch: Int64, removing: [String], keys: [WrappedSpaceKey], space: String)
        async throws
    {
        TroveSyncCrashChild.say("~ epoch \(epoch)")
        try await base.startEpoch(epoch, removing: removing, keys: keys, space: space)
    }
}
