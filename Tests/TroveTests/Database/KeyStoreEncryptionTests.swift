import Foundation
import Testing
import Trove
import TroveTestSupport

/// A key store in memory, with switches for the failures a real keyring has.
/// `@unchecked Sendable`: every property is only touched while holding `lock`.
private final class MemoryKeyStore: KeyStore, @unchecked Sendable {
    enum Failure { case none, locked, unreachable, foreign }
    private let lock = NSLock()
    private var items: [String: Data] = [:]
    private var failure = Failure.none
    /// Stored by "another process" between this process's lookup and its add (a race).
    private var racing: Data?
    private(set) var adds = 0
    var name: String { "memory" }

    func fail(_ failure: Failure) { lock.withLock { self.failure = failure } }
    func race(with secret: Data) { lock.withLock { racing = secret } }
    func item(_ service: String, _ account: String) -> Data? {
        lock.withLock { items["\(service)/\(account)"] }
    }
    func put(_ secret: Data, _ service: String, _ account: String) {
        lock.withLock { items["\(service)/\(account)"] = secret }
    }

    func secret(service: String, account: String) throws -> Data? {
        try lock.withLock {
            switch failure {
            case .locked: throw EncryptionError.keyStoreLocked(store: name)
            case .unreachable: throw POSIXError(.ECONNREFUSED)
            case .none, .foreign: return items["\(service)/\(account)"]
            }
        }
    }

    func addSecret(_ secret: Data, service: String, account: String, label: String) throws {
        lock.withLock {
            adds += 1
            if let racing {
                items["\(service)/\(account)"] = racing
                self.racing = nil
            }
            if items["\(service)/\(account)"] == nil { items["\(service)/\(account)"] = secret }
        }
    }
}

/// Encryption.keyStore's shared logic (the part the Keychain store relies on), with a store in
/// memory; the Secret Service is tested against a real keyring in TroveSecretServiceTests.
@Suite("Encryption.keyStore")
struct KeyStoreEncryptionTests {
    static let service = "dev.trove.tests"

    @Test(
        "creates a 32-byte key stored as trove-key-v1 text, then finds it; data survives reopening")
    func createAndReopen() async throws {
        let dir = try TemporaryDirectory()
        let store = MemoryKeyStore()
        let encryption = Encryption.keyStore(store, service: Self.service, account: "a")
        do {
            let db = try Database(path: dir.path("a.trove"), encryption: encryption)
            try await db.documents("notes", schema: DocumentSchema(fields: [.text("t")])).insert(
                Document(id: 1, ["t": "secret"]))
        }
        let stored = try #require(store.item(Self.service, "a"))
        let text = try #require(String(data: stored, encoding: .utf8))
        #expect(text.hasPrefix("trove-key-v1:"))
        let key = try #require(Data(base64Encoded: String(text.dropFirst("trove-key-v1:".count))))
        #expect(key.count == 32)
        let reopened = try Database(path: dir.path("a.trove"), encryption: encryption)
        #expect(try await reopened.documents(named: "notes").fetch(id: 1)?["t"] == "secret")
        #expect(store.adds == 1)
        // The stored key is the file's raw key.
        _ = try Database(path: dir.path("a.trove"), encryption: .key(key))
    }

    @Test("each new file gets its own random key")
    func keysDiffer() throws {
        let dir = try TemporaryDirectory()
        let store = MemoryKeyStore()
        _ = try Database(
            path: dir.path("a.trove"),
            encryption: .keyStore(store, service: Self.service, account: "a"))
        _ = try Database(
            path: dir.path("b.trove"),
            encryption: .keyStore(store, service: Self.service, account: "b"))
        #expect(store.item(Self.service, "a") != store.item(Self.service, "b"))
    }

    @Test(
        "an item that is not a Trove key is refused and left alone; no file is created",
        arguments: [
            "hunter2", "trove-key-v1:", "trove-key-v1:AAAA",
            "trove-key-v2:" + Data(count: 32).base64EncodedString(),
        ])
    func foreignItem(_ secret: String) throws {
        let dir = try TemporaryDirectory()
        let store = MemoryKeyStore()
        store.put(Data(secret.utf8), Self.service, "a")
        #expect(throws: EncryptionError.notATroveKey(service: Self.service, account: "a")) {
            try Database(
                path: dir.path("a.trove"),
                encryption: .keyStore(store, service: Self.service, account: "a"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.trove")))
        #expect(store.item(Self.service, "a") == Data(secret.utf8))
    }

    @Test("locked and unreachable stores are typed errors; nothing is created")
    func failures() throws {
        let dir = try TemporaryDirectory()
        let store = MemoryKeyStore()
        store.fail(.locked)
        #expect(throws: EncryptionError.keyStoreLocked(store: "memory")) {
            try Database(
                path: dir.path("a.trove"),
                encryption: .keyStore(store, service: Self.service, account: "a"))
        }
        store.fail(.unreachable)
        #expect {
            try Database(
                path: dir.path("a.trove"),
                encryption: .keyStore(store, service: Self.service, account: "a"))
        } throws: { error in
            guard case EncryptionError.keyStoreUnavailable(let name, _)? = error as? EncryptionError
            else {
                return false
            }
            return name == "memory"
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.trove")))
        #expect(store.adds == 0)
    }

    @Test("an existing file whose key is not in the store is keyNotInKeyStore; no key is made")
    func missingKeyForExistingFile() throws {
        let dir = try TemporaryDirectory()
        _ = try Database(path: dir.path("a.trove"), encryption: .passphrase("correct horse"))
        let store = MemoryKeyStore()
        #expect(throws: EncryptionError.keyNotInKeyStore(service: Self.service, account: "a")) {
            try Database(
                path: dir.path("a.trove"),
                encryption: .keyStore(store, service: Self.service, account: "a"))
        }
        #expect(store.adds == 0 && store.item(Self.service, "a") == nil)
    }

    @Test("when another process stores its key first, that key is used")
    func race() throws {
        let dir = try TemporaryDirectory()
        let store = MemoryKeyStore()
        let theirs = try #require(
            Data(base64Encoded: "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="))
        store.race(with: Data(("trove-key-v1:" + theirs.base64EncodedString()).utf8))
        _ = try Database(
            path: dir.path("a.trove"),
            encryption: .keyStore(store, service: Self.service, account: "a"))
        _ = try Database(path: dir.path("a.trove"), encryption: .key(theirs))
    }

    @Test("a passphrase file moves to a key store and back with changePassphrase")
    func changePassphrase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("a.trove")
        _ = try Database(path: path, encryption: .passphrase("correct horse"))
        let store = MemoryKeyStore()
        let kept = Encryption.keyStore(store, service: Self.service, account: "a")
        try Database.changePassphrase(path: path, from: .passphrase("correct horse"), to: kept)
        _ = try Database(path: path, encryption: kept)
        #expect(throws: EncryptionError.wrongKey) {
            try Database(path: path, encryption: .passphrase("correct horse"))
        }
        try Database.changePassphrase(path: path, from: kept, to: .passphrase("battery staple"))
        _ = try Database(path: path, encryption: .passphrase("battery staple"))
    }

    @Test("a service and an account are required")
    func names() throws {
        let dir = try TemporaryDirectory()
        #expect(throws: EncryptionError.self) {
            try Database(
                path: dir.path("a.trove"),
                encryption: .keyStore(MemoryKeyStore(), service: "", account: "a"))
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("a.trove")))
    }
}
