import Foundation
import TroveSQLite

/// Which sequence numbers of each writer device this device has received, so that a change set
/// the server withholds (a gap in a writer's numbers) is noticed instead of silently missed.
///
/// A writer's change sets enter the feed in its sequence order (it pushes its outbox in order,
/// and each space's feed commits in order), so a received number above the next expected one
/// means the ones between are missing: they are listed in ``SyncStatus/missing`` until they
/// arrive, and the device does not call itself in sync meanwhile. A quarantined change set, or
/// one queued for later, counts as received: it arrived.
///
/// `_trove_sync_writers(device, received, highest, gap_since)`: every number up to `received`
/// arrived; `highest` is the largest seen; `gap_since` when the current gap was first seen.
/// `_trove_sync_ahead(device, sequence)`: numbers above `received` that arrived.
enum WriterSequences {
    /// Notes that change set `sequence` of `writer` arrived. Call inside the transaction that
    /// applies, queues or quarantines it.
    static func note(_ writer: String, _ sequence: Int64, on connection: Connection) throws {
        let row = try connection.cachedStatement(
            "SELECT received, highest FROM \(SyncTables.writers) WHERE device = ?"
        ).rows([.text(writer)]).first
        guard let row else {
            // A device that synced before this tracking existed has received earlier change sets
            // it never counted: it starts counting at the first one it sees.
            let baseline =
                try connection.scalar(
                    "SELECT 1 FROM \(SyncTables.state) WHERE name = 'writers_baseline'") != nil
            let received = baseline || sequence == 1 ? sequence : 0
            try connection.cachedStatement(
                """
                INSERT INTO \(SyncTables.writers)(device, received, highest, gap_since)
                VALUES (?, ?, ?, CASE WHEN ? > ? THEN ? END)
                """
            ).execute([
                .text(writer), .integer(received), .integer(sequence), .integer(sequence),
                .integer(received),
                .real(Date().timeIntervalSince1970),
            ])
            if received < sequence {
                try connection.cachedStatement(
                    "INSERT OR IGNORE INTO \(SyncTables.ahead)(device, sequence) VALUES (?, ?)"
                ).execute([.text(writer), .integer(sequence)])
            }
            return
        }
        let received = row.int64(at: 0) ?? 0
        guard sequence > received else { return }
        try connection.cachedStatement(
            "INSERT OR IGNORE INTO \(SyncTables.ahead)(device, sequence) VALUES (?, ?)"
        ).execute([.text(writer), .integer(sequence)])
        try connection.cachedStatement(
            "UPDATE \(SyncTables.writers) SET highest = max(highest, ?) WHERE device = ?"
        ).execute([.integer(sequence), .text(writer)])
        try settle(writer, on: connection)
    }

    /// Moves `received` over the numbers that arrived, and sets or clears the gap's time.
    private static func settle(_ writer: String, on connection: Connection) throws {
        var received =
            try connection.cachedStatement(
                "SELECT received FROM \(SyncTables.writers) WHERE device = ?"
            ).rows([.text(writer)]).first?.int64(at: 0) ?? 0
        let next = try connection.cachedStatement(
            "SELECT 1 FROM \(SyncTables.ahead) WHERE device = ? AND sequence = ?")
        while try !next.rows([.text(writer), .integer(received + 1)]).isEmpty { received += 1 }
        try connection.cachedStatement(
            "DELETE FROM \(SyncTables.ahead) WHERE device = ? AND sequence <= ?"
        ).execute([.text(writer), .integer(received)])
        try connection.cachedStatement(
            """
            UPDATE \(SyncTables.writers) SET received = ?, highest = max(highest, ?),
                gap_since = CASE WHEN max(highest, ?) > ? THEN coalesce(gap_since, ?) END
            WHERE device = ?
            """
        ).execute([
            .integer(received), .integer(received), .integer(received), .integer(received),
            .real(Date().timeIntervalSince1970), .text(writer),
        ])
    }

    /// Every writer's number received without a gap.
    static func received(_ connection: Connection) throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for row in try connection.query("SELECT device, received FROM \(SyncTables.writers)") {
            result[row.string(at: 0) ?? ""] = row.int64(at: 1) ?? 0
        }
        return result
    }

    /// Takes a snapshot's counts: a writer's numbers up to its count there arrived (in the snapshot).
    static func merge(_ writers: [String: Int64], on connection: Connection) throws {
        for (writer, received) in writers {
            try connection.cachedStatement(
                """
                INSERT INTO \(SyncTables.writers)(device, received, highest) VALUES (?, ?, ?)
                ON CONFLICT(device) DO UPDATE SET received = max(received, excluded.received),
                    highest = max(highest, excluded.received)
                """
            ).execute([.text(writer), .integer(received), .integer(received)])
            try settle(writer, on: connection)
        }
    }

    /// The writers with missing change sets.
    static func missing(_ connection: Connection) throws -> [MissingChangeSets] {
        try connection.query(
            """
            SELECT w.device, w.received, w.highest, w.gap_since,
                   (SELECT min(a.sequence) FROM \(SyncTables.ahead) a WHERE a.device = w.device)
            FROM \(SyncTables.writers) w WHERE w.highest > w.received ORDER BY w.device
            """
        ).map { row in
            let received = row.int64(at: 1) ?? 0
            return MissingChangeSets(
                device: row.string(at: 0) ?? "", firstMissing: received + 1,
                lastMissing: (row.int64(at: 4) ?? (row.int64(at: 2) ?? 0) + 1) - 1,
                highestReceived: row.int64(at: 2) ?? 0,
                since: Date(
                    timeIntervalSince1970: row.double(at: 3) ?? Date().timeIntervalSince1970))
        }
    }
}
