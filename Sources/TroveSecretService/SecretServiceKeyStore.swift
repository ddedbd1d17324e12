import CLibSecret
import Foundation
import TroveSQLite

/// The freedesktop Secret Service (GNOME Keyring, KeePassXC, KWallet's bridge) as a
/// ``KeyStore``, through libsecret: items in the default collection (GNOME's "login" keyring),
/// found by their `service` and `account` attributes, the names `secret-tool` uses.
///
/// Reached over the session D-Bus (`DBUS_SESSION_BUS_ADDRESS`), with a connection of its own per
/// call. It never unlocks anything or shows a prompt: a locked keyring is
/// ``EncryptionError/keyStoreLocked(store:)``, and no session bus, no Secret Service on it or no
/// default collection is ``EncryptionError/keyStoreUnavailable(store:reason:)``.
///
/// In a product of its own (`TroveSecretService`, Debian's libsecret-1-dev), so apps that do
/// not use it link nothing new.
///
/// ```swift
/// import Trove
/// import TroveSecretService
///
/// let database = try Database(
///     path: path, encryption: .keyStore(SecretServiceKeyStore(), service: "com.example.notes", account: "notes.trove"))
/// ```
public struct SecretServiceKeyStore: KeyStore {
    /// A store in the Secret Service's default collection.
    public init() {}

    public var name: String { "the Secret Service keyring" }

    public func secret(service: String, account: String) throws -> Data? {
        var bytes: UnsafeMutablePointer<CChar>?
        var length = 0
        var message: UnsafeMutablePointer<CChar>?
        let status = trove_secret_lookup(service, account, &bytes, &length, &message)
        defer { trove_secret_free(bytes, length) }
        try check(status, message)
        guard status == TROVE_SECRET_OK, let bytes else { return nil }
        return Data(bytes: bytes, count: length)
    }

    public func addSecret(_ secret: Data, service: String, account: String, label: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let status = secret.withUnsafeBytes { raw in
            trove_secret_store(
                service, account, label, raw.baseAddress?.assumingMemoryBound(to: CChar.self),
                raw.count, &message)
        }
        try check(status, message)
    }

    /// Throws for a locked or unavailable store; frees `message`.
    private func check(_ status: trove_secret_status, _ message: UnsafeMutablePointer<CChar>?)
        throws
    {
        let reason = message.map { String(cString: $0) } ?? "unknown failure"
        g_free(message)
        switch status {
        case TROVE_SECRET_LOCKED: throw EncryptionError.keyStoreLocked(store: name)
        case TROVE_SECRET_UNAVAILABLE:
            throw EncryptionError.keyStoreUnavailable(store: name, reason: reason)
        default: return
        }
    }
}
