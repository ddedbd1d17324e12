import Foundation
import TroveSQLite
import TroveVectors

/// Where HNSW snapshots live: one table per collection, `<name>_index`, created on the first
/// save, holding one snapshot per vector field (the row key `name`, see
/// ``DocumentLayout/snapshotLocation(for:)``).
///
/// ```
/// <c>_index(name TEXT, part INTEGER, watermark INTEGER, format INTEGER, checksum INTEGER,
///           total_bytes INTEGER, data BLOB, PRIMARY KEY (name, part))
/// ```
///
/// One snapshot is the bytes of `HNSWIndex.snapshot()` cut into parts of ``partBytes`` (SQLite
/// refuses values above 1 GB by default, and a 1M × 384-d index is 1.6 GB). Every part repeats
/// the header columns: `watermark` is the change-log seq the snapshot reflects, `checksum` the
/// snapshot's own trailer checksum (the full checksum is verified again when the bytes are
/// parsed), `total_bytes` the length of the whole snapshot. A snapshot is written in one
/// transaction together with nothing else, so it is either entirely the old one or entirely the
/// new one.
struct ANNSnapshotStore {
    /// The layout of the rows above; a different value is treated as "no usable snapshot".
    static let format: Int64 = 1
    static let partBytes = 16 << 20

    /// One snapshot's place: its table (unquoted) and its row key in that table.
    struct Location: Sendable, Hashable {
        let table: String
        let key: String
    }

    let connection: Connection
    let location: Location

    /// What was found in the table.
    enum Stored {
        case none
        case unusable(reason: String)
        case snapshot(watermark: Int64, bytes: [UInt8])
    }

    private var tableName: String { location.table }
    private var quotedTable: String { "\"\(location.table)\"" }

    func tableExists() throws -> Bool {
        try connection.scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(tableName)]) != nil
    }

    /// Reads and reassembles the snapshot; every structural problem becomes `.unusable`.
    func read() throws -> Stored {
        guard try tableExists() else { return .none }
        // Sizes first, before allocating anything: the recorded total must equal the bytes present
        // (length() of a blob reads only the record header).
        let sizes = try connection.query(
            "SELECT count(*), coalesce(sum(length(data)), 0), min(total_bytes), max(total_bytes) FROM \(quotedTable) WHERE name = ?",
            [.text(location.key)])
        guard let sizeRow = sizes.first, let parts = sizeRow[0].int64Value, parts > 0 else { return .none }
        let present = sizeRow[1].int64Value ?? -1
        guard sizeRow[2] == sizeRow[3], let recorded = sizeRow[2].int64Value, recorded == present else {
            return .unusable(reason: "snapshot size mismatch: \(present) bytes stored, \(sizeRow[2]) recorded")
        }
        let statement = try connection.prepare(
            """
            SELECT part, watermark, format, checksum, total_bytes, data FROM \(quotedTable)
            WHERE name = ? ORDER BY part
            """)
        var bytes: [UInt8] = []
        var header: (watermark: Int64, format: Int64, checksum: Int64, total: Int64)?
        var expectedPart: Int64 = 0
        var problem: String?
        try statement.forEachRow([.text(location.key)]) { s in
            guard problem == nil else { return }
            let part = s.int64(at: 0)
            let row = (watermark: s.int64(at: 1), format: s.int64(at: 2), checksum: s.int64(at: 3), total: s.int64(at: 4))
            if header == nil {
                guard row.format == Self.format else { problem = "snapshot row format \(row.format), expected \(Self.format)"; return }
                guard row.total == recorded else { problem = "snapshot size changed while reading"; return }
                header = row
                bytes.reserveCapacity(Int(row.total))
            }
            guard part == expectedPart else { problem = "snapshot part \(expectedPart) is missing"; return }
            guard row == header! else { problem = "snapshot part \(part) disagrees with part 0"; return }
            expectedPart += 1
            s.withBlob(at: 5) { blob in
                guard let blob else { problem = "snapshot part \(part) has no data"; return }
                guard Int64(bytes.count + blob.count) <= row.total else { problem = "snapshot longer than its recorded size"; return }
                bytes.append(contentsOf: blob)
            }
        }
        if let problem { return .unusable(reason: problem) }
        guard let header else { return .none }
        guard Int64(bytes.count) == header.total else {
            return .unusable(reason: "snapshot truncated: \(bytes.count) of \(header.total) bytes")
        }
        guard Self.trailerChecksum(bytes) == header.checksum else {
            return .unusable(reason: "snapshot checksum differs from the recorded one")
        }
        return .snapshot(watermark: header.watermark, bytes: bytes)
    }

    /// Replaces the stored snapshot; call inside a write transaction.
    func write(_ bytes: [UInt8], watermark: Int64) throws {
        try connection.execute(
            script: """
                CREATE TABLE IF NOT EXISTS \(quotedTable) (
                    name TEXT NOT NULL, part INTEGER NOT NULL, watermark INTEGER NOT NULL,
                    format INTEGER NOT NULL, checksum INTEGER NOT NULL, total_bytes INTEGER NOT NULL,
                    data BLOB NOT NULL, PRIMARY KEY (name, part)
                ) WITHOUT ROWID
                """)
        try connection.execute("DELETE FROM \(quotedTable) WHERE name = ?", [.text(location.key)])
        let statement = try connection.prepare(
            """
            INSERT INTO \(quotedTable)(name, part, watermark, format, checksum, total_bytes, data)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        let checksum = Self.trailerChecksum(bytes)
        try bytes.withUnsafeBytes { all in
            var part: Int64 = 0
            var start = 0
            repeat {
                let end = min(all.count, start + Self.partBytes)
                statement.reset()
                let header: [SQLValue] = [
                    .text(location.key), .integer(part), .integer(watermark), .integer(Self.format),
                    .integer(checksum), .integer(Int64(all.count)),
                ]
                for (offset, value) in header.enumerated() { try statement.bind(value, at: offset + 1) }
                try statement.bind(bytes: UnsafeRawBufferPointer(rebasing: all[start..<end]), at: 7)
                while try statement.step() {}
                part += 1
                start = end
            } while start < all.count
        }
    }

    /// Removes the stored snapshot (tests and tools).
    func delete() throws {
        guard try tableExists() else { return }
        try connection.execute("DELETE FROM \(quotedTable) WHERE name = ?", [.text(location.key)])
    }

    /// The snapshot's own trailer checksum (its last 8 bytes, little-endian), as a signed integer
    /// SQLite can store.
    static func trailerChecksum(_ bytes: [UInt8]) -> Int64 {
        guard bytes.count >= 8 else { return 0 }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[bytes.count - 8 + i]) << (8 * UInt64(i)) }
        return Int64(bitPattern: value)
    }
}
