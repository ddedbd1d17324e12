import CTroveCipher
import Foundation

/// The key header at the start of an encrypted file: what unlocks the data key.
///
/// The first 4,096 bytes of the file (hidden from SQLite by the VFS) hold two copies of one
/// 512-byte slot, at offsets 0 and 512, the rest zero. A change of passphrase writes the copy at
/// 512 with the next generation, syncs, then the copy at 0: a crash between the two leaves one
/// intact copy of either the new or the old generation, and opening uses the newest intact one
/// (never an older generation, so an old passphrase stops working once a change has landed).
///
/// ```
/// offset size  field (big-endian integers)
///      0    8  magic "TroveEnc"
///      8    4  format version: 2 (since 0.2: pages laid out with a page map, see the VFS's
///                pagemap.c), or 1 (pages one after another, no map; still opened and written)
///     12    4  generation (1 when created, +1 per change of passphrase)
///     16   16  file identity: random, in every page's authenticated data
///     32    1  key derivation: 0 raw key, 1 PBKDF2-HMAC-SHA512
///     33    3  zero
///     36    4  PBKDF2 iterations (0 for a raw key)
///     40   16  PBKDF2 salt (random; zero for a raw key)
///     56    4  reserved bytes per page (32: nonce 12, tag 16, zero 4)
///     60    4  zero
///     64   12  nonce of the wrapped data key
///     76   32  data key, sealed with AES-256-GCM under the key-encryption key; AAD = bytes 0..<64
///    108   16  its tag
///    124    8  FNV-1a 64 of bytes 0..<124 (tells a torn copy from a wrong key)
///
/// Format 2 also keeps the page map's two 64-byte root records at offsets 1024 and 1536, which
/// the VFS writes (this type never touches them).
/// ```
struct EncryptionHeader: Hashable {
    enum KeyDerivation: UInt8 {
        case raw = 0
        case pbkdf2SHA512 = 1
    }

    static let magic: [UInt8] = Array("TroveEnc".utf8)
    /// The format of new files.
    static let version: UInt32 = 2
    static let supportedVersions: Set<UInt32> = [1, 2]
    static let slotSize = 512
    static let slotOffsets = [0, 512]
    static let size = Int(TROVE_CIPHER_HEADER_SIZE)

    /// This file's format version (kept by a change of passphrase).
    var format: UInt32 = Self.version
    var generation: UInt32
    var fileID: [UInt8]
    var derivation: KeyDerivation
    var iterations: UInt32
    var salt: [UInt8]
    var wrapNonce: [UInt8]
    var wrappedKey: [UInt8]
    var wrapTag: [UInt8]

    // MARK: Bytes

    /// The authenticated part of a slot (bytes 0..<64).
    var authenticatedBytes: [UInt8] {
        var bytes = Self.magic
        bytes += Self.bigEndian(format) + Self.bigEndian(generation) + fileID
        bytes += [derivation.rawValue, 0, 0, 0] + Self.bigEndian(iterations) + salt
        bytes += Self.bigEndian(UInt32(TROVE_CIPHER_RESERVE)) + [0, 0, 0, 0]
        return bytes
    }

    /// One 512-byte slot.
    var slot: [UInt8] {
        var bytes = authenticatedBytes + wrapNonce + wrappedKey + wrapTag
        bytes += Self.bigEndian64(Self.fnv1a(bytes))
        bytes += [UInt8](repeating: 0, count: Self.slotSize - bytes.count)
        return bytes
    }

