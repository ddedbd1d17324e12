import Foundation
import Trove
import TroveSQLite

/// One device's membership in a sync space: its synced collections' changes go out, sealed with
/// the space's key, through a ``SyncTransport``; other devices' changes come in and merge.
///
/// Every local change of a synced collection (API writes, raw SQL, migrations) is recorded at
/// field level in the writing transaction, stamped with a hybrid logical clock and this device's
/// id. ``push()`` seals what is pending into change sets and sends them; ``pull()`` fetches the
/// space's new change sets, opens them and merges them field by field: the write with the
/// highest (clock, device) wins on every device whatever the order they arrive in, and a local
/// value that loses to a concurrent one is kept in ``conflicts()``. Applied changes reach every
/// index (full text, vectors, places, links), so a note from another device is found by hybrid
/// search right after the pull, without embedding it again.
///
/// ```swift
/// let database = try Database(path: "notes.trove")
/// let notes = try await database.documents("notes", schema: DocumentSchema(id: .uuid, fields: [.text("body")]))
/// let sync = try await SyncSpace(
///     database: database, space: "notes", key: SyncKey(passphrase: passphrase, space: "notes"),
///     transport: PostgresTransport(url: serverURL), collections: ["notes"])
/// try await sync.push()
/// try await sync.pull()
/// // or keep it in sync until the task is cancelled:
/// try await sync.run()
/// ```
public actor SyncSpace {
    /// The synced database.
    public nonisolated let database: Database
    /// The space's name (the same on every device).
    public nonisolated let space: String
    /// This device's id in the space (random, kept in the database).
    public nonisolated let device: String
    /// The synced collections (their links sync too).
    public nonisolated let collections: [String]
    /// What carries the sealed change sets.
    public nonisolated let transport: any SyncTransport
    /// The keys of the space's epochs this device holds, and the epoch it seals under.
    var keys: SpaceKeys
    /// This device's X25519 key pair (kept in the database).
    nonisolated let identity: DeviceIdentity
    /// Whether this instance learnt the space's key epoch and this device's membership (before
    /// the first push or pull; a push asks the server for the epoch again).
    var membershipChecked = false

    /// The synced tables by name (the collections, and `_trove_edges` for their links).
    var captured: [String: CapturedTable]
    /// The last status read (after every push, pull, apply or failure).
    public private(set) var status: SyncStatus
    nonisolated let broadcaster = StatusBroadcaster()
    /// Whether ``key`` was proved to be the space's (once per instance: the key check is
    /// fetched before the first push or pull, not before every one).
    var keyVerified = false
    /// Whether a pull of this instance asked the transport for its snapshot (once per instance
    /// when nothing new came: a device back after the horizon may find the whole feed pruned).
    var snapshotChecked = false
    /// The cursor last reported to the transport, and when.
    var lastReport: (cursor: Int64, at: ContinuousClock.Instant)?
    /// When ``run(pollInterval:initialBackoff:maximumBackoff:)`` last asked whether a snapshot is
    /// due (at most every ten minutes: the question reads the feed's tail on the server).
    var lastSnapshotCheck: ContinuousClock.Instant?

    /// Change sets per pull request, and per push request (with a byte budget: a change set holds
    /// up to 2,000 records, and a push of a thousand large ones would not fit in memory or in
    /// PostgreSQL's 1 GB limit for one value). From `trove-bench sync-postgres`: a push of 1,000
    /// small change sets moves about three times as many per second as a push of 100; pulls of
    /// 200, 500 and 1,000 did not differ beyond the noise.
    static let pullBatch = 200
    static let pushBatch = 1_000
    static let pushBytes = 16 << 20
    /// Payload bytes per pull request (with a transport that takes a byte budget): a page of 200
    /// change sets of up to 2,000 records each, vectors included, could otherwise be gigabytes.
    /// A change set larger than this comes alone.
    static let pullBytes = 16 << 20

    /// When ``run(pollInterval:initialBackoff:maximumBackoff:)`` and ``snapshotIfDue()`` upload a
    /// snapshot; ``SnapshotPolicy/standard`` unless set with ``setSnapshotPolicy(_:)``.
    public internal(set) var snapshotPolicy = SnapshotPolicy.standard

    /// Joins `database` to `space`: prepares the sync tables (the first time: a new device id),
    /// installs change capture on each collection and records the records already there as
    /// local changes to push.
    ///
    /// - Parameters:
    ///   - database: the device's database.
    ///   - space: the space's name, the same on every device (1-200 bytes). A database syncs one
    ///     space.
    ///   - key: the space's key (``SyncKey``, from the passphrase), the same on every device; nil
    ///     for a device added by a member (``addDevice(invitation:)``), which keeps the keys it
    ///     was given in the database.
    ///   - transport: what carries change sets (PostgreSQL, ``InProcessTransport``, an app's own).
    ///   - collections: the names of the collections to sync (documents, models or search
    ///     collections), each with UUID or String ids; their links sync with them.
    /// - Throws: ``SyncError/int64IDs(collection:)`` for a collection with `Int64` ids (nothing
    ///   is written), ``SyncError/unknownCollection(_:)``, ``SyncError/invalidSpace(_:reason:)``,
    ///   ``SyncError/spaceMismatch(bound:requested:)``.
    public init(
        database: Database, space: String, key: SyncKey?, transport: any SyncTransport,
        collections: [String]
    ) async throws {
        guard !space.isEmpty, space.utf8.count <= 200 else {
            throw SyncError.invalidSpace(space, reason: "a space name has 1 to 200 bytes")
        }
        let tables = try await Self.capturedTables(database: database, collections: collections)
        let (device, identity, stored) = try await database.syncWrite { connection in
            let device = try SyncTables.prepare(connection, space: space)
            for table in tables.values { try ChangeCapture.install(table, on: connection) }
            return (
                device, try DeviceIdentity.load(connection, device: device),
                try DeviceIdentity.storedKeys(connection)
            )
        }
        self.database = database
        self.space = space
        var held = stored
        // The passphrase's key is epoch 0's; a wrong one is refused by the key check.
        if let key { held[0] = key }
        keys = SpaceKeys(byEpoch: held, current: held.keys.max() ?? 0)
        self.identity = identity
        self.transport = transport
        self.collections = collections
        self.device = device
        captured = tables
        status = try await Self.readStatus(database, device: device)
    }

    /// The tables to capture: each collection (refusing `Int64` ids before anything is
    /// written) and the links among them.
    static func capturedTables(database: Database, collections: [String]) async throws -> [String:
        CapturedTable]
    {
        var tables: [String: CapturedTable] = [:]
        for name in collections {
            let shape: SyncedCollectionShape
            do {
                shape = try await database.syncedCollectionShape(name)
            } catch let error as TroveError {
                if case .collectionNotFound = error { throw SyncError.unknownCollection(name) }
                throw error
            }
            guard shape.idKind != .int64 else { throw SyncError.int64IDs(collection: name) }
            tables[name] = CapturedTable(shape: shape)
        }
        let names = Array(tables.keys)
        let (links, uniqueKeys) = try await database.syncWrite { [tables] connection in
            let links =
                try connection.scalar(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                    [.text(CapturedTable.linksName)])
                != nil
            var uniqueKeys: [String: [[String]]] = [:]
            for name in names {
                uniqueKeys[name] = try Materializer.readUniqueKeys(
                    of: tables[name]!, on: connection)
            }
            return (links, uniqueKeys)
        }
        for (name, keys) in uniqueKeys { tables[name]?.uniqueKeys = keys }
        if links { tables[CapturedTable.linksName] = CapturedTable(linksFrom: collections) }
        return tables
    }

    // MARK: Push

    /// Seals every pending local change into change sets in the outbox (a push's first half);
    /// returns how many. The captured tables and keys must be current (``prepare()``, a key
    /// check and the membership first).
    func sealPending() async throws -> Int {
        let schemaVersion = try await database.syncSchemaVersion()
        let (captured, keys, space, device) = (captured, keys, space, device)
        return try await database.syncWrite { connection in
            try Outbox.sealPending(
                on: connection, captured: captured, keys: keys, space: space, device: device,
                schemaVersion: schemaVersion)
        }
    }

    /// Seals every pending local change into change sets and sends every unacknowledged one.
    ///
    /// A change set leaves the outbox only once the transport acknowledged it; when sending
    /// fails it stays, and the next push sends the same sealed bytes under the same sequence
    /// number (the server stores it once).
    ///
    /// Before anything is sealed or sent, the key is checked against the space's key check
    /// (``verifyKey()``): a wrong key sends nothing.
    ///
    /// - Returns: how many change sets the server acknowledged.
    /// - Throws: ``SyncError/wrongKey(space:)`` (nothing sealed or sent; the changes stay
    ///   pending), ``SyncError/transport(_:)`` (the outbox keeps everything); database errors.
    @discardableResult
    public func push() async throws -> Int {
        do {
            try await verifyKey()
            // Asked before every push: what is sealed now must be under the newest epoch.
            try await refreshMembership(force: true)
            try await prepare()
            _ = try await sealPending()
            var pushed = 0
            var resealed = false
            while true {
                let batch = try await database.syncWrite { connection in
                    try Outbox.unacknowledged(
                        on: connection, device: device, limit: Self.pushBatch, bytes: Self.pushBytes
                    )
                }
                guard let last = batch.last else { break }
                let acknowledged: [Int64]
                do {
                    acknowledged = try await transport.push(batch, space: space)
                } catch let error where Self.isStaleKeyEpoch(error) && !resealed {
                    // A device was removed since this push asked for the epoch: seal the
                    // outbox again under the new one and send that.
                    resealed = true
                    try await refreshMembership(force: true)
                    continue
                } catch {
                    throw Self.transportError(error)
                }
                guard acknowledged.count == batch.count else {
                    throw SyncError.transport(
                        "the server acknowledged \(acknowledged.count) of \(batch.count) change sets"
                    )
                }
                try await database.syncWrite { connection in
                    try Outbox.acknowledge(upTo: last.deviceSequence, on: connection)
                }
                pushed += batch.count
            }
            try await refreshStatus(error: nil)
            return pushed
        } catch {
            try? await refreshStatus(error: Self.syncError(error))
            throw error
        }
    }

    // MARK: Pull

    /// Fetches the space's new change sets and applies them, each in one transaction with the
    /// pull cursor; change sets this device cannot apply yet are queued (``SyncStatus/queued``)
    /// and retried after each migration.
    ///
    /// The key is checked first (``verifyKey()``), so a change set that then does not open (its
    /// bytes altered, or sealed with a key that is not the space's) is at fault itself: it is
    /// quarantined (``SyncStatus/quarantined``), nothing of it is applied, and the change sets
    /// after it are applied as usual.
    ///
    /// - Returns: how many change sets were applied (queued ones included once applied).
    /// - Throws: ``SyncError/wrongKey(space:)`` (nothing applied, nothing quarantined),
    ///   ``SyncError/embeddingModelMismatch(collection:field:local:remote:)`` after applying
    ///   the rest (that change set stays queued), ``SyncError/transport(_:)``.
    @discardableResult
    public func pull() async throws -> Int {
        do {
            try await verifyKey()
            try await refreshMembership(force: false)
            var applied = try await prepare()
            var learntEpoch = false
            var embeddingError: SyncError?
            var checkedSnapshot = false
            var cursor: Int64 = 0
            while true {
                cursor = try await database.syncWrite { connection in
                    try connection.scalar("SELECT pulled FROM \(SyncTables.device)")?.int64Value
                        ?? 0
                }
                // A new device starts from the newest snapshot when there is one.
                if !checkedSnapshot, cursor == 0 {
                    (checkedSnapshot, snapshotChecked) = (true, true)
                    if try await joinFromSnapshot(cursor: cursor) { continue }
                }
                let batch: [SealedChangeSet]
                do {
                    if let snapshots = transport as? any SnapshotTransport {
                        batch = try await snapshots.pull(
                            space: space, after: cursor, limit: Self.pullBatch,
                            maxBytes: Self.pullBytes)
                    } else {
                        batch = try await transport.pull(
                            space: space, after: cursor, limit: Self.pullBatch)
                    }
                } catch {
                    throw Self.transportError(error)
                }
                // A device whose next change sets are gone from the feed starts again from the
                // newest snapshot: at every gap, not once per pull, since a device that has
                // reported no cursor yet (new, or just joined from a snapshot) holds nothing back
                // and the feed can be pruned past it between two pages. Applying the page after
                // the gap would move the cursor past the pruned change sets for good. Once per
                // instance also when nothing came: the whole tail may be gone.
                if (batch.first?.serverSequence ?? cursor + 1) > cursor + 1
                    || (batch.isEmpty && !snapshotChecked)
                {
                    (checkedSnapshot, snapshotChecked) = (true, true)
                    if try await joinFromSnapshot(cursor: cursor) { continue }
                }
                guard !batch.isEmpty else { break }
                let inbox = try await makeInbox()
                let outcome = try await database.syncApply { writer in
                    let box = inbox(writer)
                    let outcome = try box.receive(batch)
                    try box.merger.settleReferences()
                    return outcome
                }
                applied += outcome.applied
                // A change set of an epoch that began since: learn it (once per pull), or stop
                // (this device was removed).
                if case .missingEpochKey = outcome.failure, !learntEpoch {
                    learntEpoch = true
                    try await refreshMembership(force: true)
                    continue
                }
                if let failure = outcome.failure { throw failure }
                if embeddingError == nil { embeddingError = outcome.embeddingError }
                // With a byte budget a short page does not mean the end: pull until one is empty.
                if batch.count < Self.pullBatch, !(transport is any SnapshotTransport) { break }
            }
            // The cursor, when it moved or an hour after the last report (a device's say in
            // pruning lasts the horizon, 90 days by default): one write per pull that brought
            // something, not per poll.
            if let snapshots = transport as? any SnapshotTransport,
                lastReport.map({ $0.cursor != cursor || $0.at.duration(to: .now) > .seconds(3_600) }
                ) ?? true
            {
                do {
                    _ = try await snapshots.reportCursor(cursor, device: device, space: space)
                } catch {
                    throw Self.transportError(error)
                }
                lastReport = (cursor, .now)
            }
            try await refreshStatus(error: embeddingError)
            if let embeddingError { throw embeddingError }
            return applied
        } catch {
            try? await refreshStatus(error: Self.syncError(error))
            throw error
        }
    }

    // MARK: Failures

    /// Records a failure of a step around sync (creating the space on the server, say) as
    /// ``SyncStatus/lastError``, as a failed push or pull records its own: kept in the database
    /// until the next successful push or pull.
    ///
    /// - Parameter error: the failure (a ``SyncError``, or any error, kept as its description).
    public func recordFailure(_ error: any Error) async throws {
        try await refreshStatus(
            error: (error as? SyncError) ?? .transport(String(describing: error)))
    }

    /// The space `database` syncs, nil before its first ``SyncSpace`` (a database syncs one space
    /// and keeps its name).
    ///
    /// - Parameter database: a database.
    /// - Returns: the space's name.
    public static func boundSpace(of database: Database) async throws -> String? {
        try await database.syncWrite { connection in try SyncTables.boundSpace(connection) }
    }

    /// An inbox for one write transaction (built outside it: the schema version is read here).
    func makeInbox() async throws -> @Sendable (SyncRowWriter) -> Inbox {
        let schemaVersion = try await database.syncSchemaVersion()
        let (captured, keys, space, device) = (captured, keys, space, device)
        return { writer in
            Inbox(
                connection: writer.connection,
                merger: Merger(
                    connection: writer.connection, captured: captured,
                    localSchemaVersion: schemaVersion,
                    rowWriter: writer),
                keys: keys, space: space, device: device)
        }
    }

    /// Before a push or pull: follows the collections' schemas (a migration may have added
    /// columns or rebuilt a table), applies the queued change sets that fit now, then brings
    /// change capture up to date, recording what a migration changed unseen. Queued change sets
    /// go first, so a migration's defaults never overwrite newer values waiting in the queue.
    /// Returns how many queued change sets were applied.
    @discardableResult
    func prepare() async throws -> Int {
        captured = try await Self.capturedTables(database: database, collections: collections)
        let inbox = try await makeInbox()
        let tables = captured
        return try await database.syncApply { writer in
            let box = inbox(writer)
            let applied = try box.retryQuarantine() + box.retryQueue()
            try box.merger.settleReferences()
            for table in tables.values { try ChangeCapture.install(table, on: writer.connection) }
            return applied
        }
    }

    // MARK: Status

    /// Every new status from now on (after each push, pull, apply and failure), starting with the
    /// current one. Each call makes an independent stream; it ends when the sync space is
    /// released.
    public nonisolated var statuses: AsyncStream<SyncStatus> {
        broadcaster.subscribe()
    }

    /// Reads the status again (local writes since the last push change ``SyncStatus/pendingChanges``).
    ///
    /// - Returns: the current status, also published to ``statuses``.
    @discardableResult
    public func refreshStatus() async throws -> SyncStatus {
        try await refreshStatus(error: status.lastError)
        return status
    }

    func refreshStatus(error: SyncError?) async throws {
        // Kept in the database, in the transaction that reads the status back, so another
        // process (`trove sync status`) sees why the last sync failed.
        let encoded = try error.map {
            String(decoding: try JSONEncoder().encode($0), as: UTF8.self)
        }
        let device = device
        let next = try await database.syncWrite { connection in
            if let encoded {
                try connection.execute(
                    "INSERT OR REPLACE INTO \(SyncTables.state)(name, value) VALUES ('last_error', ?)",
                    [.text(encoded)]
                )
            } else {
                try connection.execute("DELETE FROM \(SyncTables.state) WHERE name = 'last_error'")
            }
            return try Self.readStatus(connection, device: device)
        }
        status = next
        broadcaster.publish(next)
    }

    static func readStatus(_ database: Database, device: String) async throws -> SyncStatus {
        try await database.syncWrite { connection in try readStatus(connection, device: device) }
    }

    static func readStatus(_ connection: Connection, device: String) throws -> SyncStatus {
        let row = try connection.query(
            """
            SELECT (SELECT count(*) FROM \(SyncTables.records) WHERE pending = 1),
                   (SELECT count(*) FROM \(SyncTables.outbox)),
                   pushed, pulled, (SELECT count(*) FROM \(SyncTables.conflicts))
            FROM \(SyncTables.device)
            """
        ).first
        let queued = try connection.query(
            "SELECT server_sequence, device, device_sequence, reason FROM \(SyncTables.queue) ORDER BY server_sequence"
        ).map {
            QueuedChangeSet(
                serverSequence: $0.int64(at: 0) ?? 0, device: $0.string(at: 1) ?? "",
                deviceSequence: $0.int64(at: 2) ?? 0,
                reason: QueueReasonCoding.decode($0.string(at: 3) ?? ""))
        }
        let quarantined = try connection.query(
            "SELECT server_sequence, device, device_sequence, reason FROM \(SyncTables.quarantine) ORDER BY server_sequence"
        ).map {
            QuarantinedChangeSet(
                serverSequence: $0.int64(at: 0) ?? 0, device: $0.string(at: 1) ?? "",
                deviceSequence: $0.int64(at: 2) ?? 0,
                reason: QuarantineReasonCoding.decode($0.string(at: 3) ?? ""))
        }
        // An error this version cannot decode (written by a later one) reads as none.
        let lastError = try connection.scalar(
            "SELECT value FROM \(SyncTables.state) WHERE name = 'last_error'")?
            .stringValue.flatMap { try? JSONDecoder().decode(SyncError.self, from: Data($0.utf8)) }
        let refused = try connection.scalar(
            "SELECT value FROM \(SyncTables.state) WHERE name = 'snapshot_refused'")?
            .stringValue.map { String($0.drop { $0 != "\t" }.dropFirst()) }
        return SyncStatus(
            device: device, pendingChanges: row?.int(at: 0) ?? 0,
            unacknowledgedChangeSets: row?.int(at: 1) ?? 0,
            lastPushedSequence: row?.int64(at: 2) ?? 0, lastPulledSequence: row?.int64(at: 3) ?? 0,
            queued: queued,
            quarantined: quarantined, conflicts: row?.int(at: 4) ?? 0, lastError: lastError,
            missing: try WriterSequences.missing(connection), refusedSnapshot: refused,
            keyEpoch: try DeviceIdentity.storedKeys(connection).keys.max() ?? 0)
    }

    /// Whether a transport refused what it was sent for being sealed under an older key epoch.
    static func isStaleKeyEpoch(_ error: any Error) -> Bool {
        if case .staleKeyEpoch? = error as? PostgresError { return true }
        if case .staleKeyEpoch? = error as? SyncError { return true }
        return false
    }

    static func transportError(_ error: any Error) -> SyncError {
        (error as? SyncError) ?? .transport(String(describing: error))
    }

    static func syncError(_ error: any Error) -> SyncError {
        (error as? SyncError) ?? .database(String(describing: error))
    }
}
