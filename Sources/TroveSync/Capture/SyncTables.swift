import Foundation
import TroveSQLite

/// TroveSync's bookkeeping, in the synced database itself (so it commits with the writes it
/// describes). Not dumped: it belongs to this device.
///
/// ```
/// _trove_sync_device(one = 1, device, space, hlc, applying, sealed, pushed, pulled, schema)
///     one row: the device id (random), the space it syncs, the hybrid logical clock, whether
///     an apply is running (the capture triggers stand aside), the last sealed and acknowledged
///     device sequence, the pull cursor and the schema version the queue was last tried with
/// _trove_sync_records(collection, id, cl, pending, missing)
///     each record's life: its causal length cl (odd alive, even deleted; a re-insert adds one)
/// _trove_sync_fields(collection, id, field, cl, hlc, device, value, base_hlc, base_device, pending)
///     each field's winning value and its stamp (cl, hlc, device); base: the stamp the local
///     edit overwrote (how a receiver tells a concurrent change from a sequential one). A rowid
///     table: values are as large as the fields (vectors), too large for a WITHOUT ROWID b-tree
/// _trove_sync_outbox(sequence, payload)       sealed change sets not yet acknowledged
/// _trove_sync_queue(server_sequence, ...)     pulled change sets waiting, with the reason
/// _trove_sync_quarantine(server_sequence, ...) pulled change sets that do not open or decode
/// _trove_sync_state(name, value)              'last_error': the last failure (JSON SyncError);
///                                             'snapshot_refused': the last snapshot refused, and why
/// _trove_sync_writers(device, received, ...)  each writer's sequence numbers received (WriterSequences)
/// _trove_sync_ahead(device, sequence)         numbers received past a gap
/// _trove_sync_conflicts(id, ...)              overwritten concurrent values
/// _trove_sync_collections(name, fingerprint)  what the capture triggers were made for
/// _trove_sync_identity(one = 1, private_key, public_key)  this device's key pair (DeviceIdentity)
/// _trove_sync_keys(epoch, key)                the epoch keys unwrapped for this device
/// ```
enum SyncTables {
    static let device = "\"_trove_sync_device\""
    static let records = "\"_trove_sync_records\""
    static let fields = "\"_trove_sync_fields\""
    static let outbox = "\"_trove_sync_outbox\""
    static let queue = "\"_trove_sync_queue\""
    static let conflicts = "\"_trove_sync_conflicts\""
    static let collections = "\"_trove_sync_collections\""
    static let quarantine = "\"_trove_sync_quarantine\""
    static let state = "\"_trove_sync_state\""
    static let writers = "\"_trove_sync_writers\""
    static let ahead = "\"_trove_sync_ahead\""