    /// Parses one slot; nil when it is not an intact slot of a known version.
    static func parse(slot bytes: ArraySlice<UInt8>) -> EncryptionHeader? {
        let b = Array(bytes)
        guard b.count >= 132, Array(b[0..<8]) == magic,
            readBigEndian64(b, 124) == fnv1a(b[0..<124]),
            supportedVersions.contains(readBigEndian(b, 8)),
            let derivation = KeyDerivation(rawValue: b[32]),
            readBigEndian(b, 56) == UInt32(TROVE_CIPHER_RESERVE)
        else { return nil }
        return EncryptionHeader(
            format: readBigEndian(b, 8), generation: readBigEndian(b, 12),
            fileID: Array(b[16..<32]),
            derivation: derivation,
            iterations: readBigEndian(b, 36), salt: Array(b[40..<56]), wrapNonce: Array(b[64..<76]),
            wrappedKey: Array(b[76..<108]), wrapTag: Array(b[108..<124]))
    }

    /// What the start of a file says about encryption.
    enum Probe {
        /// Missing or empty file.
        case empty
        /// A Trove encrypted file with its newest intact header slot.
        case encrypted(EncryptionHeader)
        /// Starts with Trove's magic but neither copy is intact.
        case damaged(String)
        /// Anything else (a plaintext SQLite database, or not a database).
        case other
    }

