import Foundation
import Trove
import TroveSQLite

/// When a device uploads a snapshot of its merge state on its own (``SyncSpace/snapshotIfDue()``,
/// called by ``SyncSpace/run(pollInterval:initialBackoff:maximumBackoff:)`` after each sync).
///
/// A snapshot is due when the feed after the newest snapshot holds at least ``changeSets``
/// change sets or ``bytes`` bytes, and at least as many bytes as that snapshot: a new device then
/// downloads at most about twice the state's size, and uploading snapshots costs no more than the
/// feed itself (each one's size is paid for by as many bytes of feed since the last one).
///
/// ```swift
/// try await sync.setSnapshotPolicy(SnapshotPolicy(changeSets: 1_000, bytes: 8 << 20))
/// ```
public struct SnapshotPolicy: Sendable, Hashable {
    /// Change sets after the newest snapshot that make a new one due.
    public var changeSets: Int64
    /// Sealed bytes after the newest snapshot that make a new one due.
    public var bytes: Int64
    /// Whether this device uploads snapshots on its own at all (a phone on a metered network
    /// may leave it to a laptop).
    public var automatic: Bool

    /// The default: every 10,000 change sets or 64 MB since the newest snapshot.
    public static let standard = SnapshotPolicy(changeSets: 10_000, bytes: 64 << 20)
    /// Never on its own (``SyncSpace/uploadSnapshot()`` still does).
    public static let manual = SnapshotPolicy(changeSets: .max, bytes: .max, automatic: false)

    /// A policy.
    public init(changeSets: Int64, bytes: Int64, automatic: Bool = true) {
        self.changeSets = changeSets
        self.bytes = bytes
        self.automatic = automatic
    }
}

extension SyncSpace {
    /// Sets when this device uploads snapshots on its own.
    ///
    /// - Parameter policy: the new policy.
    public func setSnapshotPolicy(_ policy: SnapshotPolicy) {
        snapshotPolicy = policy
    }

    /// The feed's state on the server: its length, how far it was pruned, the newest snapshot and
    /// the horizon. Nil when the transport keeps no snapshots.
    ///
    /// - Parameter fullSize: count the whole feed's change sets and bytes too (a scan of the
    ///   space's feed on the server).
    /// - Throws: ``SyncError/transport(_:)``.
    public func feedState(fullSize: Bool = false) async throws -> FeedState? {
        guard let transport = transport as? any SnapshotTransport else { return nil }
        do { return try await transport.feedState(space: space, fullSize: fullSize) } catch {
            throw Self.transportError(error)
        }
    }

    /// Uploads a sealed snapshot of this device's merge state, so new devices (and devices back
    /// after the pruning horizon) start from it instead of replaying the feed, and the feed can
    /// be pruned below it.
    ///
    /// Pushes and pulls first: a snapshot covers the feed up to this device's cursor and holds
    /// nothing that is not in the feed (no unsent change). The state is read in one transaction;
    /// it is sealed with the space's key in parts of a few MB, uploaded part by part and marked
    /// complete last, so a device never reads a partial one.
    ///
    /// ```swift
    /// let snapshot = try await sync.uploadSnapshot()
    /// print("covers the feed up to \(snapshot.upToSequence), \(snapshot.bytes) bytes")
    /// ```
    /// - Returns: what was uploaded.
    /// - Throws: ``SyncError/snapshotUnavailable(_:)`` when the transport keeps no snapshots or
    ///   this device does not hold the full state (a change was made meanwhile, or change sets
    ///   are queued); ``SyncError/transport(_:)``; whatever ``push()`` and ``pull()`` throw.
    /// - Complexity: O(records + fields) to read and seal; memory for the whole sealed snapshot.
    @discardableResult
    public func uploadSnapshot() async throws -> SnapshotDescriptor {
        guard let transport = transport as? any SnapshotTransport else {
            throw SyncError.snapshotUnavailable("the transport keeps no snapshots")
        }
        // A pull can leave a change of this device's own to send (a link that a remote delete
        // cascaded to): sync again until nothing is left, a few times at most.
        var attempt = 0
        var snapshot: Snapshot
        while true {
            do {
                snapshot = try await captureFullState()
                break
            } catch SyncError.snapshotUnavailable(let why)
                where attempt < 3 && why.hasPrefix("local changes")
            {
                attempt += 1
            }
        }
        // This device's state at this sequence is on the server already (nothing changed since
        // its last snapshot): keep that one rather than seal and send the same again.
        let newest: SnapshotDescriptor?
        do { newest = try await transport.feedState(space: space, fullSize: false).snapshot } catch
        {
            throw Self.transportError(error)
        }
        if let newest, newest.upToSequence == snapshot.upTo, newest.device == device {
            return newest
        }
        let parts = try snapshot.seal(keys: keys, space: space, device: device)
        do {
            for (index, part) in parts.enumerated() {
                try await transport.putSnapshotPart(
                    part, part: index, of: parts.count, upTo: snapshot.upTo, device: device,
                    space: space)
            }
            guard
                try await transport.finishSnapshot(
                    upTo: snapshot.upTo, device: device, space: space)
            else {
                throw SyncError.transport("the server did not keep every part of the snapshot")
            }
            _ = try await transport.reportCursor(snapshot.upTo, device: device, space: space)
        } catch let error as SyncError {
            throw error
        } catch {
            throw Self.transportError(error)
        }
        return SnapshotDescriptor(
            upToSequence: snapshot.upTo, device: device, parts: parts.count,
            bytes: Int64(parts.reduce(0) { $0 + $1.count }))
    }

