import Foundation
import TroveSQLite

/// Local changes on their way out: pending field stamps and tombstones are sealed into change
/// sets numbered by the device's sequence and kept in `_trove_sync_outbox` until the server
/// acknowledges them. A retry sends the very same sealed bytes under the same number, so the
/// server stores each change set once.
enum Outbox {
    /// Records per change set: bounds one payload (and the memory of sealing and applying it).
    static let recordsPerChangeSet = 2_000

    /// Seals every pending change into change sets and stores them in the outbox; clears the
    /// pending marks in the same transaction. Returns how many change sets it sealed.
    static func sealPending(
        on connection: Connection, captured: [String: CapturedTable], keys: SpaceKeys,
        space: String,
        device: String,
        schemaVersion: Int
    ) throws -> Int {
        let rows = try connection.prepare(
            """
            SELECT r.collection, r.id, r.cl, f.field, f.cl, f.hlc, f.value, f.base_hlc, f.base_device
            FROM \(SyncTables.records) r
            LEFT JOIN \(SyncTables.fields) f ON f.collection = r.collection AND f.id = r.id AND f.pending = 1
            WHERE r.pending = 1
            ORDER BY r.collection, r.id, f.field
            """
        ).rows()
        guard !rows.isEmpty else { return 0 }
        var sets: [ChangeSet] = []
        var current = ChangeSet(schemaVersion: schemaVersion, collections: [])
        var records = 0
        for row in rows {
            let collection = row.string(at: 0) ?? ""
            let id = row[1]
            if current.collections.last?.name != collection {
                let manifests = (captured[collection]?.vectorFields ?? [:]).mapValues {
                    manifestKey($0)
                }
                current.collections.append(
                    ChangeSet.Collection(name: collection, manifests: manifests, records: []))
            }
            let c = current.collections.count - 1
            if current.collections[c].records.last?.id != id {
                if records == recordsPerChangeSet {
                    sets.append(current)
                    let manifests = (captured[collection]?.vectorFields ?? [:]).mapValues {
                        manifestKey($0)
                    }
                    current = ChangeSet(
                        schemaVersion: schemaVersion,
                        collections: [
                            ChangeSet.Collection(
                                name: collection, manifests: manifests, records: [])
                        ])
                    records = 0
                }
                current.collections[current.collections.count - 1].records.append(
                    ChangeSet.Record(id: id, cl: row.int64(at: 2) ?? 0, fields: []))
                records += 1
            }
            if let field = row.string(at: 3) {
                let c = current.collections.count - 1
                let r = current.collections[c].records.count - 1
                current.collections[c].records[r].fields.append(
                    ChangeSet.FieldChange(
                        name: field, cl: row.int64(at: 4) ?? 0, hlc: row.int64(at: 5) ?? 0,
                        value: row[6],
                        baseHLC: row.int64(at: 7), baseDevice: row.string(at: 8)))
            }
        }
        sets.append(current)
        var sequence =
            try connection.scalar("SELECT sealed FROM \(SyncTables.device)")?.int64Value ?? 0
        let insert = try connection.cachedStatement(
            "INSERT INTO \(SyncTables.outbox)(sequence, payload) VALUES (?, ?)")
        for set in sets {
            sequence += 1
            let sealed = try Sealing.seal(
                set, keys: keys, space: space, device: device, sequence: sequence)
            try insert.execute([.integer(sequence), .blob(Array(sealed.payload))])
        }
        try connection.execute("UPDATE \(SyncTables.device) SET sealed = ?", [.integer(sequence)])
        try connection.execute("UPDATE \(SyncTables.fields) SET pending = 0 WHERE pending = 1")
        try connection.execute("UPDATE \(SyncTables.records) SET pending = 0 WHERE pending = 1")
        return sets.count
    }

    /// The oldest unacknowledged change sets: at most `limit`, and no more after their payloads
    /// reach `bytes` (the first is always returned, whatever its size).
    static func unacknowledged(on connection: Connection, device: String, limit: Int, bytes: Int)
        throws
        -> [SealedChangeSet]
    {
        try connection.prepare(
            """
            SELECT sequence, payload FROM (
                SELECT sequence, payload,
                       sum(length(payload)) OVER (ORDER BY sequence ROWS UNBOUNDED PRECEDING) - length(payload) AS before
                FROM \(SyncTables.outbox) ORDER BY sequence LIMIT ?)
            WHERE before < ? ORDER BY sequence
            """
        )
        .rows([.integer(Int64(limit)), .integer(Int64(bytes))])
        .map {
            SealedChangeSet(
                device: device, deviceSequence: $0.int64(at: 0) ?? 0,
                payload: $0.data(at: 1) ?? Data())
        }
    }

    /// Seals again, under the current epoch of `keys`, the unacknowledged change sets sealed
    /// under an older one (sealed before this device learnt that a device was removed): what
    /// leaves the device after it learnt of a removal is never readable by the removed device.
    /// Returns how many were sealed again.
    @discardableResult
    static func reseal(on connection: Connection, keys: SpaceKeys, space: String, device: String)
        throws -> Int
    {
        var resealed = 0
        for row in try connection.query(
            "SELECT sequence, payload FROM \(SyncTables.outbox) ORDER BY sequence")
        {
            guard let sequence = row.int64(at: 0), let payload = row[1].blobValue,
                SpaceKeys.epoch(of: payload) < keys.current
            else { continue }
            let associatedData = Sealing.associatedData(
                space: space, device: device, sequence: sequence)
            guard let plain = try keys.open(payload, associatedData: associatedData) else {
                continue
            }
            try connection.execute(
                "UPDATE \(SyncTables.outbox) SET payload = ? WHERE sequence = ?",
                [.blob(try keys.seal(plain, associatedData: associatedData)), .integer(sequence)])
            resealed += 1
        }
        return resealed
    }

    /// Removes acknowledged change sets (up to `sequence`) from the outbox.
    static func acknowledge(upTo sequence: Int64, on connection: Connection) throws {
        try connection.execute(
            "DELETE FROM \(SyncTables.outbox) WHERE sequence <= ?", [.integer(sequence)])
        try connection.execute(
            "UPDATE \(SyncTables.device) SET pushed = max(pushed, ?)", [.integer(sequence)])
    }
}
