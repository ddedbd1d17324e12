import Foundation
import TroveSync

/// What `trove sync setup-server --json` prints.
struct SyncSchemaResult: Codable, Equatable, Sendable {
    var schemaVersion: Int
}

/// What `trove sync --json` (and `sync snapshot --json`) prints: change sets sent and received,
/// the device's status after, and the snapshot uploaded, if one was.
struct SyncRunResult: Codable, Equatable, Sendable {
    var pushed: Int
    var pulled: Int
    var status: SyncStatusResult
    @OmittedWhenNil var snapshot: SnapshotResult?
}

/// What `trove sync status --json` prints: this device's status, and the server's feed when it
/// could be reached (else the error).
struct SyncStatusReport: Codable, Equatable, Sendable {
    var space: String
    var status: SyncStatusResult
    @OmittedWhenNil var serverSequence: Int64?
    @OmittedWhenNil var feed: FeedResult?
    @OmittedWhenNil var serverError: String?
}

/// A device's sync status.
struct SyncStatusResult: Codable, Equatable, Sendable {
    var device: String
    var pendingChanges: Int
    var unacknowledgedChangeSets: Int
    var lastPushedSequence: Int64
    var lastPulledSequence: Int64
    /// `SEQUENCE: reason` per change set waiting for an earlier one.
    var queued: [String]
    var quarantined: [String]
    var conflicts: Int
    var missing: [String]
    var inSync: Bool
    var keyEpoch: Int64
    @OmittedWhenNil var refusedSnapshot: String?
    @OmittedWhenNil var lastError: String?

    init(_ status: SyncStatus) {
        device = status.device
        pendingChanges = status.pendingChanges
        unacknowledgedChangeSets = status.unacknowledgedChangeSets
        lastPushedSequence = status.lastPushedSequence
        lastPulledSequence = status.lastPulledSequence
        queued = status.queued.map { "\($0.serverSequence): \($0.reason)" }
        quarantined = status.quarantined.map(SyncCommand.describe)
        conflicts = status.conflicts
        missing = status.missing.map(\.description)
        inSync = status.isInSync
        keyEpoch = status.keyEpoch
        refusedSnapshot = status.refusedSnapshot
        lastError = status.lastError?.description
    }
}

/// The server's change feed for a space.
struct FeedResult: Codable, Equatable, Sendable {
    var lastSequence: Int64
    var prunedUpTo: Int64
    var changeSets: Int64
    var bytes: Int64
    var changeSetsSinceSnapshot: Int64
    var horizonSeconds: Int64
    @OmittedWhenNil var snapshot: SnapshotResult?

    init(_ feed: FeedState) {
        (lastSequence, prunedUpTo) = (feed.lastSequence, feed.prunedUpTo)
        (changeSets, bytes) = (feed.changeSets ?? 0, feed.bytes ?? 0)
        changeSetsSinceSnapshot = feed.changeSetsSinceSnapshot
        horizonSeconds = feed.horizon.components.seconds
        snapshot = feed.snapshot.map(SnapshotResult.init)
    }
}

/// A snapshot on the server.
struct SnapshotResult: Codable, Equatable, Sendable {
    var upToSequence: Int64
    var device: String
    var parts: Int
    var bytes: Int64

    init(_ snapshot: SnapshotDescriptor) {
        (upToSequence, device) = (snapshot.upToSequence, snapshot.device)
        (parts, bytes) = (snapshot.parts, snapshot.bytes)
    }
}

/// What `trove sync quarantine --json` prints.
struct QuarantineResult: Codable, Equatable, Sendable {
    var space: String
    var quarantined: [ChangeSet]
    /// With `--delete`: how many were deleted from the server.
    @OmittedWhenNil var deleted: Int?

    struct ChangeSet: Codable, Equatable, Sendable {
        var serverSequence: Int64
        var device: String
        var deviceSequence: Int64
        var reason: String
    }
}

/// What `trove sync invite --json` prints.
struct InvitationResult: Codable, Equatable, Sendable {
    var invitation: String
}

/// What `trove sync add-device --json` prints.
struct DeviceCodeResult: Codable, Equatable, Sendable {
    var code: String
}

/// What `trove sync devices --json` prints.
struct DeviceListResult: Codable, Equatable, Sendable {
    var devices: [Device]

    struct Device: Codable, Equatable, Sendable {
        var device: String
        var role: String
        var thisDevice: Bool
        /// The key epoch that left it out, once removed.
        var removedIn: Int64?
    }
}

/// What `trove sync remove-device --json` prints.
struct DeviceRemovedResult: Codable, Equatable, Sendable {
    var removed: String
    var keyEpoch: Int64
}
