import Foundation
import TroveSQLite
import TroveVectors

/// Where the snapshots of in-memory vector indexes live (an HNSW graph, a flat index's matrix):
/// one table per collection, `<name>_index`, created on the first save, holding one snapshot per
/// vector field (the row key `name`, see ``DocumentLayout/snapshotLocation(for:flat:)``).
///
/// ```
/// <c>_index(name TEXT, part INTEGER, watermark INTEGER, format INTEGER, checksum INTEGER,
///           total_bytes INTEGER, data BLOB, UNIQUE (name, part))
/// ```
///
/// One snapshot is a run of bytes cut into parts of ``partBytes``, each on its own chain of
/// overflow pages, which a blob reader (TroveSQLite's `BlobReader`) copies straight into the index's memory:
/// one copy out of the reader's memory map, without a statement stepping through a B-tree page
/// per row. Every part repeats the header columns: `watermark` is the change-log seq the snapshot
/// reflects, `checksum` its checksum (the snapshot's own trailer for HNSW, ``wordSum(_:at:into:)``
/// for a matrix), `total_bytes` the length of the whole snapshot. A snapshot is written in one
/// transaction together with nothing else, so it is either entirely the old one or entirely the
/// new one.
///
/// Files written before held the table `WITHOUT ROWID` (`PRIMARY KEY (name, part)`), whose
/// parts a blob reader cannot open: they are still read (through a statement), and the first
/// save moves their rows into the table above.
struct IndexSnapshotStore {
    /// The layout of the rows above; a different value is treated as "no usable snapshot".
    static let format: Int64 = 1

    /// The data bytes of one part: enough that opening a part costs nothing next to copying its
    /// bytes (reading 1 MB parts is no faster), and few enough that a part stays in a core's
    /// cache between its copy and the reader's check of it.
    static let partBytes = 64 << 10

    /// One snapshot's place: its table (unquoted) and its row key in that table.
    struct Location: Sendable, Hashable {
        let table: String
        let key: String
    }

