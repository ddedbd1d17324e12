import Foundation

/// A device of a space as the server keeps it: its id, its X25519 public key, a certificate
/// that a member made (the device id and public key sealed under an epoch key, which the server
/// cannot forge), and the epoch that removed it, if one did.
public struct SyncDeviceRecord: Sendable, Hashable {
    /// The device's opaque id.
    public var device: String
    /// Its X25519 public key (32 bytes).
    public var publicKey: Data
    /// Its certificate: its id and public key sealed under a key of the space.
    public var certificate: Data
    /// The key epoch that removed it; nil while it is a member.
    public var removedIn: Int64?
    /// The database role that registered it (a person's role, when a space is shared).
    public var role: String

    /// A device record.
    public init(
        device: String, publicKey: Data, certificate: Data, removedIn: Int64? = nil,
        role: String = ""
    ) {
        self.device = device
        self.publicKey = publicKey
        self.certificate = certificate
        self.removedIn = removedIn
        self.role = role
    }
}

/// An epoch's key wrapped for one device: only that device's private key (and the epoch before,
/// or the confirmation code for epoch 0) opens it.
public struct WrappedSpaceKey: Sendable, Hashable {
    /// The key epoch.
    public var epoch: Int64
    /// The device it is wrapped for.
    public var device: String
    /// The device that wrapped it.
    public var wrappedBy: String
    /// The wrapped key (sealed; the server cannot open it).
    public var payload: Data

    /// A wrapped key.
    public init(epoch: Int64, device: String, wrappedBy: String, payload: Data) {
        self.epoch = epoch
        self.device = device
        self.wrappedBy = wrappedBy
        self.payload = payload
    }
}

/// What a transport keeps so that a space's members are devices with keys of their own: the
/// devices and their public keys, the space's current key epoch and each epoch's key wrapped
/// for each member (``PostgresTransport``). A transport without it syncs with the space's first
/// key alone: devices join by passphrase and none can be removed.
public protocol MembershipTransport: SyncTransport {
    /// The space's current key epoch (0 until a device is first removed).
    func keyEpoch(space: String) async throws -> Int64

    /// Every device registered in the space, removed ones included.
    func devices(space: String) async throws -> [SyncDeviceRecord]

    /// The keys wrapped for `device`, every epoch.
    func wrappedKeys(for device: String, space: String) async throws -> [WrappedSpaceKey]

    /// Registers a device (kept as it is when registered already) and stores keys wrapped for
    /// it (one already stored for an epoch and device is kept).
    func putDevice(_ record: SyncDeviceRecord, keys: [WrappedSpaceKey], space: String)
        async throws

    /// Starts key epoch `epoch` (the current one plus one), atomically: marks `removing` as
    /// removed in it and stores its key wrapped for the remaining members. Fails when another
    /// device started that epoch first.
    func startEpoch(
        _ epoch: Int64, removing: [String], keys: [WrappedSpaceKey], space: String) async throws
}
