import Foundation

/// One change set as a transport carries it: sealed on the device, opaque to everything between.
///
/// The server (or any backend an app provides) stores the payload as it is and sees only the
/// device id, the device's sequence number, the payload's size and the sequence number it assigns.
public struct SealedChangeSet: Sendable, Hashable {
    /// The sending device's opaque id (random, never derived from user data).
    public var device: String
    /// The sending device's sequence number in this space, from 1 without gaps. The pair
    /// (device, deviceSequence) is unique in a space, which makes a push idempotent.
    public var deviceSequence: Int64
    /// The sealed bytes (AES-256-GCM with the space, device and sequence bound as associated data).
    public var payload: Data
    /// The position the server gave this change set in the space's feed; nil before it is pushed.
    public var serverSequence: Int64?

    public init(device: String, deviceSequence: Int64, payload: Data, serverSequence: Int64? = nil)
    {
        self.device = device
        self.deviceSequence = deviceSequence
        self.payload = payload
        self.serverSequence = serverSequence
    }
}

/// What carries sealed change sets between devices: PostgreSQL (`PostgresTransport`), or an app's
/// own backend. A transport never opens a payload.
public protocol SyncTransport: Sendable {
    /// Appends change sets to the space's feed in one transaction and returns the server sequence
    /// of each, in order. Idempotent: a change set already stored (same device and device sequence)
    /// is not stored twice; its existing server sequence is returned.
    func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64]

    /// The space's change sets with a server sequence above `after`, ascending, at most `limit`.
    func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet]

    /// Yields whenever the space may have new change sets (for PostgreSQL, LISTEN/NOTIFY); finishes
    /// when the transport closes. A transport that cannot notify returns a stream that never yields,
    /// and the sync loop falls back to polling.
    func notifications(space: String) -> AsyncStream<Void>

    /// The space's key check: an opaque value sealed with the space's key, which a device opens
    /// before it pushes or pulls (nil while the space has none). The transport stores it as it is.
    func keyCheck(space: String) async throws -> Data?

    /// Stores `check` as the space's key check unless it has one, atomically, and returns the one
    /// it keeps (the first stored wins; a device that raced with another key sees the winner's).
    func setKeyCheck(_ check: Data, space: String) async throws -> Data
}

/// A snapshot the transport keeps: a device's merge state covering the feed up to
/// ``upToSequence``, sealed in ``parts`` parts.
public struct SnapshotDescriptor: Sendable, Hashable {
    /// The last server sequence the snapshot covers: a device that applies it pulls after it.
    public var upToSequence: Int64
    /// The device that made it.
    public var device: String
    /// How many sealed parts it has (numbered from 0).
    public var parts: Int
    /// Its sealed size in bytes.
    public var bytes: Int64

    /// A snapshot's description.
    public init(upToSequence: Int64, device: String, parts: Int, bytes: Int64) {
        self.upToSequence = upToSequence
        self.device = device
        self.parts = parts
        self.bytes = bytes
    }
}

/// The state of a space's feed on the server: how long it is, how far it was pruned, its
/// newest snapshot and the pruning horizon.
public struct FeedState: Sendable, Hashable {
    /// The space's last server sequence (0 for an empty feed).
    public var lastSequence: Int64
    /// Change sets at or below this sequence may have been pruned: a device whose cursor is
    /// below it starts again from the newest snapshot.
    public var prunedUpTo: Int64
    /// The newest complete snapshot, nil when there is none.
    public var snapshot: SnapshotDescriptor?
    /// Devices not seen for longer than this have no say in pruning.
    public var horizon: Duration
    /// Change sets stored after the newest snapshot (after sequence 0 without one).
    public var changeSetsSinceSnapshot: Int64
    /// Their sealed bytes.
    public var bytesSinceSnapshot: Int64
    /// Change sets stored in the whole feed, when asked for (a scan of the space's feed).
    public var changeSets: Int64?
    /// Their sealed bytes, when asked for.
    public var bytes: Int64?

    /// A feed's state.
    public init(
        lastSequence: Int64, prunedUpTo: Int64, snapshot: SnapshotDescriptor?, horizon: Duration,
        changeSetsSinceSnapshot: Int64, bytesSinceSnapshot: Int64, changeSets: Int64? = nil,
        bytes: Int64? = nil
    ) {
        self.lastSequence = lastSequence
        self.prunedUpTo = prunedUpTo
        self.snapshot = snapshot
        self.horizon = horizon
        self.changeSetsSinceSnapshot = changeSetsSinceSnapshot
        self.bytesSinceSnapshot = bytesSinceSnapshot
        self.changeSets = changeSets
        self.bytes = bytes
    }
}

/// What a transport offers beyond the feed so that a space lasts: pulls with a byte budget,
/// snapshots for new devices, cursors and pruning (``PostgresTransport``, ``InProcessTransport``).
/// An app's own backend that is only a ``SyncTransport`` still works: its new devices replay the
/// whole feed, nothing is pruned, and pulls are bounded by count alone.
public protocol SnapshotTransport: SyncTransport {
    /// The change sets above `after`, ascending, at most `limit` of them and at most `maxBytes`
    /// of payload; the first one comes whatever its size (alone when it is over the budget).
    func pull(space: String, after: Int64, limit: Int, maxBytes: Int) async throws
        -> [SealedChangeSet]

    /// Stores one sealed part of a snapshot (sending a part again replaces it; parts at or above
    /// `parts` go). A complete snapshot is kept as it is.
    func putSnapshotPart(
        _ payload: Data, part: Int, of parts: Int, upTo: Int64, device: String, space: String)
        async throws

    /// Marks a snapshot complete once every part is stored (false otherwise); older snapshots
    /// are then deleted.
    func finishSnapshot(upTo: Int64, device: String, space: String) async throws -> Bool

    /// One sealed part of a snapshot, nil when it is gone (a newer snapshot replaced it).
    func snapshotPart(_ part: Int, of snapshot: SnapshotDescriptor, space: String) async throws
        -> Data?

    /// Records how far `device` has pulled (and that it is alive), then prunes the feed below
    /// the newest snapshot and the slowest live cursor. Returns how many change sets were pruned.
    func reportCursor(_ pulledUpTo: Int64, device: String, space: String) async throws -> Int64

    /// The feed's state (`fullSize`: count the whole feed too, a scan of it).
    func feedState(space: String, fullSize: Bool) async throws -> FeedState
}
