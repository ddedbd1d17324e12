import Foundation
import TroveSQLite

/// The space's key check: a constant sealed with the space's key, stored with the space on the
/// server by the first device that syncs it. A device opens it before it pushes or pulls: a
/// device whose key does not open it is refused before it sends anything, so a mistyped
/// passphrase can never leave change sets that no other device can read.
///
/// The server sees 44 bytes of ciphertext (nonce, sealed constant, tag); without the key they
/// tell nothing of it, as a change set does not.
enum KeyCheck {
    /// What is sealed: a constant, so a device with the key recognises it.
    static let plaintext = Array("trove-sync key check".utf8)

    /// Bound as associated data: a key check moved from another space does not open.
    static func associatedData(space: String) -> [UInt8] {
        Array("trove-sync/1\u{0}\(space)\u{0}key-check".utf8)
    }

    /// A new key check for `space` (a random nonce each time).
    static func seal(key: SyncKey, space: String) throws -> Data {
        Data(
            try AuthenticatedEncryption.seal(
                plaintext, key: key.bytes, associatedData: associatedData(space: space)))
    }

    /// Whether `check` was sealed with `key` for `space`.
    static func opens(_ check: Data, key: SyncKey, space: String) throws -> Bool {
        try AuthenticatedEncryption.open(
            Array(check), key: key.bytes, associatedData: associatedData(space: space))
            == plaintext
    }
}
