import Foundation
import TroveSQLite

/// Seals and opens change sets: AES-256-GCM with the space key, the space, device and sequence
/// number bound as associated data, so a payload moved to another space, device or position
/// does not open either.
enum Sealing {
    static func associatedData(space: String, device: String, sequence: Int64) -> [UInt8] {
        Array("trove-sync/1\u{0}\(space)\u{0}\(device)\u{0}\(sequence)".utf8)
    }

    static func seal(_ set: ChangeSet, key: SyncKey, space: String, device: String, sequence: Int64)
        throws
        -> SealedChangeSet
    {
        let payload = try AuthenticatedEncryption.seal(
            ChangeSetCoding.encode(set), key: key.bytes,
            associatedData: associatedData(space: space, device: device, sequence: sequence))
        return SealedChangeSet(device: device, deviceSequence: sequence, payload: Data(payload))
    }

    /// Whether `sealed` opens with `key` (its content is not decoded).
    static func opens(_ sealed: SealedChangeSet, key: SyncKey, space: String) throws -> Bool {
        try AuthenticatedEncryption.open(
            Array(sealed.payload), key: key.bytes,
            associatedData: associatedData(
                space: space, device: sealed.device, sequence: sealed.deviceSequence)) != nil
    }

    /// - Throws: ``SyncError/cannotOpen(device:deviceSequence:)`` for a wrong key or altered
    ///   bytes, ``SyncError/malformedChangeSet(device:deviceSequence:reason:)``.
    static func open(_ sealed: SealedChangeSet, key: SyncKey, space: String) throws -> ChangeSet {
        guard
            let plain = try AuthenticatedEncryption.open(
                Array(sealed.payload), key: key.bytes,
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
