import Foundation

/// Where a device stands in its space: what waits to go out, how far it has pulled, what it
/// keeps queued and why, and the last failure. ``SyncSpace/status`` holds the current value;
/// ``SyncSpace/statuses`` yields every new one.
public struct SyncStatus: Sendable, Hashable {
    /// This device's id in the space (random, kept in the database).
    public var device: String
    /// Local field changes and deletes not yet sealed into a change set.
    public var pendingChanges: Int
    /// Change sets sealed but not yet acknowledged by the server (they stay in the outbox until
    /// it acknowledges them).
    public var unacknowledgedChangeSets: Int
    /// The highest of this device's sequence numbers the server has acknowledged.
    public var lastPushedSequence: Int64
    /// The server sequence this device has pulled up to.
    public var lastPulledSequence: Int64
    /// Change sets pulled but not applied yet, with why.
    public var queued: [QueuedChangeSet]
    /// Change sets pulled that never open here (altered, or sealed with a key that is not the
    /// space's): skipped, never applied in part, kept here until forgotten
    /// (``SyncSpace/forgetQuarantined(_:)``). The space's owner can delete them from the server.
    public var quarantined: [QuarantinedChangeSet]
    /// How many overwritten concurrent values ``SyncSpace/conflicts()`` lists.
    public var conflicts: Int
    /// The last failure of a push, pull or apply (cleared by the next success of the same kind).
    /// Kept in the database, so it outlives the process that failed.
    public var lastError: SyncError?
    /// Change sets of other devices this device has not received although later ones of the
    /// same device arrived: withheld, or deleted from the feed. While any are missing the
    /// device is not ``isInSync``.
    public var missing: [MissingChangeSets]
    /// Why the last snapshot the server offered was not applied (the device pulled the feed
    /// instead), nil when none was refused.
    public var refusedSnapshot: String?
    /// The newest key epoch whose key this device holds (0 until a device of the space is
    /// removed; see `SyncSpace.removeDevice(_:)`).
    public var keyEpoch: Int64

    /// Whether this device has sent everything, applied everything it received, and received
    /// every change set of every writer up to the last it saw (no ``missing`` ones).
    public var isInSync: Bool {
        pendingChanges == 0 && unacknowledgedChangeSets == 0 && queued.isEmpty && missing.isEmpty
    }

    /// A status with nothing pending.
    public init(
        device: String, pendingChanges: Int = 0, unacknowledgedChangeSets: Int = 0,
        lastPushedSequence: Int64 = 0,
        lastPulledSequence: Int64 = 0, queued: [QueuedChangeSet] = [],
        quarantined: [QuarantinedChangeSet] = [],
        conflicts: Int = 0, lastError: SyncError? = nil, missing: [MissingChangeSets] = [],
        refusedSnapshot: String? = nil, keyEpoch: Int64 = 0
    ) {
        self.keyEpoch = keyEpoch
        self.missing = missing
        self.refusedSnapshot = refusedSnapshot
        self.quarantined = quarantined
        self.device = device
        self.pendingChanges = pendingChanges
        self.unacknowledgedChangeSets = unacknowledgedChangeSets
        self.lastPushedSequence = lastPushedSequence
        self.lastPulledSequence = lastPulledSequence
        self.queued = queued
        self.conflicts = conflicts
        self.lastError = lastError
    }
}

/// A change set this device pulled and keeps to apply later.
public struct QueuedChangeSet: Sendable, Hashable {
    /// Its position in the space's feed.
    public var serverSequence: Int64
    /// The device that sealed it.
    public var device: String
    /// That device's sequence number for it.
    public var deviceSequence: Int64
    /// Why it waits.
    public var reason: Reason

    /// Why a change set waits instead of being applied.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// It was written with a newer schema (more migrations applied) than this device's: it is
        /// applied once this device has migrated.
        case newerSchema(changeSet: Int, local: Int)
        /// It changes a collection this device does not have (or does not sync).
        case unknownCollection(String)
        /// It sets a field this device's schema does not have.
        case unknownField(collection: String, field: String)
        /// Its vectors come from another embedding model than the local field's.
        case embeddingModelMismatch(collection: String, field: String)

        /// The reason in words.
        public var description: String {
            switch self {
            case .newerSchema(let changeSet, let local):
                "written with schema version \(changeSet); this device has \(local): applied after it migrates"
            case .unknownCollection(let name): "collection \(name) does not exist here"
            case .unknownField(let collection, let field):
                "field \(collection).\(field) does not exist here"
            case .embeddingModelMismatch(let collection, let field):
                "\(collection).\(field) vectors of another embedding model"
            }
        }
    }
}

/// A change set this device pulled and will never apply: it does not open with the space's key
/// (the key itself was proved before the pull, so the change set is at fault, not this device).
public struct QuarantinedChangeSet: Sendable, Hashable {
    /// Its position in the space's feed.
    public var serverSequence: Int64
    /// The device that sealed it (or whose id it claims).
    public var device: String
    /// That device's sequence number for it.
    public var deviceSequence: Int64
    /// Why it is not applied.
    public var reason: Reason

    /// Why a change set is quarantined.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// It does not open: its bytes were altered, or it was sealed with another key (a device
        /// that synced with a wrong passphrase before key checks existed).
        case cannotOpen
        /// It opens but its content is not a change set this version reads (retried before every
        /// pull: a later version may read it).
        case malformed(String)

        /// The reason in words.
        public var description: String {
            switch self {
            case .cannotOpen: "does not open: altered on the server, or sealed with another key"
            case .malformed(let reason): "malformed: \(reason)"
            }
        }
    }

    /// A quarantined change set.
    public init(serverSequence: Int64, device: String, deviceSequence: Int64, reason: Reason) {
        self.serverSequence = serverSequence
        self.device = device
        self.deviceSequence = deviceSequence
        self.reason = reason
    }
}

/// A run of another device's change sets that did not arrive although later ones did.
public struct MissingChangeSets: Sendable, Hashable, CustomStringConvertible {
    /// The device that wrote them.
    public var device: String
    /// The first of its sequence numbers missing.
    public var firstMissing: Int64
    /// The last of the run (the next one after it arrived).
    public var lastMissing: Int64
    /// The highest of its sequence numbers received.
    public var highestReceived: Int64
    /// When this device first saw the gap.
    public var since: Date

    /// A missing run.
    public init(
        device: String, firstMissing: Int64, lastMissing: Int64, highestReceived: Int64, since: Date
    ) {
        self.device = device
        self.firstMissing = firstMissing
        self.lastMissing = lastMissing
        self.highestReceived = highestReceived
        self.since = since
    }

    /// The run in words.
    public var description: String {
        let run = firstMissing == lastMissing ? "\(firstMissing)" : "\(firstMissing)-\(lastMissing)"
        return
            "change sets \(run) of device \(device) missing (received up to \(highestReceived)) since \(since)"
    }
}
