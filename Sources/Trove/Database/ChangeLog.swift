import TroveSQLite

/// The trigger-fed change log every collection has (`<name>_log`), read and pruned the same way
/// for every collection (`DocumentStore`, `DerivedIndexSet`).
struct ChangeLog {
    /// The quoted log table.
    let table: String
    /// The `trove_meta` key holding the highest pruned seq.
    let floorKey: String

    /// Keep the log from growing past this many entries; when it does, the oldest are deleted
    /// down to ``keep`` entries. An index whose watermark falls behind the pruned point reloads
    /// from the table, which is always correct, just slower than replaying the log.
    static let limit: Int64 = 50_000
    static let keep: Int64 = 10_000

    /// The log's newest seq and the highest seq ever pruned from it.
    func state(_ connection: Connection) throws -> (maxSeq: Int64, floor: Int64) {
        let statement = try connection.cachedStatement(
            """
            SELECT coalesce((SELECT max(seq) FROM \(table)), 0),
                   coalesce((SELECT CAST(value AS INTEGER) FROM \(CollectionSchema.metaTable) WHERE key = ?), 0)
            """)
        try statement.bind([.text(floorKey)])
        defer { statement.reset() }
        _ = try statement.step()
        return (statement.int64(at: 0), statement.int64(at: 1))
    }

    /// ``state(_:)`` as two result columns another statement can carry (the log's newest seq,
    /// then the floor), with the floor's key bound to the parameter `keyParameter` (`?2`), so a
    /// write that reads a row first learns whether to prune without a statement of its own.
    func stateColumns(keyParameter: String) -> String {
        """
        coalesce((SELECT max(seq) FROM \(table)), 0), \
        coalesce((SELECT CAST(value AS INTEGER) FROM \(CollectionSchema.metaTable) WHERE key = \(keyParameter)), 0)
        """
    }

    /// Deletes old entries once the log is long; call inside a write transaction.
    func pruneIfNeeded(_ connection: Connection, maxSeq knownMaxSeq: Int64? = nil) throws {
        let (maxSeq, floor) = try state(connection)
        try pruneIfNeeded(connection, maxSeq: knownMaxSeq ?? maxSeq, floor: floor)
    }

    /// The same, with the log's state already read (``stateColumns(keyParameter:)``).
    func pruneIfNeeded(_ connection: Connection, maxSeq newest: Int64, floor: Int64) throws {
        guard newest - floor > Self.limit else { return }
        let newFloor = newest - Self.keep
        try connection.execute("DELETE FROM \(table) WHERE seq <= ?", [.integer(newFloor)])
        try connection.execute(
            "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [.text(floorKey), .text(String(newFloor))])
    }

    /// Adds a marker entry (for a row that cannot exist, so replaying it changes nothing) and
    /// raises the floor to it: every watermark is then below the floor, so every connection and
    /// process rebuilds its in-memory indexes from the table on its next query.
    func raiseFloorPastNewest(_ connection: Connection, rowColumn: String) throws {
        try connection.execute(
            "INSERT INTO \(table)(\(rowColumn), op) VALUES (?, 0)", [.integer(Int64.min)])
        let maxSeq = try state(connection).maxSeq
        try connection.execute(
            "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [.text(floorKey), .text(String(maxSeq))])
    }
}
