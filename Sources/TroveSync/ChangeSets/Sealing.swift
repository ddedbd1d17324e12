import Foundation
import TroveSQLite

/// Seals and opens change sets: AES-256-GCM with the space key of the current epoch, the space,
/// device and sequence number (and the epoch, see ``SpaceKeys``) bound as associated data, so a
/// payload moved to another space, device, position or epoch does not open either.
enum Sealing {
    static func associatedData(space: String, device: String, sequence: Int64) -> [UInt8] {
        Array("trove-sync/1\u{0}\(space)\u{0}\(device)\u{0}\(sequence)".utf8)
    }

    static func seal(_ set: ChangeSet, key: SyncKey, space: String, device: String, sequence: Int64)
        throws
        -> SealedChangeSet
    {
        try seal(set, keys: SpaceKeys(key: key), space: space, device: device, sequence: sequence)
    }

    static func seal(
        _ set: ChangeSet, keys: SpaceKeys, space: String, device: String, sequence: Int64
    ) throws -> SealedChangeSet {
        let payload = try keys.seal(
            ChangeSetCoding.encode(set),
            associatedData: associatedData(space: space, device: device, sequence: sequence))
        return SealedChangeSet(device: device, deviceSequence: sequence, payload: Data(payload))
    }

    /// Whether `sealed` opens with `key` (its content is not decoded).
    static func opens(_ sealed: SealedChangeSet, key: SyncKey, space: String) throws -> Bool {
        try opens(sealed, keys: SpaceKeys(key: key), space: space)
    }

    static func opens(_ sealed: SealedChangeSet, keys: SpaceKeys, space: String) throws -> Bool {
        try keys.open(
            Array(sealed.payload),
            associatedData: associatedData(
                space: space, device: sealed.device, sequence: sealed.deviceSequence)) != nil
    }

    /// - Throws: ``SyncError/cannotOpen(device:deviceSequence:)`` for a wrong key or altered
    ///   bytes, ``SyncError/malformedChangeSet(device:deviceSequence:reason:)``.
    static func open(_ sealed: SealedChangeSet, key: SyncKey, space: String) throws -> ChangeSet {
        try open(sealed, keys: SpaceKeys(key: key), space: space)
    }

    static func open(_ sealed: SealedChangeSet, keys: SpaceKeys, space: String) throws
        -> ChangeSet
    {
        guard
            let plain = try keys.open(
                Array(sealed.payload),
                associatedData: associatedData(
                    space: space, device: sealed.device, sequence: sealed.deviceSequence))
        else {
            throw SyncError.cannotOpen(device: sealed.device, deviceSequence: sealed.deviceSequence)
        }
        do {
            return try ChangeSetCoding.decode(plain)
        } catch let error as ChangeSetCoding.Malformed {
            throw SyncError.malformedChangeSet(
                device: sealed.device, deviceSequence: sealed.deviceSequence, reason: error.reason)
        }
    }
}
