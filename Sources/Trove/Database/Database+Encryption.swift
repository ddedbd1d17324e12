import Foundation
import TroveSQLite

// Encryption at rest for Trove files. The cipher itself (a VFS sealing every page with
// AES-256-GCM) lives in TroveSQLite and CTroveCipher; see ARCHITECTURE.md, "Encryption at rest".

extension Database {
    /// Page cache of an encrypted database, in KB (plaintext: 16 MB). A page that misses the cache
    /// is read and decrypted again, so encrypted files keep more pages:
    /// text and hybrid queries re-read the same index pages (BENCHMARKS.md, "Encryption at rest").
    static let encryptedCacheKB = Connection.encryptedCacheKB

    /// Opens (or creates) an encrypted database file.
    ///
    /// Every page of the file, its WAL and its journal is encrypted and authenticated; the
    /// background checkpointer and text-index merger open their own connections with the same
    /// key. A plaintext file is never silently encrypted: use
    /// ``encryptedCopy(of:to:encryption:)``.
    ///
    /// ```swift
    /// let database = try Database(path: "notes.trove", encryption: .passphrase("correct horse"))
    /// let notes = try await SearchCollection("notes", in: database, dimension: 384)
    /// ```
    ///
    /// - Parameters:
    ///   - path: the file; created (encrypted) when missing unless `readOnly`.
    ///   - encryption: a passphrase, a raw 32-byte key, or a key store that keeps a key Trove
    ///     creates on first open (`.keyStore(_:service:account:)`).
    ///   - readOnly: open without write access.
    ///   - busyTimeout: how long to wait when another process holds the write lock.
    ///   - clock: the time document expiry is measured against (a ``ManualClock`` in tests).
    /// - Throws: `EncryptionError.wrongKey` when the passphrase or key is wrong (nothing is
    ///   changed); `EncryptionError.notEncrypted(path:)` for a plaintext file; for a key store,
    ///   `keyStoreUnavailable`, `keyStoreLocked`, `notATroveKey` or `keyNotInKeyStore` (nothing
    ///   is created); `SQLiteError` with `encryptionFailure` set when a page fails authentication.
    /// - Complexity: one PBKDF2-HMAC-SHA512 derivation (256,000 iterations) for a passphrase.
    public init(
        path: String, encryption: Encryption, readOnly: Bool = false,
        busyTimeout: Duration = .seconds(5),
        clock: any ExpiryClock = SystemClock()
    ) throws {
        let key = try EncryptionKey(path: path, encryption: encryption, create: !readOnly)
        try self.init(
            .file(path),
            options: .init(readOnly: readOnly, busyTimeout: busyTimeout, encryption: key),
            clock: clock)
    }

    /// How the file is encrypted, or nil when it is plaintext or in memory.
    public nonisolated var encryption: EncryptionInfo? {
        guard let path else { return nil }
        return try? EncryptionInfo.of(path: path)
    }

    /// Changes the passphrase (or raw key) of an encrypted file at once: the data key is
    /// rewrapped, no page is rewritten. Open databases keep working.
    ///
    /// - Throws: `EncryptionError.wrongKey` when `old` is wrong (nothing is changed).
    public static func changePassphrase(path: String, from old: Encryption, to new: Encryption)
        throws
    {
        try Connection.changePassphrase(path: path, from: old, to: new)
    }

    /// Re-encrypts the whole file under a new random data key and `new` passphrase or key: a
    /// complete copy is written beside it and renamed over it atomically. Close every
    /// `Database` on the file first (it fails with `busy` otherwise).
    ///
    /// - Complexity: O(file size).
    public static func changeDataKey(path: String, from old: Encryption, to new: Encryption) throws
    {
        try Connection.changeDataKey(path: path, from: old, to: new)
    }

    /// Writes an encrypted copy of the plaintext database at `source` to `destination`.
    public static func encryptedCopy(
        of source: String, to destination: String, encryption: Encryption
    ) throws {
        try Connection.encryptedCopy(of: source, to: destination, encryption: encryption)
    }

    /// Writes a plaintext copy of the encrypted database at `source` to `destination`.
    public static func plaintextCopy(
        of source: String, encryption: Encryption, to destination: String
    ) throws {
        try Connection.plaintextCopy(of: source, encryption: encryption, to: destination)
    }
}
