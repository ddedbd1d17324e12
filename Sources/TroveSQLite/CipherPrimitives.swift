import CTroveCipher
import Foundation

#if canImport(CryptoKit)
    import CommonCrypto
    import CryptoKit
    import Security
#endif

/// AES-256-GCM, PBKDF2-HMAC-SHA512 and random bytes, shared by the key header (Swift) and the
/// VFS (C). Linux: OpenSSL's libcrypto, inside CTroveCipher. Apple platforms: CryptoKit and
/// CommonCrypto, installed into the C side as function pointers on first use.
enum CipherPrimitives {
    /// Makes the primitives available and registers the VFS. Idempotent.
    static func prepare() throws {
        _ = installed
        _ = Connection.configureSQLite  // before the VFS registration initialises SQLite
        guard trove_cipher_has_backend() != 0 else {
            throw EncryptionError.unavailable(reason: "no AES-GCM implementation")
        }
        let rc = trove_cipher_register()
        guard rc == 0 else {
            throw EncryptionError.unavailable(
                reason: "the VFS could not be registered (SQLite code \(rc))")
        }
    }

    // Runs once: Swift's lazy globals are initialised thread-safely.
    private static let installed: Bool = {
        #if canImport(CryptoKit)
            var backend = trove_cipher_backend(
                seal: appleSeal, open: appleOpen, random: appleRandom, pbkdf2_sha512: applePBKDF2)
            trove_cipher_set_backend(&backend)
        #endif
        return true
    }()

    /// Seals `input` into `output` (same length) and `tag` (16 bytes).
    static func seal(
        key: UnsafePointer<UInt8>, nonce: [UInt8], aad: [UInt8], input: UnsafePointer<UInt8>,
        count: Int,
        output: UnsafeMutablePointer<UInt8>, tag: UnsafeMutablePointer<UInt8>
    ) -> Bool {
        trove_cipher_seal(key, nonce, aad, aad.count, input, count, output, tag) == 0
    }

    /// Opens `input` into `output`; false when the tag does not verify.
    static func open(
        key: UnsafePointer<UInt8>, nonce: [UInt8], aad: [UInt8], input: UnsafePointer<UInt8>,
        count: Int,
        output: UnsafeMutablePointer<UInt8>, tag: [UInt8]
    ) -> Bool {
        trove_cipher_open(key, nonce, aad, aad.count, input, count, output, tag) == 0
    }

    /// `count` bytes from the system's cryptographic random generator.
    static func random(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        guard trove_cipher_random(&bytes, count) == 0 else {
            throw EncryptionError.unavailable(reason: "the random generator failed")
        }
        return bytes
    }

    /// PBKDF2-HMAC-SHA512 of `password` into a 32-byte key.
    static func pbkdf2SHA512(password: SecureBytes, salt: [UInt8], iterations: UInt32) throws
        -> SecureBytes
    {
        let key = SecureBytes(count: 32)
        guard
            trove_cipher_pbkdf2_sha512(
                password.pointer, password.count, salt, salt.count, iterations, key.pointer, 32)
                == 0
        else { throw EncryptionError.unavailable(reason: "PBKDF2 failed") }
        return key
    }
}

#if canImport(CryptoKit)
    // CryptoKit thunks for the C VFS. Each copies through Data (CryptoKit's API), which the VFS pays
    // per page; the key is wrapped in a SymmetricKey for the duration of one call.
    private func appleSeal(
        key: UnsafePointer<UInt8>?, nonce: UnsafePointer<UInt8>?, aad: UnsafePointer<UInt8>?,
        aadLength: Int,
        input: UnsafePointer<UInt8>?, length: Int, output: UnsafeMutablePointer<UInt8>?,
        tag: UnsafeMutablePointer<UInt8>?
    ) -> Int32 {
        guard let key, let nonce, let output, let tag else { return -1 }
        do {
            let symmetric = SymmetricKey(data: UnsafeRawBufferPointer(start: key, count: 32))
            let box = try AES.GCM.seal(
                UnsafeRawBufferPointer(start: input, count: length), using: symmetric,
                nonce: AES.GCM.Nonce(data: UnsafeRawBufferPointer(start: nonce, count: 12)),
                authenticating: UnsafeRawBufferPointer(start: aad, count: aadLength))
            box.ciphertext.copyBytes(to: output, count: length)
            box.tag.copyBytes(to: tag, count: 16)
            return 0
        } catch {
            return -1
        }
    }

    private func appleOpen(
        key: UnsafePointer<UInt8>?, nonce: UnsafePointer<UInt8>?, aad: UnsafePointer<UInt8>?,
        aadLength: Int,
        input: UnsafePointer<UInt8>?, length: Int, output: UnsafeMutablePointer<UInt8>?,
        tag: UnsafePointer<UInt8>?
    ) -> Int32 {
        guard let key, let nonce, let output, let tag else { return -1 }
        do {
            let symmetric = SymmetricKey(data: UnsafeRawBufferPointer(start: key, count: 32))
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: UnsafeRawBufferPointer(start: nonce, count: 12)),
                ciphertext: Data(UnsafeRawBufferPointer(start: input, count: length)),
                tag: Data(UnsafeRawBufferPointer(start: tag, count: 16)))
            let plain = try AES.GCM.open(
                box, using: symmetric,
                authenticating: UnsafeRawBufferPointer(start: aad, count: aadLength))
            plain.copyBytes(to: output, count: length)
            return 0
        } catch {
            return -1
        }
    }

    private func appleRandom(output: UnsafeMutablePointer<UInt8>?, length: Int) -> Int32 {
        guard let output else { return -1 }
        return SecRandomCopyBytes(kSecRandomDefault, length, output) == errSecSuccess ? 0 : -1
    }

    private func applePBKDF2(
        password: UnsafePointer<UInt8>?, passwordLength: Int, salt: UnsafePointer<UInt8>?,
        saltLength: Int,
        iterations: UInt32, output: UnsafeMutablePointer<UInt8>?, outputLength: Int
    ) -> Int32 {
        guard let password, let salt, let output else { return -1 }
        let rc = password.withMemoryRebound(to: CChar.self, capacity: passwordLength) { chars in
            CCKeyDerivationPBKDF(
                CCPBKDFAlgorithm(kCCPBKDF2), chars, passwordLength, salt, saltLength,
                CCPseudoRandomAlgorithm(kCCPRFHmacAlgSHA512), iterations, output, outputLength)
        }
        return rc == Int32(kCCSuccess) ? 0 : -1
    }
#endif
