import CSQLite
import CTroveCipher
import Foundation

// Encryption at rest: how a connection is prepared for an encrypted file, how the VFS's refusals
// become typed errors, and the whole-file operations (change of passphrase or data key, copies).

extension Connection {
    /// Page cache of an encrypted connection, in KB (SQLite's default is 2 MB). For a plaintext
    /// file the OS cache is a second cache level: a page SQLite evicted comes back with a copy.
    /// For an encrypted file the OS caches ciphertext, so an evicted page is decrypted again
    /// every time it is read: the cold scans of BENCHMARKS.md ("Encryption at rest"), an index
    /// scan with row lookups over a 45 MB table, decrypted 108,000 pages with 2 MB and 11,730
    /// with this. SQLite allocates the cache as pages are read, so small files don't pay for it.
    public static let encryptedCacheKB = 65_536

    /// Settings an encrypted connection needs before SQLite writes its first page.
    func prepareEncryption() throws {
        // Room for the nonce and tag at the end of every page; a no-op on an existing file,
        // whose reserved bytes are fixed (the VFS refuses pages without them).
        var reserve = Int32(TROVE_CIPHER_RESERVE)
        sqlite3_file_control(db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
        // Temporary tables and indexes in memory (the VFS keeps every other temporary file in
        // memory too) and no memory map (the VFS refuses it; this keeps SQLite from asking).
        try execute(
            script:
                "PRAGMA temp_store = MEMORY; PRAGMA mmap_size = 0; PRAGMA cache_size = -\(Self.encryptedCacheKB)"
        )
    }

    /// Turns an open failure on an encrypted file opened without a key into a typed error.
    static func explainEncryption(_ error: Error, location: Location, options: Options) -> Error {
        guard options.encryption == nil, case .file(let path) = location,
            let sqliteError = error as? SQLiteError, sqliteError.code == .notADatabase,
            case .encrypted? = try? EncryptionHeader.probe(path: path)
        else { return error }
        return EncryptionError.keyRequired(path: path)
    }

    /// Whether this connection's main database is encrypted.
    public var isEncrypted: Bool { options.encryption != nil && location != .inMemory }

    // MARK: Whole-file operations

    /// Changes the passphrase or raw key that unlocks an encrypted file: the data key is
    /// rewrapped and the key header rewritten (both copies, each synced), so it is instant and
    /// no page is rewritten. Other connections stay open and unaffected.
    ///
    /// ```swift
    /// try Connection.changePassphrase(path: path, from: .passphrase("old"), to: .passphrase("new"))
    /// ```
    ///
    /// - Throws: ``EncryptionError/wrongKey`` when `old` does not unlock the file (nothing is
    ///   changed); ``SQLiteError`` `busy` when another connection holds the write lock too long.
    /// - Complexity: two PBKDF2 derivations for passphrases.
    public static func changePassphrase(path: String, from old: Encryption, to new: Encryption)
        throws
    {
        let old = try old.resolvingKeyStore(mayCreate: false)
        let new = try new.resolvingKeyStore(mayCreate: true)
        let key = try EncryptionKey(path: path, encryption: old, create: false)
        // The write lock serialises two changes of passphrase; readers and writers of pages are
        // unaffected, since the data key doesn't change.
        let connection = try Connection(
            .file(path), options: .init(create: false, walMode: false, encryption: key))
        try connection.execute(script: "BEGIN IMMEDIATE")
        defer { try? connection.execute(script: "ROLLBACK") }
        guard case .encrypted(var header) = try EncryptionHeader.probe(path: path) else {
            throw EncryptionError.corruptHeader(
                path: path, reason: "the key header changed while open")
        }
        let dataKey = try header.unwrap(with: old)
        header.generation += 1  // before wrapping: the generation is part of the wrap's AAD
        try header.wrap(dataKey, with: new)
        try header.rewrite(at: path)
    }

    /// Re-encrypts a file under a new random data key (and `new` passphrase or key): writes a
    /// complete copy next to it (`VACUUM INTO`), syncs it and renames it over the original, so a
    /// crash leaves either the old file or the new one. Run it with no other connection open
    /// (it fails with `busy` otherwise).
    ///
    /// - Throws: ``EncryptionError/wrongKey``; ``SQLiteError`` `busy` when the file is in use.
    /// - Complexity: O(file size): every page is read and written once.
    public static func changeDataKey(path: String, from old: Encryption, to new: Encryption) throws
    {
        let old = try old.resolvingKeyStore(mayCreate: false)
        let new = try new.resolvingKeyStore(mayCreate: true)
        let key = try EncryptionKey(path: path, encryption: old, create: false)
        let temporary = path + ".rekey-" + UUID().uuidString.prefix(8)
        do {
            let source = try Connection(
                .file(path), options: .init(create: false, busyTimeout: .zero, encryption: key))
            // Alone on the file: an exclusive lock held until the swap, which fails at once when
            // any other connection (in any process) still has the file open.
            try source.execute(
                script:
                    "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT"
            )
            let destination = try EncryptionKey(path: temporary, encryption: new)
            try source.execute("VACUUM INTO ?", [.text(destination.uri(for: temporary, vfs: true))])
            try syncFile(temporary)
            source.close()
            guard rename(temporary, path) == 0 else {
                throw SQLiteError(
                    extendedCode: .ioError, message: "rename failed (path: \(path), errno \(errno))"
                )
            }
            EncryptionHeader.syncDirectory(of: path)
            // The old file's WAL and index were checkpointed and removed on close; a stale pair
            // from a crashed writer would not match the new file identity.
            unlink(path + "-wal")
            unlink(path + "-shm")
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Writes an encrypted copy of a plaintext database at `destination` (which must not
    /// exist). The source is only read.
    ///
    /// - Throws: ``EncryptionError/notEncrypted(path:)`` never; ``EncryptionError/destinationExists(path:)``;
    ///   ``EncryptionError/keyRequired(path:)`` when the source is itself encrypted.
    /// - Complexity: O(file size).
    public static func encryptedCopy(
        of source: String, to destination: String, encryption: Encryption
    ) throws {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw EncryptionError.destinationExists(path: destination)
        }
        let plain = try Connection(
            .file(source), options: .init(readOnly: true, create: false, walMode: false))
        // VACUUM builds the copy with the reserved bytes requested here (the source keeps its own).
        var reserve = Int32(TROVE_CIPHER_RESERVE)
        sqlite3_file_control(plain.db, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
        do {
            let key = try EncryptionKey(path: destination, encryption: encryption)
            try plain.execute("VACUUM INTO ?", [.text(key.uri(for: destination, vfs: true))])
            try syncFile(destination)
        } catch {
            unlink(destination)
            throw error
        }
    }

    /// Writes a plaintext copy of an encrypted database at `destination` (which must not
    /// exist): an ordinary SQLite file (with 32 unused reserved bytes per page) that any SQLite
    /// tool opens. The source is only read.
    ///
    /// - Throws: ``EncryptionError/wrongKey``; ``EncryptionError/destinationExists(path:)``.
    /// - Complexity: O(file size).
    public static func plaintextCopy(
        of source: String, encryption: Encryption, to destination: String
    ) throws {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw EncryptionError.destinationExists(path: destination)
        }
        let key = try EncryptionKey(path: source, encryption: encryption, create: false)
        let encrypted = try Connection(
            .file(source),
            options: .init(readOnly: true, create: false, walMode: false, encryption: key))
        do {
            // No key slot in the destination's URI: the VFS passes it through as plaintext.
            try encrypted.execute(
                "VACUUM INTO ?", [.text("file:" + EncryptionKey.percentEncoded(destination))])
            try syncFile(destination)
        } catch {
            unlink(destination)
            throw error
        }
    }

    static func syncFile(_ path: String) throws {
        let fd = open(path, O_RDWR)
        guard fd >= 0 else {
            throw SQLiteError(extendedCode: .ioError, message: "open failed (path: \(path))")
        }
        defer { closeDescriptor(fd) }
        guard fsync(fd) == 0 else {
            throw SQLiteError(extendedCode: .ioError, message: "fsync failed (path: \(path))")
        }
        EncryptionHeader.syncDirectory(of: path)
    }
}

// Outside the extension, where `close` would mean Connection.close().
private func closeDescriptor(_ fd: Int32) { close(fd) }

extension EncryptionError {
    /// The VFS's last refusal on this thread, when it explains a SQLite error with `code`.
    static func lastVFSFailure(for code: ResultCode) -> EncryptionError? {
        guard code == .ioError || code == .cantOpen else { return nil }
        var file: Int32 = 0
        var page: UInt32 = 0
        let kind = trove_cipher_last_failure(&file, &page)
        guard kind != TROVE_CIPHER_FAILURE_NONE else { return nil }
        trove_cipher_clear_failure()
        let encryptedFile: EncryptedFile =
            switch Int(file) {
            case Int(TROVE_CIPHER_FILE_WAL): .wal
            case Int(TROVE_CIPHER_FILE_JOURNAL): .journal
            default: .database
            }
        switch Int(kind) {
        case Int(TROVE_CIPHER_FAILURE_AUTHENTICATION):
            return .pageAuthenticationFailed(file: encryptedFile, page: page)
        case Int(TROVE_CIPHER_FAILURE_RESERVE): return .reservedBytesMissing
        case Int(TROVE_CIPHER_FAILURE_PAGE_SIZE): return .pageSizeChangeRefused
        case Int(TROVE_CIPHER_FAILURE_UNALIGNED): return .unalignedWrite(file: encryptedFile)
        case Int(TROVE_CIPHER_FAILURE_STALE_PAGE): return .stalePage(page: page)
        case Int(TROVE_CIPHER_FAILURE_PAGE_MAP): return .pageMapDamaged
        default: return .corruptHeader(path: "", reason: "the key header does not match the key")
        }
    }
}
