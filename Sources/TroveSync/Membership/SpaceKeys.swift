import Foundation
import TroveSQLite

/// The keys of a space's epochs that this device holds, and the epoch it seals under.
///
/// Epoch 0 is the key the space started with (from the passphrase, or imported); removing a
/// device starts a new epoch with a random key wrapped for the remaining members only. What is
/// sealed under epoch 0 keeps the format of spaces from before epochs (old devices read it);
/// under a later epoch a box starts with a header naming the epoch, and the header is bound as
/// associated data, so a box cannot be moved to another epoch:
///
/// ```
/// epoch 0:  nonce (12) || AES-256-GCM(key0, plaintext, aad) || tag (16)
/// epoch n:  "TSE1" || n (8, big-endian) || nonce || AES-256-GCM(keyN, plaintext, header || aad) || tag
/// ```
struct SpaceKeys: Sendable {
    /// Each epoch's key this device holds, by epoch.
    var byEpoch: [Int64: SyncKey]
    /// The epoch new change sets and snapshots are sealed under.
    var current: Int64

    /// Keys of a space that has only its first key (a device that joined by passphrase and has
    /// not learnt of later epochs yet, or a transport without membership).
    init(key: SyncKey) {
        byEpoch = [0: key]
        current = 0
    }

    /// Keys by epoch; `byEpoch` may lack `current` (a device added by code before it accepted,
    /// or a removed one): it then opens what it holds keys for and seals nothing.
    init(byEpoch: [Int64: SyncKey], current: Int64) {
        self.byEpoch = byEpoch
        self.current = current
    }

    static let magic = Array("TSE1".utf8)
    static let headerCount = 12

    /// The epoch-0 key (the space's key check and first change sets are sealed under it).
    var first: SyncKey? { byEpoch[0] }

    /// The key new boxes are sealed under.
    ///
    /// - Throws: ``SyncError/missingEpochKey(epoch:)`` when this device does not hold it.
    func currentKey() throws -> SyncKey {
        guard let key = byEpoch[current] else {
            throw SyncError.missingEpochKey(epoch: current)
        }
        return key
    }

    static func header(epoch: Int64) -> [UInt8] {
        magic + withUnsafeBytes(of: UInt64(bitPattern: epoch).bigEndian) { Array($0) }
    }

    /// Seals `plaintext` under the current epoch.
    func seal(_ plaintext: [UInt8], associatedData: [UInt8]) throws -> [UInt8] {
        let key = try currentKey()
        guard current > 0 else {
            return try AuthenticatedEncryption.seal(
                plaintext, key: key.bytes, associatedData: associatedData)
        }
        let header = Self.header(epoch: current)
        return header
            + (try AuthenticatedEncryption.seal(
                plaintext, key: key.bytes, associatedData: header + associatedData))
    }

    /// The epoch a box names (0 for a box without a header).
    static func epoch(of box: [UInt8]) -> Int64 {
        guard box.count >= headerCount, Array(box.prefix(4)) == magic else { return 0 }
        let value = box[4..<12].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int64(bitPattern: value)
    }

    /// Whether this device lacks the key of the epoch `box` names (it was removed before that
    /// epoch began, or has not learnt of it yet).
    func lacksKey(for box: [UInt8]) -> Bool {
        let epoch = Self.epoch(of: box)
        return epoch > 0 && byEpoch[epoch] == nil
    }

    /// Opens a box sealed by ``seal(_:associatedData:)`` under any epoch this device holds; nil
    /// when it does not open (a wrong key, other associated data, altered bytes, or an epoch
    /// this device has no key for).
    func open(_ box: [UInt8], associatedData: [UInt8]) throws -> [UInt8]? {
        let epoch = Self.epoch(of: box)
        if epoch > 0, let key = byEpoch[epoch] {
            let header = Array(box.prefix(Self.headerCount))
            if let opened = try AuthenticatedEncryption.open(
                Array(box.dropFirst(Self.headerCount)), key: key.bytes,
                associatedData: header + associatedData)
            {
                return opened
            }
        }
        // A box of epoch 0 whose random nonce happens to start like a header is still one.
        guard let first else { return nil }
        return try AuthenticatedEncryption.open(
            box, key: first.bytes, associatedData: associatedData)
    }
}
