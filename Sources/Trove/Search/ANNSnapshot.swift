import Foundation
import TroveSQLite
import TroveVectors

/// Where the snapshots of in-memory vector indexes live (an HNSW graph, a flat index's matrix):
/// one table per collection, `<name>_index`, created on the first save, holding one snapshot per
/// vector field (the row key `name`, see ``DocumentLayout/snapshotLocation(for:)``).
///
/// ```
/// <c>_index(name TEXT, part INTEGER, watermark INTEGER, format INTEGER, checksum INTEGER,
///           total_bytes INTEGER, data BLOB, PRIMARY KEY (name, part))
/// ```
///
/// One snapshot is a run of bytes cut into parts small enough to stay inside their B-tree page
/// (``partBytes(pageSize:key:)``): SQLite then reads them as it reads rows, page after page
/// (through the reader's memory map), where a large blob is walked page by page through its
/// overflow chain and copied twice, about twice the time. Every part repeats the header columns:
/// `watermark` is the change-log seq the snapshot reflects, `checksum` its checksum (the
/// snapshot's own trailer for HNSW, ``wordSum(_:into:)`` for a matrix), `total_bytes` the length
/// of the whole snapshot. A snapshot is written in one transaction together with nothing else,
/// so it is either entirely the old one or entirely the new one.
struct ANNSnapshotStore {
    /// The layout of the rows above; a different value is treated as "no usable snapshot".
    static let format: Int64 = 1

    /// One snapshot's place: its table (unquoted) and its row key in that table.
    struct Location: Sendable, Hashable {
        let table: String
        let key: String
    }

    let connection: Connection
    let location: Location

    /// What was found in the table (HNSW: the whole snapshot in memory).
    enum Stored {
        case none
        case unusable(reason: String)
        case snapshot(watermark: Int64, bytes: [UInt8])
    }

    /// What streaming a snapshot found.
    enum Streamed {
        case none
        case unusable(reason: String)
        /// Every part was handed over, `total` bytes in all; the caller checks `checksum`.
        case read(watermark: Int64, checksum: Int64)
    }

    private var tableName: String { location.table }
    private var quotedTable: String { "\"\(location.table)\"" }

