import Foundation
import Testing
import Trove
import TroveSecretService
import TroveTestSupport

/// The Secret Service store against a real gnome-keyring-daemon on a private session bus
/// (``PrivateKeyring``). Serialized: the bus address is process-wide.
@Suite("SecretServiceKeyStore", .serialized)
struct SecretServiceKeyStoreTests {
    static let service = "dev.trove.tests"

    static func encryption(_ account: String) -> Encryption {
        .keyStore(SecretServiceKeyStore(), service: service, account: account)
    }

    @Test("first open creates a random key in the keyring; reopening finds it and reads the data")
    func createThenReopen() async throws {
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.trove")
        do {
            let database = try Database(path: path, encryption: Self.encryption("notes.trove"))
            let notes = try await database.documents(
                "notes", schema: DocumentSchema(fields: [.text("title")]))
            try await notes.insert(Document(id: 1, ["title": "kept in the keyring"]))
        }
        let stored = try keyring.lookUpWithSecretTool(service: Self.service, account: "notes.trove")
        #expect(stored.hasPrefix("trove-key-v1:"))
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: path)).range(
                of: Data("kept in the keyring".utf8)) == nil)

        let reopened = try Database(path: path, encryption: Self.encryption("notes.trove"))
        let notes = try await reopened.documents(named: "notes")
        #expect(try await notes.fetch(id: 1)?["title"] == "kept in the keyring")
        // The same item: nothing new was stored.
        #expect(
            try keyring.lookUpWithSecretTool(service: Self.service, account: "notes.trove")
                == stored)
        #expect(reopened.encryption?.keyDerivation == .rawKey)
    }

    @Test(
        "two items under the same names (two processes created a key at once): every lookup reads the oldest"
    )
    func oldestOfTwo() throws {
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        let store = SecretServiceKeyStore()
        // Enough items that the service's own order and the creation order can differ, and that
        // object paths of different lengths (…/9, …/10) are compared by number, not as text.
        for index in 0..<12 {
            try store.addSecret(
                Data("item \(index)".utf8), service: Self.service, account: "raced",
                label: "raced \(index)")
        }
        for _ in 0..<3 {
            let found = try store.secret(service: Self.service, account: "raced")
            #expect(
                found == Data("item 0".utf8),
                "read \(found.map { String(decoding: $0, as: UTF8.self) } ?? "nothing")")
        }
    }

    @Test(
        "an item under the same names that is not a Trove key is refused and left alone; no file is made"
    )
    func wrongItem() throws {
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        try keyring.storeWithSecretTool("hunter2", service: Self.service, account: "taken")
        let dir = try TemporaryDirectory()
        let path = dir.path("taken.trove")
        #expect(throws: EncryptionError.notATroveKey(service: Self.service, account: "taken")) {
            try Database(path: path, encryption: Self.encryption("taken"))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(
            try keyring.lookUpWithSecretTool(service: Self.service, account: "taken") == "hunter2")
    }

    @Test(
        "a locked keyring is keyStoreLocked, for a new file and for an existing one; nothing is created"
    )
    func lockedKeyring() async throws {
        let keyring = try PrivateKeyring()
        defer { keyring.stop() }
        let dir = try TemporaryDirectory()
        let existing = dir.path("existing.trove")
        do { _ = try Database(path: existing, encryption: Self.encryption("existing")) }
        try keyring.lock()
        let store = SecretServiceKeyStore()
        #expect(throws: EncryptionError.keyStoreLocked(store: store.name)) {
            try Database(path: existing, encryption: Self.encryption("existing"))
        }
        let fresh = dir.path("fresh.trove")
        #expect(throws: EncryptionError.keyStoreLocked(store: store.name)) {
            try Database(path: fresh, encryption: Self.encryption("fresh"))
        }
        #expect(!FileManager.default.fileExists(atPath: fresh))
    }

    @Test("no session bus at all is keyStoreUnavailable; nothing is created")
    func noBus() throws {
        // Seen when the process first reached for a bus, before GDBus kept a connection.
        let bus = try SessionBus.shared()
        #expect {
            try bus.withoutBus.get()
        } throws: { error in
            guard
                case EncryptionError.keyStoreUnavailable(let store, let reason)? = error
                    as? EncryptionError
            else {
                return false
            }
            return store == SecretServiceKeyStore().name && !reason.isEmpty
        }
        #expect(!FileManager.default.fileExists(atPath: "\(bus.directory)/nowhere.trove"))
    }

    @Test("a session bus without a Secret Service on it is keyStoreUnavailable; nothing is created")
    func busWithoutKeyring() throws {
        let keyring = try PrivateKeyring()
        keyring.stop()
        let dir = try TemporaryDirectory()
        let path = dir.path("nokeyring.trove")
        #expect {
            try Database(path: path, encryption: Self.encryption("nokeyring"))
        } throws: { error in
            if case EncryptionError.keyStoreUnavailable? = error as? EncryptionError { return true }
            return false
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}
