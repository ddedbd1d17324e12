import Foundation

/// A place that keeps secrets for the app, such as the system keyring, where Trove keeps the
/// key of an encrypted database opened with ``Encryption/keyStore(_:service:account:)``.
///
/// Two stores ship: `KeychainKeyStore` (Apple platforms, in Trove) and `SecretServiceKeyStore`
/// (Linux: the freedesktop Secret Service through libsecret, in the `TroveSecretService`
/// product). Conform your own type to keep keys elsewhere; it stores opaque bytes under a
/// service and an account, the two names Keychain items and Secret Service items are found by.
///
/// ```swift
/// #if canImport(Security)
/// let store: any KeyStore = KeychainKeyStore()
/// #else
/// let store: any KeyStore = SecretServiceKeyStore()  // import TroveSecretService
/// #endif
/// let database = try Database(
///     path: "notes.trove", encryption: .keyStore(store, service: "com.example.notes", account: "notes.trove"))
/// ```
///
/// Methods throw ``EncryptionError/keyStoreUnavailable(store:reason:)`` when the store cannot be
/// reached and ``EncryptionError/keyStoreLocked(store:)`` when it is locked; Trove reports any
/// other error a store throws as `keyStoreUnavailable`.
public protocol KeyStore: Sendable {
    /// What the store is called in error messages ("the Keychain").
    var name: String { get }

    /// The secret stored under `service` and `account`, or nil when there is none.
    ///
    /// - Parameters:
    ///   - service: the app or purpose the secret belongs to (`com.example.notes`).
    ///   - account: which secret of that service (Trove suggests the database's file name).
    /// - Returns: the stored bytes, or nil when no item has these names.
    /// - Throws: ``EncryptionError/keyStoreUnavailable(store:reason:)``,
    ///   ``EncryptionError/keyStoreLocked(store:)``.
    func secret(service: String, account: String) throws -> Data?

    /// Stores a new secret under `service` and `account`. When one is already there (another
    /// process stored it first), the store keeps that one and returns without error: Trove
    /// reads the secret back after adding and uses what is stored.
    ///
    /// - Parameters:
    ///   - secret: the bytes to keep.
    ///   - service: the app or purpose the secret belongs to.
    ///   - account: which secret of that service.
    ///   - label: a human-readable description, shown by keyring managers.
    /// - Throws: ``EncryptionError/keyStoreUnavailable(store:reason:)``,
    ///   ``EncryptionError/keyStoreLocked(store:)``.
    func addSecret(_ secret: Data, service: String, account: String, label: String) throws
}

/// What Trove stores in a key store for one database: the text `trove-key-v1:` followed by the
/// 32-byte key in base64. Text, so keyring tools show it and Secret Service stores keep it as
/// `text/plain`; prefixed and versioned, so an item that is something else (a password another
/// program stored under the same names) is recognised and refused instead of used as a key.
enum KeyStoreSecret {
    static let prefix = "trove-key-v1:"

    static func encode(_ key: [UInt8]) -> Data {
        Data((prefix + Data(key).base64EncodedString()).utf8)
    }

    /// The key in a stored secret. - Throws: ``EncryptionError/notATroveKey(service:account:)``.
    static func decode(_ secret: Data, service: String, account: String) throws -> Data {
        guard let text = String(data: secret, encoding: .utf8), text.hasPrefix(prefix),
            let key = Data(base64Encoded: String(text.dropFirst(prefix.count))), key.count == 32
        else { throw EncryptionError.notATroveKey(service: service, account: account) }
        return key
    }
}

extension Encryption {
    /// This encryption with a key store's key read (or, when `mayCreate`, created and stored
    /// first): `.key` of the stored key; passphrases and raw keys as they are.
    ///
    /// A new key is stored before anything is written to the database file, and read back
    /// after: if another process stored one first, that one is used. Any failure leaves the file
    /// untouched.
    ///
    /// - Parameter mayCreate: whether a missing item may be created (a new file, or the new key
    ///   of a change); false when the file already exists (its key must be found).
    /// - Throws: ``EncryptionError/keyNotInKeyStore(service:account:)``,
    ///   ``EncryptionError/notATroveKey(service:account:)`` and the store's errors.
    func resolvingKeyStore(mayCreate: Bool) throws -> Encryption {
        guard case .keyStore(let store, let service, let account) = self else { return self }
        try Self.validate(service: service, account: account)
        if let stored = try Self.calling(
            store, { try $0.secret(service: service, account: account) })
        {
            return .key(try KeyStoreSecret.decode(stored, service: service, account: account))
        }
        guard mayCreate else {
            throw EncryptionError.keyNotInKeyStore(service: service, account: account)
        }
        let fresh = KeyStoreSecret.encode(try CipherPrimitives.random(32))
        try Self.calling(store) {
            try $0.addSecret(
                fresh, service: service, account: account,
                label: "Trove database key (\(service), \(account))")
        }
        guard
            let stored = try Self.calling(
                store, { try $0.secret(service: service, account: account) })
        else {
            throw EncryptionError.keyStoreUnavailable(
                store: store.name, reason: "the new key was not kept")
        }
        return .key(try KeyStoreSecret.decode(stored, service: service, account: account))
    }

    private static func validate(service: String, account: String) throws {
        guard !service.isEmpty, !account.isEmpty else {
            throw EncryptionError.invalidKey(
                reason: "a key store item needs a service and an account")
        }
    }

    /// Runs `body`, reporting errors that are not ``EncryptionError``s as the store being
    /// unavailable (a store of the app's may throw anything).
    private static func calling<T>(_ store: any KeyStore, _ body: (any KeyStore) throws -> T) throws
        -> T
    {
        do {
            return try body(store)
        } catch let error as EncryptionError {
            throw error
        } catch {
            throw EncryptionError.keyStoreUnavailable(store: store.name, reason: "\(error)")
        }
    }
}