    /// Pushes, pulls, then reads the merge state if nothing is left to send or queued.
    private func captureFullState() async throws -> Snapshot {
        try await push()
        try await pull()
        let schemaVersion = try await database.syncSchemaVersion()
        let (captured, device) = (captured, device)
        return try await database.syncWrite { connection in
            let row = try connection.query(
                """
                SELECT (SELECT count(*) FROM \(SyncTables.records) WHERE pending = 1)
                     + (SELECT count(*) FROM \(SyncTables.fields) WHERE pending = 1),
                       (SELECT count(*) FROM \(SyncTables.outbox)), (SELECT count(*) FROM \(SyncTables.queue)), pulled
                FROM \(SyncTables.device)
                """
            ).first
            guard (row?.int64(at: 0) ?? 0) == 0, (row?.int64(at: 1) ?? 0) == 0 else {
                throw SyncError.snapshotUnavailable(
                    "local changes were made since the push; sync and try again")
            }
            guard (row?.int64(at: 2) ?? 0) == 0 else {
                throw SyncError.snapshotUnavailable(
                    "change sets are queued here: this device does not hold the whole state")
            }
            return try Snapshot.capture(
                connection, captured: captured, device: device, schemaVersion: schemaVersion,
                upTo: row?.int64(at: 3) ?? 0)
        }
    }

    /// Uploads a snapshot when ``snapshotPolicy`` says one is due.
    ///
    /// - Returns: the snapshot uploaded, nil when none was due (or the transport keeps none).
    /// - Throws: as ``uploadSnapshot()``, except that a device that does not hold the full state
    ///   right now returns nil.
    @discardableResult
    public func snapshotIfDue() async throws -> SnapshotDescriptor? {
        guard snapshotPolicy.automatic, let state = try await feedState() else { return nil }
        let due =
            state.changeSetsSinceSnapshot >= snapshotPolicy.changeSets
            || state.bytesSinceSnapshot >= snapshotPolicy.bytes
        guard due, state.bytesSinceSnapshot >= (state.snapshot?.bytes ?? 0) else { return nil }
        do {
            return try await uploadSnapshot()
        } catch SyncError.snapshotUnavailable {
            return nil
        }
    }