    let connection: Connection
    let location: Location

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
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(tableName)])
            != nil
    }

    /// Whether the table is in the layout written before (`WITHOUT ROWID`: its primary key is
    /// the table's own B-tree, listed as an index of origin `pk`).
    private func isWithoutRowid() throws -> Bool {
        try connection.scalar(
            "SELECT 1 FROM pragma_index_list(?) WHERE origin = 'pk'", [.text(tableName)]) != nil
    }

    /// Reads the snapshot part by part in one pass: `begin` receives the recorded total size and
    /// returns a reason to refuse it (nil: go on); `append` receives each part's length and a
    /// function that copies the part's bytes from an offset into a buffer, in order, never more
    /// than the total in all. Every structural problem becomes `.unusable`.
    func stream(
        begin: (Int64) -> String?,
        append: (
            _ count: Int,
            _ copy: (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) throws -> Void
        ) throws ->
            Void
    ) throws -> Streamed {
        guard try tableExists() else { return .none }
        let first = try connection.query(
            "SELECT watermark, format, checksum, total_bytes FROM \(quotedTable) WHERE name = ? AND part = 0",
            [.text(location.key)])
        guard let row = first.first else {
            let any = try connection.scalar(
                "SELECT 1 FROM \(quotedTable) WHERE name = ? LIMIT 1", [.text(location.key)])
            return any == nil ? .none : .unusable(reason: "snapshot part 0 is missing")
        }
        let header = (
            watermark: row[0].int64Value ?? -1, format: row[1].int64Value ?? -1,
            checksum: row[2].int64Value ?? 0, total: row[3].int64Value ?? -1
        )
        guard header.format == Self.format else {
            return .unusable(
                reason: "snapshot row format \(header.format), expected \(Self.format)")
        }
        // Before allocating anything for it: a snapshot cannot be larger than the file holding it.
        let fileBytes =
            (try connection.scalar("PRAGMA page_count")?.int64Value ?? 0)
            * (try connection.scalar("PRAGMA page_size")?.int64Value ?? 0)
        guard header.total >= 0, header.total <= fileBytes else {
            return .unusable(
                reason:
                    "snapshot size mismatch: \(header.total) bytes recorded in a file of \(fileBytes)"
            )
        }
        if let refused = begin(header.total) { return .unusable(reason: refused) }
        // The earlier layout has no rowids to open its parts by: its statement hands the data over.
        let rowids = try !isWithoutRowid()
        let statement = try connection.prepare(
            """
            SELECT part, watermark, format, checksum, total_bytes, \(rowids ? "typeof(data), rowid" : "data") FROM \(quotedTable)
            WHERE name = ? ORDER BY part
            """)
        var received: Int64 = 0
        var expectedPart: Int64 = 0
        var problem: String?
        try connection.withBlobReader(table: tableName, column: "data") { reader in
            try statement.forEachRow([.text(location.key)]) { s in
                guard problem == nil else { return }
                let part = s.int64(at: 0)
                guard part == expectedPart else {
                    problem = "snapshot part \(expectedPart) is missing"
                    return
                }
                guard s.int64(at: 1) == header.watermark, s.int64(at: 2) == header.format,
                    s.int64(at: 3) == header.checksum,
                    s.int64(at: 4) == header.total
                else {
                    problem = "snapshot part \(part) disagrees with part 0"
                    return
                }
                expectedPart += 1
                func accept(_ count: Int) -> Bool {
                    guard received + Int64(count) <= header.total else {
                        problem = "snapshot longer than its recorded size"
                        return false
                    }
                    received += Int64(count)
                    return true
                }
                if rowids {
                    // A blob reader refuses other values (raw SQL can store them): not a part.
                    guard s.value(at: 5) == .text("blob") else {
                        problem = "snapshot part \(part) has no data"
                        return
                    }
                    let count = try reader.open(rowid: s.int64(at: 6))
                    guard accept(count) else { return }
                    try append(count) { offset, buffer in try reader.read(into: buffer, at: offset)
                    }
                } else {
                    try s.withBlob(at: 5) { blob in
                        guard let blob else {
                            problem = "snapshot part \(part) has no data"
                            return
                        }
                        guard accept(blob.count) else { return }
                        try append(blob.count) { offset, buffer in
                            buffer.copyMemory(
                                from: UnsafeRawBufferPointer(
                                    rebasing: blob[offset..<offset + buffer.count]))
                        }
                    }
                }
            }
        }
        if let problem { return .unusable(reason: problem) }
        guard received == header.total else {
            return .unusable(reason: "snapshot truncated: \(received) of \(header.total) bytes")
        }
        return .read(watermark: header.watermark, checksum: header.checksum)
    }

    /// The size part 0 records for the snapshot, to allocate for it before ``stream(begin:append:)``
    /// (which checks it again): 0 when there is none or it is larger than the file holding it.
    func recordedTotal() throws -> Int {
        guard try tableExists() else { return 0 }
        let total =
            try connection.scalar(
                "SELECT total_bytes FROM \(quotedTable) WHERE name = ? AND part = 0",
                [.text(location.key)])?.int64Value
            ?? 0
        let fileBytes =
            (try connection.scalar("PRAGMA page_count")?.int64Value ?? 0)
            * (try connection.scalar("PRAGMA page_size")?.int64Value ?? 0)
        return total >= 0 && total <= fileBytes ? Int(total) : 0
    }

    /// Replaces the stored snapshot with an HNSW graph's bytes; call inside a write transaction.
    func write(_ bytes: [UInt8], watermark: Int64) throws {
        try bytes.withUnsafeBytes {
            try write([$0], checksum: Self.trailerChecksum($0), watermark: watermark)
        }
    }

    /// Replaces the stored snapshot with the concatenation of `segments`; call inside a write
    /// transaction.
    func write(_ segments: [UnsafeRawBufferPointer], checksum: Int64, watermark: Int64) throws {
        try createTable()
        try connection.execute("DELETE FROM \(quotedTable) WHERE name = ?", [.text(location.key)])
        let statement = try connection.prepare(
            """
            INSERT INTO \(quotedTable)(name, part, watermark, format, checksum, total_bytes, data)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        let total = segments.reduce(0) { $0 + $1.count }
        var buffer = [UInt8](repeating: 0, count: min(Self.partBytes, total))
        var segment = 0
        var offset = 0
        var part: Int64 = 0
        var written = 0
        repeat {
            // The next part: up to `partBytes` bytes, taken across segment boundaries.
            let length = min(Self.partBytes, total - written)
            try buffer.withUnsafeMutableBytes { out in
                var filled = 0
                while filled < length {
                    let source = segments[segment]
                    let n = min(length - filled, source.count - offset)
                    if n > 0 {
                        (out.baseAddress! + filled).copyMemory(
                            from: source.baseAddress! + offset, byteCount: n)
                    }
                    filled += n
                    offset += n
                    if offset == source.count {
                        segment += 1
                        offset = 0
                    }
                }
                statement.reset()
                let header: [SQLValue] = [
                    .text(location.key), .integer(part), .integer(watermark), .integer(Self.format),
                    .integer(checksum), .integer(Int64(total)),
                ]
                for (index, value) in header.enumerated() {
                    try statement.bind(value, at: index + 1)
                }
                try statement.bind(bytes: UnsafeRawBufferPointer(rebasing: out[0..<length]), at: 7)
                while try statement.step() {}
            }
            part += 1
            written += length
        } while written < total
    }

    /// Creates the table, or moves a table in the earlier `WITHOUT ROWID` layout (and the other
    /// fields' snapshots in it, which stay readable) into the current one.
    private func createTable() throws {
        let columns = """
            name TEXT NOT NULL, part INTEGER NOT NULL, watermark INTEGER NOT NULL,
            format INTEGER NOT NULL, checksum INTEGER NOT NULL, total_bytes INTEGER NOT NULL,
            data BLOB NOT NULL, UNIQUE (name, part)
            """
        guard try tableExists(), try isWithoutRowid() else {
            try connection.execute(script: "CREATE TABLE IF NOT EXISTS \(quotedTable) (\(columns))")
            return
        }
        let moving = "\"\(tableName)_moving\""
        try connection.execute(
            script: """
                CREATE TABLE \(moving) (\(columns));
                INSERT INTO \(moving) SELECT name, part, watermark, format, checksum, total_bytes, data FROM \(quotedTable);
                DROP TABLE \(quotedTable);
                ALTER TABLE \(moving) RENAME TO \(quotedTable);
                """)
        connection.clearStatementCache()
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
        // Bytes up to a word of the snapshot that is also 8-byte aligned in memory, then two
        // words at a time: the low and high halves of each 64-bit load are summed apart (the
        // compiler turns the loop into vector adds, faster than widening each 32-bit word).
        while i < bytes.count, (position + i) & 3 != 0 || Int(bitPattern: base + i) & 7 != 0 {
            byte()
        }
        let pairs = (bytes.count - i) / 8
        if pairs > 0, (position + i) & 3 == 0 {
            (base + i).withMemoryRebound(to: UInt64.self, capacity: pairs) { words in
                var low: UInt64 = 0
                var high: UInt64 = 0
                for k in 0..<pairs {
                    let pair = UInt64(littleEndian: words[k])
                    low &+= pair & 0xFFFF_FFFF
                    high &+= pair >> 32
                }
                total &+= low &+ high
            }
            i += 8 * pairs
        }
        while i < bytes.count { byte() }
        sum &+= total
    }

    /// The snapshot's own trailer checksum (its last 8 bytes, little-endian), as a signed integer
    /// SQLite can store.
    static func trailerChecksum(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        guard bytes.count >= 8 else { return 0 }
        return Int64(
            littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: Int64.self))
    }
}
