import Foundation
import TroveSQLite

/// A space's 256-bit key. Every change set is sealed with it on the device; the server never
/// sees it.
///
/// Make it from a passphrase every device knows (PBKDF2-HMAC-SHA512, the KDF encryption at rest
/// uses, salted with the space's name), or make a random one on the first device and carry its
/// ``exported`` string to the others.
///
/// ```swift
/// let key = try SyncKey(passphrase: "correct horse battery staple", space: "notes")
/// // or, on the first device:
/// let random = try SyncKey.random()
/// print(random.exported)            // "trove-sync-key-1:..." — show once, import elsewhere
/// let same = try SyncKey(exported: random.exported)
/// ```
public struct SyncKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 key bytes. Never printed (``description`` hides them).
    let bytes: [UInt8]

    /// PBKDF2 iterations (the figure encryption at rest records in new files).
    public static let passphraseIterations: UInt32 = Encryption.passphraseIterations

    /// The prefix of an exported key string (its format version).
    static let exportPrefix = "trove-sync-key-1:"

    /// Derives the key of `space` from a passphrase: every device with the same passphrase and
    /// space name derives the same key.
    ///
    /// - Parameters:
    ///   - passphrase: the space's passphrase (not empty).
    ///   - space: the space's name; it salts the derivation, so two spaces with one passphrase
    ///     still have different keys.
    /// - Throws: ``SyncError/invalidKey(reason:)`` for an empty passphrase.
    /// - Complexity: one PBKDF2 derivation of 256,000 iterations (about a quarter of a second).
    public init(passphrase: String, space: String) throws {
        guard !passphrase.isEmpty else {
            throw SyncError.invalidKey(reason: "the passphrase is empty")
        }
        let salt = Array("trove-sync\u{0}\(space)".utf8)
        bytes = try AuthenticatedEncryption.deriveKey(
            passphrase: passphrase, salt: salt, iterations: Self.passphraseIterations)
    }

    /// Imports a key exported by another device (``exported``).
    ///
    /// - Parameter exported: the string ``exported`` returned, surrounding white space allowed.
    /// - Throws: ``SyncError/invalidKey(reason:)`` when the string is not an exported key.
    public init(exported: String) throws {
        let text = exported.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix(Self.exportPrefix) else {
            throw SyncError.invalidKey(reason: "an exported key starts with \(Self.exportPrefix)")
        }
        let body = String(text.dropFirst(Self.exportPrefix.count))
        guard let data = Data(base64Encoded: body), data.count == 34 else {
            throw SyncError.invalidKey(
                reason: "an exported key holds 32 bytes and a checksum in base64")
        }
        let key = Array(data.prefix(32))
        guard Array(data.suffix(2)) == Self.checksum(key) else {
            throw SyncError.invalidKey(
                reason: "the checksum does not match (a character was changed or lost)")
        }
        bytes = key
    }

    /// A new random key (for a space whose devices import it rather than share a passphrase).
    ///
    /// - Throws: ``SyncError/invalidKey(reason:)`` when the system's random generator fails.
    public static func random() throws -> SyncKey {
        do {
            return SyncKey(bytes: try AuthenticatedEncryption.randomBytes(32))
        } catch {
            throw SyncError.invalidKey(reason: "the random generator failed: \(error)")
        }
    }

    init(bytes: [UInt8]) {
        precondition(bytes.count == 32)
        self.bytes = bytes
    }

    /// The key as a string another device imports with ``init(exported:)``. Whoever holds it
    /// can read the space: show it once, store it like a password.
    public var exported: String {
        Self.exportPrefix + Data(bytes + Self.checksum(bytes)).base64EncodedString()
    }

    /// Hides the key.
    public var description: String { "SyncKey(256 bits)" }

    /// Two bytes that catch a mistyped export (Fletcher-16; not a secret, not a MAC).
    private static func checksum(_ bytes: [UInt8]) -> [UInt8] {
        var a: UInt16 = 0
        var b: UInt16 = 0
        for byte in bytes {
            a = (a + UInt16(byte)) % 255
            b = (b + a) % 255
        }
        return [UInt8(a), UInt8(b)]
    }
}
