import Foundation

/// How an encrypted database file is unlocked.
///
/// Every page of the file, of its WAL and of its rollback journal is sealed with AES-256-GCM under
/// a random 256-bit data key. The data key is stored in the file's key header, wrapped by a key
/// derived from the passphrase (PBKDF2-HMAC-SHA512 with a random salt; the iteration count is
/// recorded in the file), by a raw key the app keeps itself, or by a random key Trove creates
/// and keeps in a ``KeyStore`` (the Keychain, the Secret Service).
///
/// ```swift
/// let database = try Database(path: "notes.trove", encryption: .passphrase("correct horse"))
/// ```
public enum Encryption: Sendable {
    /// A passphrase; the key that wraps the data key is derived from it with PBKDF2-HMAC-SHA512.
    case passphrase(String)
    /// A raw 32-byte key that wraps the data key directly (no key derivation).
    case key(Data)
    /// A raw key kept in `store` under `service` and `account`: a random 256-bit key is created
    /// and stored when a new file is created, and read from the store when the file is opened
    /// again. A missing, locked or unusable store, or an item there that is not a Trove key, is
    /// an ``EncryptionError`` and nothing is created.
    ///
    /// ```swift
    /// let database = try Database(
    ///     path: path, encryption: .keyStore(KeychainKeyStore(), service: "com.example.notes", account: "notes.trove"))
    /// ```
    case keyStore(any KeyStore, service: String, account: String)

    /// PBKDF2 iterations recorded in files this build creates (OWASP's 2023 figure for
    /// PBKDF2-HMAC-SHA512 is 210,000; SQLCipher 4 uses 256,000).
    public static let passphraseIterations: UInt32 = 256_000
}

/// The file an encryption failure concerns.
public enum EncryptedFile: String, Hashable, Sendable {
    /// The database file itself.
    case database
    /// Its write-ahead log (`-wal`).
    case wal
    /// Its rollback journal (`-journal`).
    case journal
}

/// An error from encryption at rest. No case ever carries key material.
///
/// ```swift
/// do {
///     _ = try Database(path: path, encryption: .passphrase(typed))
/// } catch EncryptionError.wrongKey {
///     print("wrong passphrase")
/// }
/// ```
public enum EncryptionError: Error, Hashable, Sendable {
    /// The passphrase or key does not unlock this file's data key. Nothing was changed.
    case wrongKey
    /// The file is encrypted and was opened without a key.
    case keyRequired(path: String)
    /// The file is a plaintext database (or not a Trove encrypted file) but a key was given.
    case notEncrypted(path: String)
    /// A raw key is not 32 bytes, or a passphrase is empty.
    case invalidKey(reason: String)
    /// The key header is damaged (both copies fail their checksum) or from an unknown version.
    case corruptHeader(path: String, reason: String)
    /// A page failed authentication: it was changed, moved, cut short or written with another
    /// key. `page` is SQLite's 1-based page number (0 when the WAL frame header was unreadable).
    case pageAuthenticationFailed(file: EncryptedFile, page: UInt32)
    /// Page `page` of the database file authenticates but is not its current version: an older
    /// copy of it was put back (from an earlier copy of the file, a backup or a disk snapshot),
    /// or the file was cut short before it. Format-2 files only (``EncryptionInfo/formatVersion``).
    case stalePage(page: UInt32)
    /// The page map, which records the current version of every page, does not verify: its
    /// records in the key header or its map pages were altered or replaced with older copies.
    case pageMapDamaged
    /// Something tried to write page 1 of an encrypted file without the reserved bytes the
    /// cipher needs (only a bug or a foreign tool writing through Trove's VFS can cause this).
    case reservedBytesMissing
    /// Something tried to change the page size of an encrypted file (`PRAGMA page_size` +
    /// `VACUUM`), which the cipher refuses.
    case pageSizeChangeRefused
    /// A write that is not a whole page at a page boundary.
    case unalignedWrite(file: EncryptedFile)
    /// The destination of a copy already exists.
    case destinationExists(path: String)
    /// The platform has no AES-GCM implementation available to Trove.
    case unavailable(reason: String)
    /// The key store cannot be used: no keyring or keyring service is running, no session bus
    /// to reach it, or the store failed (`reason` says which). Nothing was created.
    case keyStoreUnavailable(store: String, reason: String)
    /// The keyring that holds (or would hold) the key is locked; unlock it (usually by logging
    /// in) and open again. Nothing was created.
    case keyStoreLocked(store: String)
    /// The key store has an item under this service and account that is not a key Trove stored
    /// (another secret under the same names). It was neither used nor replaced.
    case notATroveKey(service: String, account: String)
    /// The database file exists but the key store has no key under this service and account (it
    /// was created with another key, or the item was deleted). Nothing was created.
    case keyNotInKeyStore(service: String, account: String)
}

extension EncryptionError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .wrongKey:
            "Wrong passphrase or key: it does not unlock this database. Nothing was changed."
        case .keyRequired(let path):
            "\(path) is an encrypted Trove database; open it with its passphrase or key."
        case .notEncrypted(let path):
            "\(path) is not an encrypted Trove database; open it without a key, or make an "
                + "encrypted copy with encryptedCopy(of:to:encryption:)."
        case .invalidKey(let reason):
            "Invalid encryption key: \(reason)."
        case .corruptHeader(let path, let reason):
            "The key header of \(path) is damaged (\(reason)); restore the file from a backup."
        case .pageAuthenticationFailed(let file, let page):
            "Page \(page) of the \(file.rawValue == "database" ? "database file" : file.rawValue) "
                + "failed authentication: it was modified, moved or truncated outside Trove. "
                + "Restore the file from a backup."
        case .stalePage(let page):
            "Page \(page) of the database file is an older copy of that page, or missing: the file "
                + "was rolled back or cut short outside Trove. Restore the file from a backup."
        case .pageMapDamaged:
            "The page map of the database file does not verify: it was modified or rolled back "
                + "outside Trove. Restore the file from a backup."
        case .reservedBytesMissing:
            "A page was written without room for its nonce and tag; the write was refused."
        case .pageSizeChangeRefused:
            "The page size of an encrypted database cannot change; the write was refused."
        case .unalignedWrite(let file):
            "A partial-page write to the encrypted \(file.rawValue) was refused."
        case .destinationExists(let path):
            "\(path) already exists; choose a new file for the copy."
        case .unavailable(let reason):
            "Encryption is unavailable on this platform: \(reason)."
        case .keyStoreUnavailable(let store, let reason):
            "The database key cannot be read from or stored in \(store): \(reason). Nothing was created."
        case .keyStoreLocked(let store):
            "\(store) is locked; unlock it (log in) and open the database again. Nothing was created."
        case .notATroveKey(let service, let account):
            "The key store item for service \"\(service)\", account \"\(account)\" is not a Trove "
                + "database key; it was left as it is. Choose another account, or remove that item."
        case .keyNotInKeyStore(let service, let account):
            "No key is stored for service \"\(service)\", account \"\(account)\", and the database "
                + "file exists: it was encrypted with another key. Nothing was changed."
        }
    }

    public var errorDescription: String? { description }
}