    static let createStatements = [
        """
        CREATE TABLE IF NOT EXISTS \(device) (
            one INTEGER PRIMARY KEY CHECK (one = 1), device TEXT NOT NULL, space TEXT NOT NULL,
            hlc INTEGER NOT NULL DEFAULT 0, applying INTEGER NOT NULL DEFAULT 0,
            sealed INTEGER NOT NULL DEFAULT 0, pushed INTEGER NOT NULL DEFAULT 0,
            pulled INTEGER NOT NULL DEFAULT 0, schema INTEGER NOT NULL DEFAULT 0)
        """,
        """
        CREATE TABLE IF NOT EXISTS \(records) (
            collection TEXT NOT NULL, id NOT NULL, cl INTEGER NOT NULL,
            pending INTEGER NOT NULL DEFAULT 0, missing INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (collection, id)) WITHOUT ROWID
        """,
        "CREATE INDEX IF NOT EXISTS \"_trove_sync_records_pending\" ON \(records)(pending) WHERE pending = 1",
        """
        CREATE TABLE IF NOT EXISTS \(fields) (
            collection TEXT NOT NULL, id NOT NULL, field TEXT NOT NULL,
            cl INTEGER NOT NULL, hlc INTEGER NOT NULL, device TEXT NOT NULL, value,
            base_hlc INTEGER, base_device TEXT, pending INTEGER NOT NULL DEFAULT 0,
            UNIQUE (collection, id, field))
        """,
        "CREATE INDEX IF NOT EXISTS \"_trove_sync_fields_pending\" ON \(fields)(pending) WHERE pending = 1",
        "CREATE TABLE IF NOT EXISTS \(outbox) (sequence INTEGER PRIMARY KEY, payload BLOB NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS \(queue) (
            server_sequence INTEGER PRIMARY KEY, device TEXT NOT NULL, device_sequence INTEGER NOT NULL,
            payload BLOB NOT NULL, reason TEXT NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS \(conflicts) (
            id INTEGER PRIMARY KEY, collection TEXT NOT NULL, record NOT NULL, field TEXT NOT NULL, value,
            device TEXT NOT NULL, hlc INTEGER NOT NULL, winner_device TEXT NOT NULL, winner_hlc INTEGER NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS \(collections) (name TEXT PRIMARY KEY, fingerprint TEXT NOT NULL)",
        // The payload is kept: a malformed one is retried by later versions.
        """
        CREATE TABLE IF NOT EXISTS \(quarantine) (
            server_sequence INTEGER PRIMARY KEY, device TEXT NOT NULL, device_sequence INTEGER NOT NULL,
            payload BLOB NOT NULL, reason TEXT NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS \(state) (name TEXT PRIMARY KEY, value) WITHOUT ROWID",
        """
        CREATE TABLE IF NOT EXISTS \(writers) (
            device TEXT PRIMARY KEY, received INTEGER NOT NULL, highest INTEGER NOT NULL, gap_since REAL) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS \(ahead) (
            device TEXT NOT NULL, sequence INTEGER NOT NULL, PRIMARY KEY (device, sequence)) WITHOUT ROWID
        """,
    ]

    /// The space `connection`'s database syncs, nil before its first sync.
    static func boundSpace(_ connection: Connection) throws -> String? {
        guard
            try connection.scalar(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_trove_sync_device'")
                != nil
        else { return nil }
        return try connection.scalar("SELECT space FROM \(device)")?.stringValue
    }

    /// Creates the tables when missing and returns this database's device id, binding the
    /// database to `space` on first use. Call inside a write transaction.
    ///
    /// - Throws: ``SyncError/spaceMismatch(bound:requested:)`` when it syncs another space.
    static func prepare(_ connection: Connection, space: String) throws -> String {
        let counting =
            try connection.scalar(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_trove_sync_writers'")
            != nil
        for statement in createStatements { try connection.execute(statement) }
        // A device that pulled before writers were counted takes each writer's first number it
        // sees as where counting starts (it has the earlier ones, uncounted).
        if !counting, try (connection.scalar("SELECT pulled FROM \(device)")?.int64Value ?? 0) > 0 {
            try connection.execute(
                "INSERT OR IGNORE INTO \(state)(name, value) VALUES ('writers_baseline', 1)")
        }
        if let row = try connection.query("SELECT device, space FROM \(device)").first {
            let bound = row.string(at: 1) ?? ""
            guard bound == space else {
                throw SyncError.spaceMismatch(bound: bound, requested: space)
            }
            return row.string(at: 0) ?? ""
        }
        // 128 random bits, hex: opaque, never derived from user data.
        let id = try AuthenticatedEncryption.randomBytes(16).map { String(format: "%02x", $0) }
            .joined()
        try connection.execute(
            "INSERT INTO \(device)(one, device, space) VALUES (1, ?, ?)", [.text(id), .text(space)])
        return id
    }

    /// The hybrid logical clock's next tick, in SQL (the capture triggers run it, so raw SQL and
    /// migrations are stamped like API writes): the wall clock in milliseconds shifted left 16
    /// bits, or one more than the last stamp when the clock did not move forward.
    static let tick = """
        UPDATE \(device) SET hlc = max(hlc + 1, CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) * 65536)
        """

    /// An HLC stamp as a date (its wall-clock part).
    static func date(ofHLC hlc: Int64) -> Date {
        Date(timeIntervalSince1970: Double(hlc >> 16) / 1000)
    }
}
