import Foundation

/// Everything sync refuses or fails at, matched by case.
///
/// Codable so that a device keeps its last failure across runs (``SyncStatus/lastError``).
public enum SyncError: Error, Hashable, Sendable, Codable, CustomStringConvertible, LocalizedError {
    /// The collection has `Int64` ids, which two offline devices would both hand out.
    case int64IDs(collection: String)
    /// The collection is not one of the space's synced collections (or does not exist).
    case unknownCollection(String)
    /// The key string or passphrase cannot make a key.
    case invalidKey(reason: String)
    /// The key is not the space's: it does not open the space's key check (or, in a space from
    /// before key checks, its first change set). Nothing was sent and nothing applied; the
    /// device's changes wait until it syncs with the right key.
    case wrongKey(space: String)
    /// A change set did not open: its bytes were altered, or it was sealed with a key that is not
    /// the space's. Nothing of it was applied (a pull quarantines it: ``SyncStatus/quarantined``).
    case cannotOpen(device: String, deviceSequence: Int64)
    /// A change set opened but its content is not a change set this version reads.
    case malformedChangeSet(device: String, deviceSequence: Int64, reason: String)
    /// A change set carries vectors of another embedding model than the local vector field's:
    /// they are never mixed in; the change set stays queued.
    case embeddingModelMismatch(collection: String, field: String, local: String, remote: String)
    /// The database already syncs another space.
    case spaceMismatch(bound: String, requested: String)
    /// The space's name is empty or too long.
    case invalidSpace(String, reason: String)
    /// The transport failed (network, server, credentials): the message of its error. Nothing
    /// left the outbox; the next attempt sends the same change sets.
    case transport(String)
    /// The local database failed (disk full, busy past the timeout, ...): its error in words.
    /// Nothing of the step that failed was kept.
    case database(String)
    /// A conflict cannot be restored: its record no longer exists (deleted since).
    case conflictRecordGone(collection: String, id: String)
    /// A snapshot cannot be made now: the transport keeps none, or this device does not hold
    /// the full state (changes still to send, change sets queued).
    case snapshotUnavailable(String)
    /// This device was removed from the space: it holds no key of the epochs since, and the
    /// server refuses what it sends. Nothing was sent or applied.
    case removedFromSpace(space: String, device: String)
    /// This device is not a member yet: it was added by code and has not accepted
    /// (``SyncSpace/acceptMembership(confirmationCode:)``), or it joined by passphrase after a
    /// device was removed, and a member must add it (``SyncSpace/addDevice(invitation:)``).
    case awaitingMembership(space: String, device: String)
    /// Something is sealed under a key epoch this device holds no key of (it began after this
    /// device last learnt the epochs, or after its removal). Nothing of it was applied.
    case missingEpochKey(epoch: Int64)
    /// The confirmation code does not open the key the adding device wrapped (mistyped, or the
    /// key was not wrapped by the device that showed the code). Nothing was kept.
    case wrongConfirmationCode
    /// The string is not a device invitation (``SyncSpace/invitation``).
    case invalidInvitation(reason: String)
    /// No member device of that id in the space (or it is this device, which another removes).
    case unknownDevice(String)
    /// The transport keeps no devices or key epochs (``MembershipTransport``).
    case membershipUnavailable
    /// A transport refused change sets or a snapshot sealed under an older key epoch than the
    /// space's (a device was removed meanwhile). A push seals again and retries by itself.
    case staleKeyEpoch(space: String)

    /// What went wrong and, where there is one, what to do.
    public var description: String {
        switch self {
        case .int64IDs(let collection):
            "collection \(collection) has Int64 ids, which collide when two devices create records offline; "
                + "sync needs ids unique across devices: create it with DocumentSchema(id: .uuid) or .string "
                + "(models: a UUID or String id; search collections: CollectionConfiguration(ids: .uuid)) "
                + "and copy the records over in a migration"
        case .unknownCollection(let name): "collection \(name) is not synced in this space"
        case .invalidKey(let reason): "invalid sync key: \(reason)"
        case .wrongKey(let space):
            "the key (passphrase) is not the one of space \(space): nothing was sent or applied; "
                + "sync again with the space's passphrase"
        case .cannotOpen(let device, let sequence):
            "change set \(sequence) of device \(device) does not open: altered on the server, or sealed with another key; nothing applied"
        case .malformedChangeSet(let device, let sequence, let reason):
            "change set \(sequence) of device \(device) is malformed: \(reason); nothing applied"
        case .embeddingModelMismatch(let collection, let field, let local, let remote):
            "\(collection).\(field) holds vectors of \(local); a change set carries vectors of \(remote): kept queued, not applied"
        case .spaceMismatch(let bound, let requested):
            "this database syncs space \(bound), not \(requested)"
        case .invalidSpace(let name, let reason): "invalid space name \(name): \(reason)"
        case .transport(let message): "transport failed: \(message)"
        case .database(let message): "the local database failed: \(message)"
        case .conflictRecordGone(let collection, let id): "\(collection) \(id) no longer exists"
        case .snapshotUnavailable(let why): "no snapshot made: \(why)"
        case .removedFromSpace(let space, let device):
            "device \(device) was removed from space \(space): nothing was sent or applied; "
                + "a member can add it again with a new invitation"
        case .awaitingMembership(let space, let device):
            "device \(device) is not yet a member of space \(space): a member adds it "
                + "(trove sync add-device INVITATION), then it accepts with the code shown there"
        case .missingEpochKey(let epoch):
            "this device holds no key of key epoch \(epoch); nothing sealed under it was applied"
        case .wrongConfirmationCode:
            "the confirmation code does not match the one the adding device showed; nothing was kept"
        case .invalidInvitation(let reason): "not a device invitation: \(reason)"
        case .unknownDevice(let device):
            "no other member device \(device) in this space (trove sync devices lists them)"
        case .staleKeyEpoch(let space):
            "space \(space) is at a newer key epoch: what was sealed under an older one was refused"
        case .membershipUnavailable:
            "the transport keeps no devices or key epochs (PostgreSQL does)"
        }
    }

    /// The ``description``.
    public var errorDescription: String? { description }
}
