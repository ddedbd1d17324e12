import Foundation

/// AES-256-GCM and PBKDF2-HMAC-SHA512 for the package's other modules (sync seals change sets
/// with them), through the same backends as the encrypting VFS: OpenSSL's libcrypto on Linux,
/// CryptoKit and CommonCrypto on Apple platforms. `package`: not part of Trove's public API.
package enum AuthenticatedEncryption {
    /// Bytes of the random nonce that starts every sealed box.
    package static let nonceCount = 12
    /// Bytes of the authentication tag that ends every sealed box.
    package static let tagCount = 16

    /// Seals `plaintext` with a 32-byte `key`: `nonce (12) || ciphertext || tag (16)`, with a
    /// fresh random nonce, `associatedData` authenticated but not stored.
    ///
    /// - Throws: ``EncryptionError/unavailable(reason:)`` when no AES-GCM backend is present or
    ///   the random generator fails.
    package static func seal(_ plaintext: [UInt8], key: [UInt8], associatedData: [UInt8]) throws
        -> [UInt8]
    {
        precondition(key.count == 32, "AES-256 takes a 32-byte key")
        try CipherPrimitives.prepare()
        let nonce = try CipherPrimitives.random(nonceCount)
        var output = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: tagCount)
        let sealed = key.withUnsafeBufferPointer { key in
            plaintext.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { output in
                    tag.withUnsafeMutableBufferPointer { tag in
                        CipherPrimitives.seal(
                            key: key.baseAddress!, nonce: nonce, aad: associatedData,
                            input: input.baseAddress ?? UnsafePointer(tag.baseAddress!),
                            count: input.count,
                            output: output.baseAddress ?? tag.baseAddress!, tag: tag.baseAddress!)
                    }
                }
            }
        }
        guard sealed else { throw EncryptionError.unavailable(reason: "AES-GCM sealing failed") }
        return nonce + output + tag
    }

    /// Opens a box made by ``seal(_:key:associatedData:)``; nil when it is too short or its tag
    /// does not verify (a wrong key, other associated data, or altered bytes).
    package static func open(_ box: [UInt8], key: [UInt8], associatedData: [UInt8]) throws
        -> [UInt8]?
    {
        precondition(key.count == 32, "AES-256 takes a 32-byte key")
        guard box.count >= nonceCount + tagCount else { return nil }
        try CipherPrimitives.prepare()
        let nonce = Array(box[0..<nonceCount])
        let tag = Array(box[(box.count - tagCount)...])
        let body = Array(box[nonceCount..<(box.count - tagCount)])
        var output = [UInt8](repeating: 0, count: body.count)
        var scratch: UInt8 = 0
        let opened = key.withUnsafeBufferPointer { key in
            body.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { output in
                    withUnsafeMutablePointer(to: &scratch) { scratch in
                        CipherPrimitives.open(
                            key: key.baseAddress!, nonce: nonce, aad: associatedData,
                            input: input.baseAddress ?? UnsafePointer(scratch), count: input.count,
                            output: output.baseAddress ?? scratch, tag: tag)
                    }
                }
            }
        }
        return opened ? output : nil
    }

    /// PBKDF2-HMAC-SHA512 of `passphrase` into 32 bytes (the KDF encryption at rest uses).
    package static func deriveKey(passphrase: String, salt: [UInt8], iterations: UInt32) throws
        -> [UInt8]
    {
        try CipherPrimitives.prepare()
        let secret = SecureBytes(copying: Array(passphrase.utf8))
        let key = try CipherPrimitives.pbkdf2SHA512(
            password: secret, salt: salt, iterations: iterations)
        return Array(key.buffer)
    }

    /// `count` bytes from the system's cryptographic random generator.
    package static func randomBytes(_ count: Int) throws -> [UInt8] {
        try CipherPrimitives.prepare()
        return try CipherPrimitives.random(count)
    }
}
