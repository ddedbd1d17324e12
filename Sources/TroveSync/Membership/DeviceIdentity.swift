import Foundation
import TroveSQLite

/// This device's X25519 key pair and the epoch keys it has unwrapped, kept in the synced
/// database beside the rest of its sync state (the local store, as the device id is): whoever
/// can read the file can read the space, so a file that leaves the device is encrypted at rest.
///
/// ```
/// _trove_sync_identity(one = 1, private_key, public_key)   made on first use
/// _trove_sync_keys(epoch, key)                              epoch keys unwrapped for this device
/// ```
struct DeviceIdentity: Sendable {
    let device: String
    /// The X25519 private key (32 bytes); never leaves this database.
    let privateKey: [UInt8]
    let publicKey: [UInt8]

    static let identity = "\"_trove_sync_identity\""
    static let keys = "\"_trove_sync_keys\""

    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS \(identity) (
            one INTEGER PRIMARY KEY CHECK (one = 1), private_key BLOB NOT NULL,
            public_key BLOB NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS \(keys) (epoch INTEGER PRIMARY KEY, key BLOB NOT NULL)",
    ]

    /// This device's identity, made the first time. Call inside a write transaction, after
    /// ``SyncTables/prepare(_:space:)``.
    static func load(_ connection: Connection, device: String) throws -> DeviceIdentity {
        for statement in createStatements { try connection.execute(statement) }
        if let row = try connection.query("SELECT private_key, public_key FROM \(identity)").first,
            let privateKey = row[0].blobValue, let publicKey = row[1].blobValue,
            privateKey.count == KeyAgreement.keyCount
        {
            return DeviceIdentity(
                device: device, privateKey: Array(privateKey), publicKey: Array(publicKey))
        }
        let privateKey = try KeyAgreement.newPrivateKey()
        let publicKey = try KeyAgreement.publicKey(of: privateKey)
        try connection.execute(
            "INSERT OR REPLACE INTO \(identity)(one, private_key, public_key) VALUES (1, ?, ?)",
            [.blob(privateKey), .blob(publicKey)])
        return DeviceIdentity(device: device, privateKey: privateKey, publicKey: publicKey)
    }

    /// The epoch keys this device unwrapped, by epoch.
    static func storedKeys(_ connection: Connection) throws -> [Int64: SyncKey] {
        for statement in createStatements { try connection.execute(statement) }
        var keys: [Int64: SyncKey] = [:]
        for row in try connection.query("SELECT epoch, key FROM \(Self.keys)") {
            if let epoch = row.int64(at: 0), let key = row[1].blobValue, key.count == 32 {
                keys[epoch] = SyncKey(bytes: Array(key))
            }
        }
        return keys
    }

    /// Keeps unwrapped epoch keys.
    static func store(_ keys: [Int64: SyncKey], on connection: Connection) throws {
        for statement in createStatements { try connection.execute(statement) }
        for (epoch, key) in keys {
            try connection.execute(
                "INSERT OR REPLACE INTO \(Self.keys)(epoch, key) VALUES (?, ?)",
                [.integer(epoch), .blob(key.bytes)])
        }
    }
}
