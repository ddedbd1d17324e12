// Encryption keys kept in a key store: created on first open, found again on reopen.
// Run: swift run example-key-storage [folder]
import Foundation
import Trove
#if !canImport(Security)
import TroveSecretService
#endif

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("keys-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

/// The system keyring: the Keychain on Apple platforms, the Secret Service (GNOME Keyring,
/// KeePassXC) on Linux, through the TroveSecretService product.
func systemKeyStore() -> any KeyStore {
    #if canImport(Security)
    KeychainKeyStore()
    #else
    SecretServiceKeyStore()
    #endif
}

/// A key store in memory, so this example runs anywhere; an app passes systemKeyStore().
/// `@unchecked Sendable`: `items` is only touched while holding `lock`.
final class MemoryKeyStore: KeyStore, @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String: Data] = [:]
    var name: String { "the example's memory" }

    func secret(service: String, account: String) throws -> Data? {
        lock.withLock { items["\(service)/\(account)"] }
    }

    func addSecret(_ secret: Data, service: String, account: String, label: String) throws {
        lock.withLock { if items["\(service)/\(account)"] == nil { items["\(service)/\(account)"] = secret } }
    }
}

let store = MemoryKeyStore()
let encryption = Encryption.keyStore(store, service: "com.example.notes", account: "notes.trove")
do {
    // First open: a random 256-bit key is created, stored, then the file is created with it.
    let database = try Database(path: path, encryption: encryption)
    let notes = try await database.documents("notes", schema: DocumentSchema(fields: [.text("title")]))
    try await notes.insert(Document(id: 1, ["title": "Dentist on Tuesday"]))
}
print("key stored:", try store.secret(service: "com.example.notes", account: "notes.trove") != nil)

// Reopening finds the key in the store.
let reopened = try Database(path: path, encryption: encryption)
print(try await reopened.documents(named: "notes").fetch(id: 1)?["title"]?.stringValue ?? "missing")
print(reopened.encryption.map(String.init(describing:)) ?? "plaintext")

// An item under the same names that is not a Trove key is refused; no file is created.
try store.addSecret(Data("hunter2".utf8), service: "com.example.notes", account: "other.trove", label: "a password")
let other = URL(fileURLWithPath: folder).appendingPathComponent("other-\(ProcessInfo.processInfo.processIdentifier).trove").path
do {
    _ = try Database(path: other, encryption: .keyStore(store, service: "com.example.notes", account: "other.trove"))
} catch let error as EncryptionError {
    print(error)
}
print("other file created:", FileManager.default.fileExists(atPath: other))
