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

    public init(device: String, deviceSequence: Int64, payload: Data, serverSequence: Int64? = nil) {
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
