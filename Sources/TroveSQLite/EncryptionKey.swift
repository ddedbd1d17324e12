import CTroveCipher
import Foundation

/// An unlocked encrypted database file: its data key, held by the VFS for the connections that
/// open the file with it.
///
/// Create one per file with the passphrase or key, then pass it in
/// ``Connection/Options/encryption``; every connection opened with it (the writer, a background
/// checkpointer's or merger's, readers) reaches the file's pages. The passphrase is used once, to
/// derive the key that unwraps the data key, and zeroed; the data key lives only in the VFS's key
/// slot (and in each open file's copy) and is zeroed when the last connection closes and this
/// value is released.
///
/// ```swift
/// let key = try EncryptionKey(path: "notes.sqlite", encryption: .passphrase("correct horse"))
/// let connection = try Connection(path: "notes.sqlite", options: .init(encryption: key))
/// ```
///
/// `Sendable`: immutable after `init`; the key slot in C is guarded by its own mutex.
public final class EncryptionKey: Hashable, Sendable, CustomStringConvertible {
    /// The file this key unlocks.
    public let path: String
    /// How the data key is wrapped.
    public let info: EncryptionInfo
    // The VFS key slot; removed (and zeroed) in deinit.
    let slot: Int32

    /// Unlocks `path`, or creates an encrypted file there when it is missing or empty.
    ///
    /// - Parameters:
    ///   - path: the database file.
    ///   - encryption: the passphrase, the 32-byte key, or the key store that keeps the key.
    ///   - create: write a new key header when the file is missing or empty; false to require an
    ///     existing encrypted file.
    /// - Throws: ``EncryptionError/wrongKey`` (nothing is changed), a key store's errors
    ///   (``EncryptionError/keyStoreUnavailable(store:reason:)`` and the like; nothing is created),
    ///   ``EncryptionError/notEncrypted(path:)`` for a plaintext file,
    ///   ``EncryptionError/corruptHeader(path:reason:)``, or ``SQLiteError`` when the file can't
    ///   be read or created.
    /// - Complexity: one PBKDF2 derivation for a passphrase (256,000 iterations of HMAC-SHA512;
    ///   0.8-1.2 s on the project's 2-core machine under load). A raw key needs none.
    public init(path: String, encryption: Encryption, create: Bool = true) throws {
        try CipherPrimitives.prepare()
        var probe = try EncryptionHeader.probe(path: path)
        // A key store's key: found, or created and stored only for a new file (before it is made).
        let isNew = if case .empty = probe { true } else { false }
        guard create || !isNew else {
            throw SQLiteError(
                extendedCode: .cantOpen, message: "unable to open database file (path: \(path))")
        }
        let encryption = try encryption.resolvingKeyStore(mayCreate: create && isNew)
        if case .key(let data) = encryption, data.count != 32 {
            throw EncryptionError.invalidKey(reason: "a raw key is 32 bytes, not \(data.count)")
        }
        var created: (EncryptionHeader, SecureBytes)?
        if case .empty = probe {
            guard create else {
                throw SQLiteError(
                    extendedCode: .cantOpen, message: "unable to open database file (path: \(path))"
                )
            }
            let fresh = try EncryptionHeader.create(for: encryption)
            try fresh.0.createFile(at: path)
            created = fresh
            probe = try EncryptionHeader.probe(path: path)
        }
        let header: EncryptionHeader
        let dataKey: SecureBytes
        switch probe {
        case .empty:
            throw SQLiteError(
                extendedCode: .cantOpen, message: "unable to open database file (path: \(path))")
        case .other:
            throw EncryptionError.notEncrypted(path: path)
        case .damaged(let reason):
            throw EncryptionError.corruptHeader(path: path, reason: reason)
        case .encrypted(let found):
            header = found
            if let created, created.0.fileID == found.fileID {
                dataKey = created.1  // ours: skip a second derivation
            } else {
                dataKey = try found.unwrap(with: encryption)
            }
        }
        let slot = header.fileID.withUnsafeBufferPointer { id in
            trove_cipher_slot_add(dataKey.pointer, id.baseAddress)
        }
        guard slot > 0 else {
            throw EncryptionError.unavailable(reason: "too many encrypted files open at once (256)")
        }
        self.path = path
        self.slot = slot
        self.info = EncryptionInfo(header: header)
    }

    deinit { trove_cipher_slot_remove(slot) }

    /// The URI SQLite opens: the path plus the key slot's number (never key bytes).
    func uri(for path: String, vfs: Bool = false) -> String {
        var uri = "file:" + Self.percentEncoded(path) + "?\(TROVE_CIPHER_SLOT_PARAMETER)=\(slot)"
        if vfs { uri += "&vfs=\(TROVE_CIPHER_VFS_NAME)" }
        return uri
    }

    static func percentEncoded(_ path: String) -> String {
        var encoded = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += String(format: "%%%02X", byte)
            }
        }
        return encoded
    }

    public static func == (lhs: EncryptionKey, rhs: EncryptionKey) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    /// Says which file and how it is wrapped; never any key material.
    public var description: String { "EncryptionKey(\(path), \(info))" }
}

/// What a file's key header says (nothing secret).
public struct EncryptionInfo: Hashable, Sendable, CustomStringConvertible {
    /// How the data key is wrapped.
    public enum KeyDerivation: String, Hashable, Sendable {
        /// By a raw 32-byte key.
        case rawKey = "raw key"
        /// By a key derived from a passphrase with PBKDF2-HMAC-SHA512.
        case pbkdf2SHA512 = "PBKDF2-HMAC-SHA512"
    }

