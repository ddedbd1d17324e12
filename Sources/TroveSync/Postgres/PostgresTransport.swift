import Foundation

/// Carries sealed change sets through a PostgreSQL server on which Trove's schema is installed
/// (``installServerSchema(url:)``, or trove-sync.sql with psql).
///
/// The server authenticates the role in the URL (SCRAM) and its row-level security lets that role
/// read and write only the spaces it is a member of. A host other than this machine is reached
/// over TLS (`sslmode=require`) unless the URL names an `sslmode` of its own. Each request runs on
/// a queue of the transport's own, never on Swift's cooperative pool; after a lost connection
/// (the server restarted) the next request reconnects, and a request cut off mid-way is sent once
/// more (a push is idempotent, so a retry after a lost acknowledgement stores nothing twice).
///
/// ```swift
/// let transport = try PostgresTransport(url: "postgresql://alice_laptop@db.example.com/notes")
/// _ = try await transport.createSpace("notes")
/// let sequences = try await transport.push(changeSets, space: "notes")
/// let newer = try await transport.pull(space: "notes", after: 0, limit: 500)
/// ```
public final class PostgresTransport: SnapshotTransport, @unchecked Sendable {
    // @unchecked Sendable: `options` is a constant, `session` serialises its own state, and
    // `listeners`/`closed` are guarded by `lock`.
    private let options: PostgresConnectionOptions
    let session: PostgresSession
    private let lock = NSLock()
    private var listeners: [ObjectIdentifier: PostgresListener] = [:]
    private var closed = false

    /// A transport for the server at `url`; it connects on first use.
    ///
    /// - Parameter url: A libpq URL (`postgresql://role:password@host:port/database?sslmode=…`)
    ///   or key=value string. Without a password, libpq reads `PGPASSWORD` or `~/.pgpass`.
    /// - Throws: ``PostgresError/invalidURL(_:)`` when libpq cannot parse it.
    public init(url: String) throws {
        options = try PostgresConnectionOptions(url: url)
        session = PostgresSession(options: options)
    }

    deinit { close() }

