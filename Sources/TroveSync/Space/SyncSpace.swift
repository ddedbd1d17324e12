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
    nonisolated let key: SyncKey

    /// The synced tables by name (the collections, and `_trove_edges` for their links).
    var captured: [String: CapturedTable]
    /// The last status read (after every push, pull, apply or failure).
    public private(set) var status: SyncStatus
    nonisolated let broadcaster = StatusBroadcaster()

    /// Change sets per pull request, and per push request (with a byte budget: a change set holds
    /// up to 2,000 records, and a push of a thousand large ones would not fit in memory or in
    /// PostgreSQL's 1 GB limit for one value). From `trove-bench sync-postgres`: a push of 1,000
    /// small change sets moves about three times as many per second as a push of 100; pulls of
    /// 200, 500 and 1,000 did not differ beyond the noise.
    static let pullBatch = 200
    static let pushBatch = 1_000
    static let pushBytes = 16 << 20

    /// Joins `database` to `space`: prepares the sync tables (the first time: a new device id),
    /// installs change capture on each collection and records the records already there as
    /// local changes to push.
    ///
    /// - Parameters:
    ///   - database: the device's database.
    ///   - space: the space's name, the same on every device (1-200 bytes). A database syncs one
    ///     space.
    ///   - key: the space's key (``SyncKey``), the same on every device.
    ///   - transport: what carries change sets (PostgreSQL, ``InProcessTransport``, an app's own).
    ///   - collections: the names of the collections to sync (documents, models or search
    ///     collections), each with UUID or String ids; their links sync with them.
    /// - Throws: ``SyncError/int64IDs(collection:)`` for a collection with `Int64` ids (nothing
    ///   is written), ``SyncError/unknownCollection(_:)``, ``SyncError/invalidSpace(_:reason:)``,
    ///   ``SyncError/spaceMismatch(bound:requested:)``.
    public init(
        database: Database, space: String, key: SyncKey, transport: any SyncTransport, collections: [String]
    ) async throws {
        guard !space.isEmpty, space.utf8.count <= 200 else {
            throw SyncError.invalidSpace(space, reason: "a space name has 1 to 200 bytes")
        }
        let tables = try await Self.capturedTables(database: database, collections: collections)
        let device = try await database.syncWrite { connection in
            let device = try SyncTables.prepare(connection, space: space)
            for table in tables.values { try ChangeCapture.install(table, on: connection) }
            return device
        }
        self.database = database
        self.space = space
        self.key = key
        self.transport = transport
        self.collections = collections
        self.device = device
        captured = tables
        status = try await Self.readStatus(database, device: device)
    }

    /// The tables to capture: each collection (refusing `Int64` ids before anything is
    /// written) and the links among them.
    static func capturedTables(database: Database, collections: [String]) async throws -> [String: CapturedTable] {
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
        let links = try await database.syncWrite { connection in
            try connection.scalar("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(CapturedTable.linksName)]) != nil
        }
        if links { tables[CapturedTable.linksName] = CapturedTable(linksFrom: collections) }
        return tables
    }

    // MARK: Push

    /// Seals every pending local change into change sets and sends every unacknowledged one.
    ///
    /// A change set leaves the outbox only once the transport acknowledged it; when sending
    /// fails it stays, and the next push sends the same sealed bytes under the same sequence
    /// number (the server stores it once).
    ///
    /// - Returns: how many change sets the server acknowledged.
    /// - Throws: ``SyncError/transport(_:)`` (the outbox keeps everything); database errors.
    @discardableResult
    public func push() async throws -> Int {
        do {
            try await prepare()
            let schemaVersion = try await database.syncSchemaVersion()
            let (captured, key, space, device) = (captured, key, space, device)
            _ = try await database.syncWrite { connection in
                try Outbox.sealPending(
                    on: connection, captured: captured, key: key, space: space, device: device, schemaVersion: schemaVersion)
            }
            var pushed = 0
            while true {
                let batch = try await database.syncWrite { connection in
                    try Outbox.unacknowledged(on: connection, device: device, limit: Self.pushBatch, bytes: Self.pushBytes)
                }
                guard let last = batch.last else { break }
                let acknowledged: [Int64]
                do {
                    acknowledged = try await transport.push(batch, space: space)
                } catch {
                    throw Self.transportError(error)
                }
                guard acknowledged.count == batch.count else {
                    throw SyncError.transport("the server acknowledged \(acknowledged.count) of \(batch.count) change sets")
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
    /// - Returns: how many change sets were applied (queued ones included once applied).
    /// - Throws: ``SyncError/cannotOpen(device:deviceSequence:)`` (wrong key or altered bytes:
    ///   nothing of that change set or after it is applied, the cursor stays before it),
    ///   ``SyncError/malformedChangeSet(device:deviceSequence:reason:)``,
    ///   ``SyncError/embeddingModelMismatch(collection:field:local:remote:)`` after applying
    ///   the rest (that change set stays queued), ``SyncError/transport(_:)``.
    @discardableResult
    public func pull() async throws -> Int {
        do {
            var applied = try await prepare()
            var embeddingError: SyncError?
            while true {
                let cursor = try await database.syncWrite { connection in
                    try connection.scalar("SELECT pulled FROM \(SyncTables.device)")?.int64Value ?? 0
                }
                let batch: [SealedChangeSet]
                do {
                    batch = try await transport.pull(space: space, after: cursor, limit: Self.pullBatch)
                } catch {
                    throw Self.transportError(error)
                }
                guard !batch.isEmpty else { break }
                let inbox = try await makeInbox()
                let outcome = try await database.syncApply { writer in try inbox(writer).receive(batch) }
                applied += outcome.applied
                if let failure = outcome.failure { throw failure }
                if embeddingError == nil { embeddingError = outcome.embeddingError }
                if batch.count < Self.pullBatch { break }
            }
            try await refreshStatus(error: embeddingError)
            if let embeddingError { throw embeddingError }
            return applied
        } catch {
            try? await refreshStatus(error: Self.syncError(error))
            throw error
        }
    }

    /// An inbox for one write transaction (built outside it: the schema version is read here).
    private func makeInbox() async throws -> @Sendable (SyncRowWriter) -> Inbox {
        let schemaVersion = try await database.syncSchemaVersion()
        let (captured, key, space, device) = (captured, key, space, device)
        return { writer in
            Inbox(
                connection: writer.connection,
                merger: Merger(
                    connection: writer.connection, captured: captured, localSchemaVersion: schemaVersion, rowWriter: writer),
                key: key, space: space, device: device)
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
            let applied = try inbox(writer).retryQueue()
            for table in tables.values { try ChangeCapture.install(table, on: writer.connection) }
            return applied
        }
    }

    // MARK: Conflicts

    /// The local values that concurrent changes from other devices overwrote, oldest first.
    ///
    /// - Complexity: one query; O(conflicts kept).
    public func conflicts() async throws -> [SyncConflict] {
        try await database.syncWrite { connection in
            try connection.query("""
                SELECT id, collection, record, field, value, device, hlc, winner_device, winner_hlc
                FROM \(SyncTables.conflicts) ORDER BY id
                """).map { row in
                    SyncConflict(
                        id: row.int64(at: 0) ?? 0, collection: row.string(at: 1) ?? "",
                        recordID: row.string(at: 2) ?? row[2].description, field: row.string(at: 3) ?? "",
                        losingValue: row[4], losingDevice: row.string(at: 5) ?? "",
                        losingTime: SyncTables.date(ofHLC: row.int64(at: 6) ?? 0), winningDevice: row.string(at: 7) ?? "",
                        winningTime: SyncTables.date(ofHLC: row.int64(at: 8) ?? 0))
                }
        }
    }

    /// Writes a conflict's losing value back as a new local change (it then wins everywhere,
    /// being the newest) and forgets the conflict.
    ///
    /// - Parameter conflict: one of ``conflicts()``.
    /// - Throws: ``SyncError/conflictRecordGone(collection:id:)`` when the record was deleted
    ///   since; ``SyncError/unknownCollection(_:)``.
    public func restore(_ conflict: SyncConflict) async throws {
        guard let table = captured[conflict.collection] else { throw SyncError.unknownCollection(conflict.collection) }
        try await database.syncWrite { connection in
            let materializer = Materializer(connection: connection, table: table)
            guard try materializer.write(id: .text(conflict.recordID), field: conflict.field, value: conflict.losingValue) else {
                throw SyncError.conflictRecordGone(collection: conflict.collection, id: conflict.recordID)
            }
            try connection.execute("DELETE FROM \(SyncTables.conflicts) WHERE id = ?", [.integer(conflict.id)])
        }
        try await refreshStatus(error: status.lastError)
    }

    /// Forgets a conflict without restoring it.
    ///
    /// - Parameter conflict: one of ``conflicts()``.
    public func dismiss(_ conflict: SyncConflict) async throws {
        try await database.syncWrite { connection in
            try connection.execute("DELETE FROM \(SyncTables.conflicts) WHERE id = ?", [.integer(conflict.id)])
        }
        try await refreshStatus(error: status.lastError)
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
        var next = try await Self.readStatus(database, device: device)
        next.lastError = error
        status = next
        broadcaster.publish(next)
    }

    static func readStatus(_ database: Database, device: String) async throws -> SyncStatus {
        try await database.syncWrite { connection in
            let row = try connection.query("""
                SELECT (SELECT count(*) FROM \(SyncTables.records) WHERE pending = 1),
                       (SELECT count(*) FROM \(SyncTables.outbox)),
                       pushed, pulled, (SELECT count(*) FROM \(SyncTables.conflicts))
                FROM \(SyncTables.device)
                """).first
            let queued = try connection.query(
                "SELECT server_sequence, device, device_sequence, reason FROM \(SyncTables.queue) ORDER BY server_sequence"
            ).map {
                QueuedChangeSet(
                    serverSequence: $0.int64(at: 0) ?? 0, device: $0.string(at: 1) ?? "", deviceSequence: $0.int64(at: 2) ?? 0,
                    reason: QueueReasonCoding.decode($0.string(at: 3) ?? ""))
            }
            return SyncStatus(
                device: device, pendingChanges: row?.int(at: 0) ?? 0, unacknowledgedChangeSets: row?.int(at: 1) ?? 0,
                lastPushedSequence: row?.int64(at: 2) ?? 0, lastPulledSequence: row?.int64(at: 3) ?? 0, queued: queued,
                conflicts: row?.int(at: 4) ?? 0)
        }
    }

    static func transportError(_ error: any Error) -> SyncError {
        (error as? SyncError) ?? .transport(String(describing: error))
    }

    static func syncError(_ error: any Error) -> SyncError {
        (error as? SyncError) ?? .database(String(describing: error))
    }
}