    func tableExists() throws -> Bool {
        try connection.scalar(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(tableName)]) != nil
    }

    /// The data bytes of one part for a file of `pageSize`-byte pages: a row of the table
    /// (a WITHOUT ROWID B-tree, whose rows stay inside a page up to about a quarter of it) then
    /// needs no overflow page, with room for the key, the header columns and reserved bytes.
    static func partBytes(pageSize: Int, key: String) -> Int {
        let usable = pageSize - 64
        let local = (usable - 12) * 64 / 255 - 23
        return max(256, (local - 100 - key.utf8.count) / 64 * 64)
    }

    /// Reads the snapshot part by part in one pass: `begin` receives the recorded total size and
    /// returns a reason to refuse it (nil: go on); `append` receives each part's data in order,
    /// never more than the total in all. Every structural problem becomes `.unusable`.
    func stream(begin: (Int64) -> String?, append: (UnsafeRawBufferPointer) -> Void) throws -> Streamed {
        guard try tableExists() else { return .none }
        let first = try connection.query(
            "SELECT watermark, format, checksum, total_bytes FROM \(quotedTable) WHERE name = ? AND part = 0", [.text(location.key)])
        guard let row = first.first else {
            let any = try connection.scalar("SELECT 1 FROM \(quotedTable) WHERE name = ? LIMIT 1", [.text(location.key)])
            return any == nil ? .none : .unusable(reason: "snapshot part 0 is missing")
        }
        let header = (watermark: row[0].int64Value ?? -1, format: row[1].int64Value ?? -1,
                      checksum: row[2].int64Value ?? 0, total: row[3].int64Value ?? -1)
        guard header.format == Self.format else { return .unusable(reason: "snapshot row format \(header.format), expected \(Self.format)") }
        // Before allocating anything for it: a snapshot cannot be larger than the file holding it.
        let fileBytes = (try connection.scalar("PRAGMA page_count")?.int64Value ?? 0) * (try connection.scalar("PRAGMA page_size")?.int64Value ?? 0)
        guard header.total >= 0, header.total <= fileBytes else {
            return .unusable(reason: "snapshot size mismatch: \(header.total) bytes recorded in a file of \(fileBytes)")
        }
        if let refused = begin(header.total) { return .unusable(reason: refused) }
        let statement = try connection.prepare(
            """
            SELECT part, watermark, format, checksum, total_bytes, data FROM \(quotedTable)
            WHERE name = ? ORDER BY part
            """)
        var received: Int64 = 0
        var expectedPart: Int64 = 0
        var problem: String?
        try statement.forEachRow([.text(location.key)]) { s in
            guard problem == nil else { return }
            let part = s.int64(at: 0)
            guard part == expectedPart else { problem = "snapshot part \(expectedPart) is missing"; return }
            guard s.int64(at: 1) == header.watermark, s.int64(at: 2) == header.format, s.int64(at: 3) == header.checksum,
                s.int64(at: 4) == header.total
            else { problem = "snapshot part \(part) disagrees with part 0"; return }
            expectedPart += 1
            s.withBlob(at: 5) { blob in
                guard let blob else { problem = "snapshot part \(part) has no data"; return }
                guard received + Int64(blob.count) <= header.total else { problem = "snapshot longer than its recorded size"; return }
                received += Int64(blob.count)
                append(blob)
            }
        }
        if let problem { return .unusable(reason: problem) }
        guard received == header.total else { return .unusable(reason: "snapshot truncated: \(received) of \(header.total) bytes") }
        return .read(watermark: header.watermark, checksum: header.checksum)
    }

    /// Reads and reassembles an HNSW snapshot, its trailer checksum checked against the recorded one.
    func read() throws -> Stored {
        var bytes: [UInt8] = []
        let streamed = try stream(begin: { total in
            bytes.reserveCapacity(Int(total))
            return nil
        }, append: { bytes.append(contentsOf: $0) })
        switch streamed {
        case .none: return .none
        case .unusable(let reason): return .unusable(reason: reason)
        case .read(let watermark, let checksum):
            guard Self.trailerChecksum(bytes) == checksum else {
                return .unusable(reason: "snapshot checksum differs from the recorded one")
            }
            return .snapshot(watermark: watermark, bytes: bytes)
        }
    }

    /// Replaces the stored snapshot with an HNSW graph's bytes; call inside a write transaction.
    func write(_ bytes: [UInt8], watermark: Int64) throws {
        try bytes.withUnsafeBytes { try write([$0], checksum: Self.trailerChecksum(bytes), watermark: watermark) }
    }

    /// Replaces the stored snapshot with the concatenation of `segments`; call inside a write
    /// transaction.
    func write(_ segments: [UnsafeRawBufferPointer], checksum: Int64, watermark: Int64) throws {
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
        let pageSize = Int(try connection.scalar("PRAGMA page_size")?.int64Value ?? 4096)
        let partBytes = Self.partBytes(pageSize: pageSize, key: location.key)
        let total = segments.reduce(0) { $0 + $1.count }
        var buffer = [UInt8](repeating: 0, count: partBytes)
        var segment = 0, offset = 0
        var part: Int64 = 0
        var written = 0
        repeat {
            // The next part: up to `partBytes` bytes, taken across segment boundaries.
            let length = min(partBytes, total - written)
            buffer.withUnsafeMutableBytes { out in
                var filled = 0
                while filled < length {
                    let source = segments[segment]
                    let n = min(length - filled, source.count - offset)
                    if n > 0 { (out.baseAddress! + filled).copyMemory(from: source.baseAddress! + offset, byteCount: n) }
                    filled += n
                    offset += n
                    if offset == source.count { segment += 1; offset = 0 }
                }
            }
            statement.reset()
            let header: [SQLValue] = [
                .text(location.key), .integer(part), .integer(watermark), .integer(Self.format),
                .integer(checksum), .integer(Int64(total)),
            ]
            for (index, value) in header.enumerated() { try statement.bind(value, at: index + 1) }
            try buffer.withUnsafeBytes { try statement.bind(bytes: UnsafeRawBufferPointer(rebasing: $0[0..<length]), at: 7) }
            while try statement.step() {}
            part += 1
            written += length
        } while written < total
    }

    /// Removes the stored snapshot (tests and tools).
    func delete() throws {
        guard try tableExists() else { return }
        try connection.execute("DELETE FROM \(quotedTable) WHERE name = ?", [.text(location.key)])
    }

    /// Adds `bytes`, found at byte `position` of a snapshot, to `sum`: the wrapping sum of the
    /// snapshot's little-endian 32-bit words, the checksum of a matrix snapshot. Computed piece by
    /// piece as the pieces are copied, whatever the cuts (a byte at position p adds itself
    /// shifted by 8 × (p mod 4)); any single changed byte changes it, and one add per word keeps
    /// the load to one pass.
    static func wordSum(_ bytes: UnsafeRawBufferPointer, at position: Int, into sum: inout UInt64) {
        guard let base = bytes.baseAddress else { return }
        var i = 0
        var total: UInt64 = 0
        func byte() {
            total &+= UInt64(bytes[i]) << (8 * UInt64((position + i) & 3))
            i += 1
        }
        while i < bytes.count, (position + i) & 3 != 0 { byte() }
        let words = (bytes.count - i) / 4
        if words > 0, Int(bitPattern: base + i) & 3 == 0 {
            (base + i).withMemoryRebound(to: UInt32.self, capacity: words) { w in
                var s: UInt64 = 0
                for k in 0..<words { s &+= UInt64(UInt32(littleEndian: w[k])) }
                total &+= s
            }
            i += 4 * words
        }
        while i < bytes.count { byte() }
        sum &+= total
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
