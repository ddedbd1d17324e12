import CTroveCipher
import Foundation

#if canImport(CryptoKit)
    import CryptoKit
#endif

/// X25519 key agreement (RFC 7748) and HKDF-SHA256 (RFC 5869) for the package's other modules
/// (sync gives each device a key pair and wraps space keys for it). The same backend choice as
/// ``AuthenticatedEncryption``: OpenSSL's libcrypto on Linux (inside CTroveCipher), CryptoKit on
/// Apple platforms. `package`: not part of Trove's public API.
package enum KeyAgreement {
    /// Bytes of a private key, a public key and a shared secret.
    package static let keyCount = 32

    /// A new private key: 32 random bytes (X25519 clamps them when it uses them).
    ///
    /// - Throws: ``EncryptionError/unavailable(reason:)`` when the random generator fails.
    package static func newPrivateKey() throws -> [UInt8] {
        try AuthenticatedEncryption.randomBytes(keyCount)
    }

    /// The public key of `privateKey`.
    ///
    /// - Throws: ``EncryptionError/unavailable(reason:)`` when no X25519 backend is present.
    package static func publicKey(of privateKey: [UInt8]) throws -> [UInt8] {
        precondition(privateKey.count == keyCount, "an X25519 private key has 32 bytes")
        #if canImport(CryptoKit)
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
            return Array(key.publicKey.rawRepresentation)
        #else
            var output = [UInt8](repeating: 0, count: keyCount)
            guard trove_cipher_x25519_public_key(privateKey, &output) == 0 else {
                throw EncryptionError.unavailable(reason: "X25519 failed")
            }
            return output
        #endif
    }

    /// The X25519 shared secret of `privateKey` and `peerPublicKey`; nil when the peer key is
    /// not a usable public key (wrong length, or one of small order: an all-zero secret).
    package static func sharedSecret(privateKey: [UInt8], peerPublicKey: [UInt8]) throws
        -> [UInt8]?
    {
        precondition(privateKey.count == keyCount, "an X25519 private key has 32 bytes")
        guard peerPublicKey.count == keyCount else { return nil }
        var secret: [UInt8]
        #if canImport(CryptoKit)
            let key = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: privateKey)
            guard
                let peer = try? Curve25519.KeyAgreement.PublicKey(
                    rawRepresentation: peerPublicKey),
                let shared = try? key.sharedSecretFromKeyAgreement(with: peer)
            else { return nil }
            secret = shared.withUnsafeBytes { Array($0) }
        #else
            secret = [UInt8](repeating: 0, count: keyCount)
            guard trove_cipher_x25519(privateKey, peerPublicKey, &secret) == 0 else { return nil }
        #endif
        // CryptoKit does not refuse a small-order peer key; an all-zero secret is never usable.
        guard secret.contains(where: { $0 != 0 }) else { return nil }
        return secret
    }

    /// HKDF-SHA256 of `secret` into `count` bytes.
    ///
    /// - Throws: ``EncryptionError/unavailable(reason:)`` when no HKDF backend is present.
    package static func hkdfSHA256(secret: [UInt8], salt: [UInt8], info: [UInt8], count: Int)
        throws -> [UInt8]
    {
        precondition((1...(255 * 32)).contains(count), "HKDF-SHA256 gives 1 to 8160 bytes")
        #if canImport(CryptoKit)
            let key = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: secret), salt: salt, info: info,
                outputByteCount: count)
            return key.withUnsafeBytes { Array($0) }
        #else
            var output = [UInt8](repeating: 0, count: count)
            guard
                trove_cipher_hkdf_sha256(
                    secret, secret.count, salt, salt.count, info, info.count, &output, count) == 0
            else { throw EncryptionError.unavailable(reason: "HKDF failed") }
            return output
        #endif
    }
}