    /// Applies the newest snapshot when this device has nothing yet (`cursor` 0) or its next
    /// change sets were pruned; returns whether it did. A snapshot that does not open, is of an
    /// unknown format or a newer schema, does not fit this device or is not newer than the
    /// cursor is refused (kept in the status, not tried again) and the feed is pulled instead.
    ///
    /// - Throws: ``SyncError/transport(_:)`` also when the feed after `cursor` was pruned and no
    ///   snapshot could be had (none complete on the server, or the newest replaced while its
    ///   parts were downloaded, a few times over): pulling the feed instead would skip the pruned
    ///   change sets for good, so the pull fails and the next one tries again.
    func joinFromSnapshot(cursor: Int64) async throws -> Bool {
        // A snapshot replaced while its parts were downloaded: take the newer one (a few times).
        var needed = false
        for _ in 0..<3 {
            switch try await joinFromNewestSnapshot(cursor: cursor) {
            case .joined: return true
            case .declined: return false
            case .unavailable(let pruned): needed = pruned
            }
        }
        guard !needed else {
            throw SyncError.transport(
                "the feed after this device's cursor was pruned and no complete snapshot could be "
                    + "downloaded: try again")
        }
        return false
    }

    /// What one attempt of ``joinFromSnapshot(cursor:)`` did.
    private enum JoinAttempt {
        /// The snapshot was applied.
        case joined
        /// None needed, or refused: the device pulls the feed.
        case declined
        /// None complete on the server, or a part was gone (a newer snapshot replaced it);
        /// `pruned`: the feed after the cursor was pruned, so the feed alone would not do.
        case unavailable(pruned: Bool)
    }

    /// One attempt of ``joinFromSnapshot(cursor:)``.
    private func joinFromNewestSnapshot(cursor: Int64) async throws -> JoinAttempt {
        guard let transport = transport as? any SnapshotTransport else { return .declined }
        let state: FeedState
        do { state = try await transport.feedState(space: space, fullSize: false) } catch {
            throw Self.transportError(error)
        }
        guard cursor == 0 || cursor < state.prunedUpTo else { return .declined }
        guard let descriptor = state.snapshot else {
            return cursor < state.prunedUpTo ? .unavailable(pruned: true) : .declined
        }
        let name = "\(descriptor.upToSequence)/\(descriptor.device)"
        let refusedBefore = try await database.syncWrite { connection in
            try connection.scalar(
                "SELECT value FROM \(SyncTables.state) WHERE name = 'snapshot_refused'")?
                .stringValue
        }
        if refusedBefore?.hasPrefix(name + "\t") == true { return .declined }
        do {
            guard descriptor.upToSequence > cursor else {
                throw Snapshot.Refusal.notNewer(snapshot: descriptor.upToSequence, cursor: cursor)
            }
            var sealed: [Data] = []
            for part in 0..<descriptor.parts {
                let payload: Data?
                do {
                    payload = try await transport.snapshotPart(part, of: descriptor, space: space)
                } catch {
                    throw Self.transportError(error)
                }
                guard let payload else { throw Snapshot.Refusal.partMissing(part) }
                sealed.append(payload)
            }
            // Sealed under a key epoch that began since this device last asked (a device was
            // removed meanwhile): learn it before opening, or the snapshot is refused and a
            // device whose next change sets were pruned never has them. A removed device is
            // told so here.
            if sealed.contains(where: { keys.lacksKey(for: Array($0)) }) {
                try await refreshMembership(force: true)
            }
            let snapshot = try Snapshot.open(
                sealed, descriptor: descriptor, keys: keys, space: space)
            let inbox = try await makeInbox()
            let device = device
            try await database.syncApply { writer in
                let box = inbox(writer)
                try snapshot.apply(with: box.merger, connection: writer.connection, device: device)
                try box.merger.settleReferences()
                try writer.connection.execute(
                    "DELETE FROM \(SyncTables.state) WHERE name = 'snapshot_refused'")
            }
            return .joined
        } catch let refusal as Snapshot.Refusal {
            if case .partMissing = refusal {
                return .unavailable(pruned: cursor < state.prunedUpTo)
            }
            try await database.syncWrite { connection in
                try connection.execute(
                    "INSERT OR REPLACE INTO \(SyncTables.state)(name, value) VALUES ('snapshot_refused', ?)",
                    [
                        .text(
                            "\(name)\tsnapshot up to \(descriptor.upToSequence) by \(descriptor.device) refused: \(refusal)"
                        )
                    ])
            }
            return .declined
        }
    }
}