    /// Appends change sets to the space's feed in one transaction; see ``SyncTransport/push(_:space:)``.
    ///
    /// - Parameters:
    ///   - changeSets: The sealed change sets, in the order their sequences are assigned.
    ///   - space: The space's name.
    /// - Returns: The server sequence of each change set, in order (an already stored one keeps its own).
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member;
    ///   ``PostgresError/connectionFailed(_:)`` when the server cannot be reached.
    /// - Complexity: One round trip (the payloads travel as one binary array), then the
    ///   space's listeners are notified by one more request this call does not wait for.
    public func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] {
        guard !changeSets.isEmpty else { return [] }
        let parameters: [PostgresValue] = [
            .text(space),
            .textArray(changeSets.map(\.device)),
            .int64Array(changeSets.map(\.deviceSequence)),
            .byteaArray(changeSets.map(\.payload)),
        ]
        let expected = changeSets.count
        let sequences = try await session.run { connection in
            let result = try connection.execute(
                "SELECT server_sequence FROM trove_sync.push($1, $2, $3, $4)", parameters)
            try result.expectColumns([PostgresType.int8])
            guard result.count == expected else {
                throw PostgresError.unexpectedResult(
                    "\(result.count) sequences for \(expected) change sets")
            }
            return try (0..<result.count).map { try result.integer($0, 0, as: Int64.self) }
        }
        // The NOTIFY, in a transaction of its own once the push committed (trove-sync.sql says
        // why), not waited for: the change sets are stored, and a listener that misses it pulls
        // them at its next poll.
        session.send { connection in
            try connection.execute("SELECT trove_sync.announce($1)", [.text(space)])
        }
        return sequences
    }

    /// The space's change sets after a server sequence; see ``SyncTransport/pull(space:after:limit:)``.
    ///
    /// - Parameters:
    ///   - space: The space's name.
    ///   - after: The last server sequence the device has (0 for none).
    ///   - limit: The most change sets to return.
    /// - Returns: Change sets with their ``SealedChangeSet/serverSequence``, ascending.
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member;
    ///   ``PostgresError/connectionFailed(_:)`` when the server cannot be reached.
    public func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        try await pull(space, after: after, limit: limit, maxBytes: nil)
    }

    /// The space's change sets after a server sequence within a count and a byte budget
    /// (`trove_sync.pull` with `max_bytes`); see ``SnapshotTransport/pull(space:after:limit:maxBytes:)``.
    ///
    /// - Parameters:
    ///   - space: The space's name.
    ///   - after: The last server sequence the device has (0 for none).
    ///   - limit: The most change sets to return.
    ///   - maxBytes: The most payload bytes to return; the first change set comes whatever its size.
    /// - Returns: Change sets with their ``SealedChangeSet/serverSequence``, ascending.
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func pull(space: String, after: Int64, limit: Int, maxBytes: Int) async throws
        -> [SealedChangeSet]
    {
        try await pull(space, after: after, limit: limit, maxBytes: maxBytes)
    }

    /// Both pulls. The count is written into the statement, not bound: a prepared statement is
    /// run from one generic plan only when PostgreSQL finds it no dearer than a plan for each
    /// run's values, and a bound LIMIT's generic estimate (a tenth of the feed) always looked
    /// dearer, so every page was planned again (its SQL function parsed and inlined: a fifth of
    /// the server's time per page; trove-sync.sql says the same of the cursor). One statement is
    /// prepared per count a connection uses (SyncSpace uses two).
    private func pull(_ space: String, after: Int64, limit: Int, maxBytes: Int?) async throws
        -> [SealedChangeSet]
    {
        guard limit > 0 else { return [] }
        let columns =
            "SELECT server_sequence, device, device_sequence, payload FROM trove_sync.pull"
        let count = Int32(clamping: limit)
        let (sql, parameters): (String, [PostgresValue]) =
            if let maxBytes {
                (
                    "\(columns)($1, $2, \(count), $3)",
                    [.text(space), .int64(after), .int64(Int64(maxBytes))]
                )
            } else {
                ("\(columns)($1, $2, \(count))", [.text(space), .int64(after)])
            }
        return try await session.run { connection in
            let result = try connection.execute(sql, parameters)
            try result.expectColumns([
                PostgresType.int8, PostgresType.text, PostgresType.int8, PostgresType.bytea,
            ])
            return try (0..<result.count).map { row in
                SealedChangeSet(
                    device: try result.string(row, 1),
                    deviceSequence: try result.integer(row, 2, as: Int64.self),
                    payload: try result.data(row, 3),
                    serverSequence: try result.integer(row, 0, as: Int64.self))
            }
        }
    }

    /// Stores one sealed part of a snapshot (`trove_sync.put_snapshot_part`), one request per part.
    ///
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func putSnapshotPart(
        _ payload: Data, part: Int, of parts: Int, upTo: Int64, device: String, space: String
    )
        async throws
    {
        let parameters: [PostgresValue] = [
            .text(space), .int64(upTo), .text(device), .int32(Int32(clamping: part)),
            .int32(Int32(clamping: parts)),
            .bytea(payload),
        ]
        try await session.run { connection in
            _ = try connection.execute(
                "SELECT trove_sync.put_snapshot_part($1, $2, $3, $4, $5, $6)", parameters)
        }
    }

    /// Marks a snapshot complete (`trove_sync.finish_snapshot`) and deletes the older ones.
    ///
    /// - Returns: false when a part is missing.
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func finishSnapshot(upTo: Int64, device: String, space: String) async throws -> Bool {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.finish_snapshot($1, $2, $3)",
                [.text(space), .int64(upTo), .text(device)])
            try result.expectColumns([PostgresType.bool])
            return try result.integer(0, 0, as: UInt8.self) != 0
        }
    }

    /// One sealed part of a snapshot (`trove_sync.snapshot_part`), nil when a newer one replaced it.
    ///
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func snapshotPart(_ part: Int, of snapshot: SnapshotDescriptor, space: String)
        async throws -> Data?
    {
        let parameters: [PostgresValue] = [
            .text(space), .int64(snapshot.upToSequence), .text(snapshot.device),
            .int32(Int32(clamping: part)),
        ]
        return try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.snapshot_part($1, $2, $3, $4)", parameters)
            try result.expectColumns([PostgresType.bytea])
            guard result.count == 1, !result.isNull(0, 0) else { return nil }
            return try result.data(0, 0)
        }
    }

    /// Records how far this device has pulled and prunes the feed (`trove_sync.report_cursor`).
    ///
    /// - Returns: How many change sets were pruned.
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func reportCursor(_ pulledUpTo: Int64, device: String, space: String) async throws
        -> Int64
    {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.report_cursor($1, $2, $3)",
                [.text(space), .text(device), .int64(pulledUpTo)])
            try result.expectColumns([PostgresType.int8])
            return try result.integer(0, 0, as: Int64.self)
        }
    }

    /// The feed's state (`trove_sync.feed_state` and `trove_sync.newest_snapshot`).
    ///
    /// - Parameters:
    ///   - space: The space's name.
    ///   - fullSize: Count the whole feed too (a scan of the space's feed).
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func feedState(space: String, fullSize: Bool) async throws -> FeedState {
        try await session.run { connection in
            let snapshot = try connection.execute(
                "SELECT up_to_sequence, device, parts, size FROM trove_sync.newest_snapshot($1)",
                [.text(space)])
            try snapshot.expectColumns([
                PostgresType.int8, PostgresType.text, PostgresType.int4, PostgresType.int8,
            ])
            let descriptor =
                snapshot.count == 0
                ? nil
                : SnapshotDescriptor(
                    upToSequence: try snapshot.integer(0, 0, as: Int64.self),
                    device: try snapshot.string(0, 1),
                    parts: Int(try snapshot.integer(0, 2, as: Int32.self)),
                    bytes: try snapshot.integer(0, 3, as: Int64.self))
            let result = try connection.execute(
                "SELECT last_sequence, pruned_up_to, round(horizon_seconds)::int8, tail_count, tail_bytes, feed_count, "
                    + "feed_bytes FROM trove_sync.feed_state($1, $2::int4 <> 0)",
                [.text(space), .int32(fullSize ? 1 : 0)])
            try result.expectColumns(Array(repeating: PostgresType.int8, count: 7))
            guard result.count == 1 else {
                throw PostgresError.unexpectedResult("feed_state returned \(result.count) rows")
            }
            func optional(_ column: Int) throws -> Int64? {
                result.isNull(0, column) ? nil : try result.integer(0, column, as: Int64.self)
            }
            return FeedState(
                lastSequence: try result.integer(0, 0, as: Int64.self),
                prunedUpTo: try result.integer(0, 1, as: Int64.self),
                snapshot: descriptor, horizon: .seconds(try result.integer(0, 2, as: Int64.self)),
                changeSetsSinceSnapshot: try result.integer(0, 3, as: Int64.self),
                bytesSinceSnapshot: try result.integer(0, 4, as: Int64.self),
                changeSets: try optional(5),
                bytes: try optional(6))
        }
    }

    /// Yields whenever the space may have new change sets: once on listening (and again after each
    /// reconnection), then on every push to the space (LISTEN/NOTIFY on a connection and thread of
    /// its own). Finishes when the transport closes or the consumer stops iterating.
    ///
    /// - Parameter space: The space's name.
    /// - Returns: A stream that buffers at most one wake-up (a device pulls everything new anyway).
    public func notifications(space: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        lock.lock()
        defer { lock.unlock() }
        guard !closed else {
            continuation.finish()
            return stream
        }
        let listener = PostgresListener(options: options, space: space, continuation: continuation)
        let key = ObjectIdentifier(listener)
        listeners[key] = listener
        continuation.onTermination = { [weak self] _ in
            listener.stop()
            self?.removeListener(key)
        }
        return stream
    }

    /// The space's key check (`trove_sync.key_check`); see ``SyncTransport/keyCheck(space:)``.
    ///
    /// - Parameter space: The space's name.
    /// - Returns: The stored key check, nil while the space has none.
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member;
    ///   ``PostgresError/server(sqlState:message:)`` `42883` when the server's schema predates
    ///   key checks (run `trove sync setup-server` again).
    public func keyCheck(space: String) async throws -> Data? {
        do {
            return try await session.run { connection in
                let result = try connection.execute(
                    "SELECT trove_sync.key_check($1)", [.text(space)])
                try result.expectColumns([PostgresType.bytea])
                guard result.count == 1, !result.isNull(0, 0) else { return nil }
                return try result.data(0, 0)
            }
        } catch PostgresError.server(let state, let message) where state == "42883" {
            // The first request a device of this version makes that an older schema lacks: say
            // what to do rather than only that a function is missing.
            throw PostgresError.server(
                sqlState: state,
                message: message
                    + " (the server's Trove schema predates key checks: run `trove sync setup-server URL` "
                    + "or trove-sync.sql again as its administrator)")
        }
    }

    /// Sets the space's key check unless it has one (`trove_sync.set_key_check`); see
    /// ``SyncTransport/setKeyCheck(_:space:)``.
    ///
    /// - Parameters:
    ///   - check: The sealed key check.
    ///   - space: The space's name.
    /// - Returns: The key check the server keeps (the first one set).
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func setKeyCheck(_ check: Data, space: String) async throws -> Data {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.set_key_check($1, $2)", [.text(space), .bytea(check)])
            try result.expectColumns([PostgresType.bytea])
            return try result.data(0, 0)
        }
    }

    /// Deletes one change set from the space's feed (`trove_sync.delete_change_set`): one that no
    /// device can open, which devices keep in quarantine (``SyncStatus/quarantined``). Only the
    /// space's owner may.
    ///
    /// - Parameters:
    ///   - device: The device that sealed it.
    ///   - deviceSequence: That device's sequence number for it.
    ///   - space: The space's name.
    /// - Returns: Whether the feed held it.
    /// - Throws: ``PostgresError/notSpaceOwner(_:)`` unless this role owns the space.
    @discardableResult
    public func deleteChangeSet(device: String, deviceSequence: Int64, space: String) async throws
        -> Bool
    {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.delete_change_set($1, $2, $3)",
                [.text(space), .text(device), .int64(deviceSequence)])
            try result.expectColumns([PostgresType.bool])
            return try result.integer(0, 0, as: UInt8.self) != 0
        }
    }

    /// Forgets the space's key check (`trove_sync.reset_key_check`), so the next device that syncs
    /// sets it with its key. Only the space's owner may; for a space whose first device synced
    /// with a wrong key.
    ///
    /// - Parameter space: The space's name.
    /// - Throws: ``PostgresError/notSpaceOwner(_:)`` unless this role owns the space.
    public func resetKeyCheck(space: String) async throws {
        try await session.run { connection in
            _ = try connection.execute("SELECT trove_sync.reset_key_check($1)", [.text(space)])
        }
    }

    /// Creates a space owned by this role, which becomes its first member.
    ///
    /// - Parameter name: The space's name (unique on the server, 1 to 200 characters).
    /// - Returns: true if created; false if this role is already a member of a space of that name.
    /// - Throws: ``PostgresError/spaceNameTaken(_:)`` when another role's space has the name.
    @discardableResult
    public func createSpace(_ name: String) async throws -> Bool {
        try await session.run { connection in
            let result = try connection.execute("SELECT trove_sync.create_space($1)", [.text(name)])
            try result.expectColumns([PostgresType.bool])
            return try result.integer(0, 0, as: UInt8.self) != 0
        }
    }

    /// Lets another database role (a person's or a device's) read and write a space this role owns.
    ///
    /// - Parameters:
    ///   - role: The role to add (created by the server's administrator, member of `trove_sync_device`).
    ///   - space: The space's name.
    /// - Throws: ``PostgresError/notSpaceOwner(_:)`` unless this role owns the space;
    ///   ``PostgresError/noSuchRole(_:)`` when the role does not exist.
    public func addMember(_ role: String, toSpace space: String) async throws {
        try await session.run { connection in
            _ = try connection.execute(
                "SELECT trove_sync.add_member($1, $2::name)", [.text(space), .text(role)])
        }
    }

    /// The space's last server sequence (0 for an empty feed).
    ///
    /// - Parameter space: The space's name.
    /// - Returns: The highest server sequence in the space's feed.
    /// - Throws: ``PostgresError/noSuchSpace(_:)`` when the role is not a member.
    public func lastSequence(space: String) async throws -> Int64 {
        try await session.run { connection in
            let result = try connection.execute(
                "SELECT trove_sync.last_sequence($1)", [.text(space)])
            try result.expectColumns([PostgresType.int8])
            return try result.integer(0, 0, as: Int64.self)
        }
    }

    /// Closes the connection and finishes every notification stream. Idempotent.
    public func close() {
        lock.lock()
        closed = true
        let open = Array(listeners.values)
        listeners.removeAll()
        lock.unlock()
        open.forEach { $0.stop() }
        session.close()
    }

    /// Installs (or re-installs: idempotent) Trove's server schema on the database at `url`.
    ///
    /// - Parameter url: A libpq URL of a role that may create schemas and roles (the database's
    ///   owner or an administrator).
    /// - Returns: The schema version now installed.
    /// - Throws: ``PostgresError`` from the server (for example `42501` without the privileges).
    @discardableResult
    public static func installServerSchema(url: String) async throws -> Int {
        let sql = try serverSchemaSQL()
        let session = PostgresSession(
            options: try PostgresConnectionOptions(url: url), label: "trove.sync.setup")
        defer { session.close() }
        return try await session.run { connection in
            try connection.executeScript(sql)
            let result = try connection.execute("SELECT trove_sync.schema_version()")
            try result.expectColumns([PostgresType.int4])
            return Int(try result.integer(0, 0, as: Int32.self))
        }
    }

    /// The server schema's SQL: trove-sync.sql, TroveSync's one resource.
    ///
    /// Looked for, in order: in the resource bundle SwiftPM puts beside the executable that links
    /// TroveSync (`Trove_TroveSync.resources` on Linux; the app's bundle on Apple platforms),
    /// then beside this source file (a build run from its checkout). Not `Bundle.module` on
    /// Linux: its accessor stops the process when the bundle is missing, as it is for a `trove`
    /// copied elsewhere, where a typed error saying what to do is the answer.
    static func serverSchemaSQL() throws -> String {
        var candidates = [
            Bundle.main.bundleURL.appendingPathComponent(
                "Trove_TroveSync.resources/trove-sync.sql"),
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
                "trove-sync.sql"),
        ]
        #if canImport(Darwin)
            if let file = Bundle.module.url(forResource: "trove-sync", withExtension: "sql") {
                candidates.insert(file, at: 0)
            }
        #endif
        for file in candidates {
            if let sql = try? String(contentsOf: file, encoding: .utf8) { return sql }
        }
        throw PostgresError.unexpectedResult(
            "trove-sync.sql not found (looked in \(candidates.map(\.path).joined(separator: ", "))): "
                + "put Trove_TroveSync.resources beside the executable, or install the file with psql -f"
        )
    }

    private func removeListener(_ key: ObjectIdentifier) {
        lock.lock()
        listeners[key] = nil
        lock.unlock()
    }
}