    /// Reads and classifies the start of the file at `path`.
    static func probe(path: String) throws -> Probe {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            if FileManager.default.fileExists(atPath: path) {
                throw SQLiteError(
                    extendedCode: .cantOpen, message: "unable to open database file (path: \(path))"
                )
            }
            return .empty
        }
        defer { try? handle.close() }
        let bytes = [UInt8](try handle.read(upToCount: 2 * slotSize) ?? Data())
        if bytes.isEmpty { return .empty }
        guard bytes.count >= 8, Array(bytes[0..<8]) == magic else { return .other }
        let intact = slotOffsets.compactMap { offset -> EncryptionHeader? in
            guard bytes.count >= offset + slotSize else { return nil }
            return parse(slot: bytes[offset..<(offset + slotSize)])
        }
        guard let newest = intact.max(by: { $0.generation < $1.generation }) else {
            return .damaged("no intact copy of the key header")
        }
        return .encrypted(newest)
    }

    // MARK: Keys

    /// A new header for a new file: random data key, file identity and salt.
    /// - Returns: the header and the data key it wraps.
    static func create(for encryption: Encryption) throws -> (EncryptionHeader, SecureBytes) {
        let dataKey = SecureBytes(copying: try CipherPrimitives.random(32))
        var header = EncryptionHeader(
            generation: 1, fileID: try CipherPrimitives.random(16), derivation: .raw, iterations: 0,
            salt: [UInt8](repeating: 0, count: 16), wrapNonce: [], wrappedKey: [], wrapTag: [])
        try header.wrap(dataKey, with: encryption)
        return (header, dataKey)
    }

    /// Replaces the key derivation and the wrapped data key (new salt, new nonce).
    mutating func wrap(_ dataKey: SecureBytes, with encryption: Encryption) throws {
        switch encryption {
        case .passphrase:
            derivation = .pbkdf2SHA512
            iterations = Encryption.passphraseIterations
            salt = try CipherPrimitives.random(16)
        case .key:
            derivation = .raw
            iterations = 0
            salt = [UInt8](repeating: 0, count: 16)
        case .keyStore:
            preconditionFailure(
                "a key store is read (Encryption.resolvingKeyStore) before the header is used")
        }
        let kek = try keyEncryptionKey(for: encryption)
        wrapNonce = try CipherPrimitives.random(12)
        var sealed = [UInt8](repeating: 0, count: 32)
        var tag = [UInt8](repeating: 0, count: 16)
        let ok = CipherPrimitives.seal(
            key: kek.pointer, nonce: wrapNonce, aad: authenticatedBytes, input: dataKey.pointer,
            count: 32,
            output: &sealed, tag: &tag)
        guard ok else { throw EncryptionError.unavailable(reason: "AES-GCM failed") }
        wrappedKey = sealed
        wrapTag = tag
    }

    /// Unwraps the data key.
    /// - Throws: ``EncryptionError/wrongKey`` when the passphrase or key does not verify.
    func unwrap(with encryption: Encryption) throws -> SecureBytes {
        let kek = try keyEncryptionKey(for: encryption)
        let dataKey = SecureBytes(count: 32)
        let ok = CipherPrimitives.open(
            key: kek.pointer, nonce: wrapNonce, aad: authenticatedBytes, input: wrappedKey,
            count: 32,
            output: dataKey.pointer, tag: wrapTag)
        guard ok else { throw EncryptionError.wrongKey }
        return dataKey
    }

    /// The key that wraps the data key: the raw key, or PBKDF2 of the passphrase.
    private func keyEncryptionKey(for encryption: Encryption) throws -> SecureBytes {
        switch encryption {
        case .key(let data):
            guard data.count == 32 else {
                throw EncryptionError.invalidKey(reason: "a raw key is 32 bytes, not \(data.count)")
            }
            // A passphrase file opened with a raw key (or the reverse) fails as a wrong key.
            guard derivation == .raw else { throw EncryptionError.wrongKey }
            return SecureBytes(copying: data)
        case .passphrase(let passphrase):
            guard !passphrase.isEmpty else {
                throw EncryptionError.invalidKey(reason: "the passphrase is empty")
            }
            guard derivation == .pbkdf2SHA512 else { throw EncryptionError.wrongKey }
            guard iterations >= 1 else {
                throw EncryptionError.corruptHeader(path: "", reason: "no iterations")
            }
            let password = SecureBytes(copying: passphrase.utf8)
            return try CipherPrimitives.pbkdf2SHA512(
                password: password, salt: salt, iterations: iterations)
        case .keyStore:
            preconditionFailure(
                "a key store is read (Encryption.resolvingKeyStore) before the header is used")
        }
    }

    // MARK: Files

    /// Creates `path` holding only this header; fails when the file exists and is not empty.
    func createFile(at path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT, 0o644)
        guard fd >= 0 else {
            throw SQLiteError(
                extendedCode: .cantOpen, message: "unable to create database file (path: \(path))")
        }
        defer { close(fd) }
        // An exclusive advisory lock while checking and writing, so two processes creating the same
        // file don't both write a header (the second waits, then finds the first one's).
        flock(fd, LOCK_EX)
        defer { flock(fd, LOCK_UN) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw Self.ioError("stat", path) }
        if status.st_size > 0 { return }  // another process got there first: use theirs
        var bytes = slot + slot
        bytes += [UInt8](repeating: 0, count: Self.size - bytes.count)
        guard pwrite(fd, bytes, bytes.count, 0) == bytes.count, fsync(fd) == 0 else {
            throw Self.ioError("write", path)
        }
        Self.syncDirectory(of: path)
    }

    /// Rewrites both copies (copy at 512 first, synced, then copy at 0, synced).
    func rewrite(at path: String) throws {
        let fd = open(path, O_RDWR)
        guard fd >= 0 else { throw Self.ioError("open", path) }
        defer { close(fd) }
        let bytes = slot
        for offset in Self.slotOffsets.reversed() {
            guard pwrite(fd, bytes, bytes.count, off_t(offset)) == bytes.count, fsync(fd) == 0
            else {
                throw Self.ioError("write", path)
            }
        }
    }

    static func syncDirectory(of path: String) {
        let directory = (path as NSString).deletingLastPathComponent
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
    }

    private static func ioError(_ operation: String, _ path: String) -> SQLiteError {
        SQLiteError(
            extendedCode: .ioError,
            message: "\(operation) failed for the key header (path: \(path), errno \(errno))")
    }

    // MARK: Encoding helpers

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [
            UInt8(value >> 24), UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff),
            UInt8(value & 0xff),
        ]
    }

    static func bigEndian64(_ value: UInt64) -> [UInt8] {
        bigEndian(UInt32(value >> 32)) + bigEndian(UInt32(value & 0xffff_ffff))
    }

    static func readBigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }

    static func readBigEndian64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        UInt64(readBigEndian(bytes, offset)) << 32 | UInt64(readBigEndian(bytes, offset + 4))
    }

    static func fnv1a<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