    /// The page cipher.
    public var cipher: String { "AES-256-GCM" }
    /// How the data key is wrapped.
    public var keyDerivation: KeyDerivation
    /// PBKDF2 iterations (0 for a raw key).
    public var iterations: Int
    /// File format version: 2 with a page map (older copies of pages put back are refused), 1
    /// without (files created before 0.2; `Connection.changeDataKey` rewrites one as format 2).
    public var formatVersion: Int
    /// How many times the passphrase or key was changed, plus one.
    public var generation: Int

    init(header: EncryptionHeader) {
        keyDerivation = header.derivation == .raw ? .rawKey : .pbkdf2SHA512
        iterations = Int(header.iterations)
        formatVersion = Int(header.format)
        generation = Int(header.generation)
    }

    /// Where SQLite's page `page` (1-based) starts in an encrypted file with pages of
    /// `pageSize` bytes (diagnostics and tests; the key header comes first, and format 2 keeps two
    /// page-map slots after the first page of every group of
    /// ``pagesPerMapGroup(pageSize:)`` pages).
    ///
    /// ```swift
    /// let offset = EncryptionInfo.fileOffset(ofPage: 2, pageSize: 4096)  // 4096 + 3 * 4096
    /// ```
    public static func fileOffset(ofPage page: Int, pageSize: Int, formatVersion: Int = 2) -> Int {
        let header = Int(TROVE_CIPHER_HEADER_SIZE)
        guard formatVersion >= 2 else { return header + (page - 1) * pageSize }
        let k = pagesPerMapGroup(pageSize: pageSize)
        let group = (page - 1) / k
        let i = (page - 1) % k
        return header + (group * (k + 2) + (i == 0 ? 0 : i + 2)) * pageSize
    }

    /// SQLite pages in an encrypted file of `fileSize` bytes (whole pages only).
    public static func pageCount(fileSize: Int, pageSize: Int, formatVersion: Int = 2) -> Int {
        let physical = max(0, fileSize - Int(TROVE_CIPHER_HEADER_SIZE)) / pageSize
        guard formatVersion >= 2 else { return physical }
        let k = pagesPerMapGroup(pageSize: pageSize)
        let groups = physical / (k + 2)
        let r = physical % (k + 2)
        return groups * k + (r == 0 ? 0 : r <= 3 ? 1 : r - 2)
    }

    /// Pages whose versions one page-map page records (format 2): 251 for 4 KB pages.
    public static func pagesPerMapGroup(pageSize: Int) -> Int { (pageSize - 80) / 16 }

    /// What the start of the file at `path` says: nil for a plaintext or missing file.
    ///
    /// - Throws: ``EncryptionError/corruptHeader(path:reason:)`` when the key header is damaged.
    public static func of(path: String) throws -> EncryptionInfo? {
        switch try EncryptionHeader.probe(path: path) {
        case .empty, .other: return nil
        case .damaged(let reason): throw EncryptionError.corruptHeader(path: path, reason: reason)
        case .encrypted(let header): return EncryptionInfo(header: header)
        }
    }

    public var description: String {
        keyDerivation == .rawKey
            ? "\(cipher), raw key"
            : "\(cipher), key from passphrase by \(keyDerivation.rawValue) (\(iterations) iterations)"
    }
}

/// Process-wide counters of the encrypting VFS since it was registered (diagnostics, benchmarks).
public struct EncryptionStatistics: Hashable, Sendable {
    /// Pages encrypted (database, WAL and journal writes).
    public var pagesSealed: UInt64
    /// Pages decrypted and verified (reads that missed SQLite's page cache).
    public var pagesOpened: UInt64
    /// Pages that failed authentication.
    public var authenticationFailures: UInt64
    /// Temporary files kept in memory instead of on disk.
    public var memoryFilesOpened: UInt64
    /// Decrypt-ahead (``EncryptionReadAhead``): pages its workers decrypted and verified.
    public var readAheadPagesOpened: UInt64 = 0
    /// Reads served with a worker's plaintext (their ciphertext was byte-identical); included in
    /// ``pagesOpened``.
    public var readAheadHits: UInt64 = 0
    /// Reads whose ciphertext on disk differed from what a worker had decrypted (the page changed
    /// since): decrypted by the reader instead.
    public var readAheadMisses: UInt64 = 0
    /// Worker threads started.
    public var readAheadWorkersStarted: UInt64 = 0
    /// Worker threads alive now (at most 8 in a process).
    public var readAheadWorkersLive: UInt64 = 0
    /// Format-2 files: page-map pages written, and page reads refused as older copies.
    public var mapPagesWritten: UInt64 = 0
    public var stalePagesRefused: UInt64 = 0

    /// The current counters.
    public static var current: EncryptionStatistics {
        var raw = trove_cipher_statistics()
        trove_cipher_get_statistics(&raw)
        return EncryptionStatistics(
            pagesSealed: raw.pages_sealed, pagesOpened: raw.pages_opened,
            authenticationFailures: raw.authentication_failures,
            memoryFilesOpened: raw.memory_files_opened,
            readAheadPagesOpened: raw.readahead_pages_opened, readAheadHits: raw.readahead_hits,
            readAheadMisses: raw.readahead_misses,
            readAheadWorkersStarted: raw.readahead_workers_started,
            readAheadWorkersLive: raw.readahead_workers_live,
            mapPagesWritten: raw.map_pages_written,
            stalePagesRefused: raw.stale_pages_refused)
    }
}
