import Foundation

/// A transport that keeps the space's feed in memory, shared by the sync spaces of one process:
/// what the tests use, and the smallest example of an app's own backend.
///
/// A backend needs only what this one does: an append-only feed per space in which each change
/// set gets the next server sequence, once per (device, device sequence); reads above a
/// sequence; and, optionally, a signal when the feed grows. It never opens a payload. As a
/// ``SnapshotTransport`` it also keeps snapshots and cursors and prunes the feed (``horizon`` and
/// ``now`` let tests send a device past the horizon).
///
/// ```swift
/// let server = InProcessTransport()
/// let phone = try await SyncSpace(database: phoneDB, space: "notes", key: key, transport: server, collections: ["notes"])
/// let laptop = try await SyncSpace(database: laptopDB, space: "notes", key: key, transport: server, collections: ["notes"])
/// try await phone.push()
/// try await laptop.pull()
/// ```
public final class InProcessTransport: SnapshotTransport, @unchecked Sendable {
    // One lock guards the feeds and the listeners (any thread may push, pull or subscribe):
    // that is why the class is `@unchecked Sendable`.
    private let lock = NSLock()
    private var feeds: [String: [SealedChangeSet]] = [:]
    // space -> "device/sequence" -> server sequence
    private var positions: [String: [String: Int64]] = [:]
    // a feed's counter (deleting keeps the others' numbers)
    private var lastSequences: [String: Int64] = [:]
    private var keyChecks: [String: Data] = [:]
    private var listeners: [String: [Int: AsyncStream<Void>.Continuation]] = [:]
    private var nextListener = 0
    private var snapshots: [String: [SnapshotKey: StoredSnapshot]] = [:]
    private var cursors: [String: [String: (pulled: Int64, seen: Date)]] = [:]
    private var prunedUpTo: [String: Int64] = [:]
    // Membership (InProcessTransport+Membership.swift), under the same lock: each space's
    // devices in the order added, its keys wrapped by device and epoch, and its key epoch.
    var memberDevices: [String: [SyncDeviceRecord]] = [:]
    var wrappedSpaceKeys: [String: [String: [Int64: WrappedSpaceKey]]] = [:]
    var keyEpochs: [String: Int64] = [:]
    /// The lock, for the membership extension.
    var membershipLock: NSLock { lock }

    private struct SnapshotKey: Hashable {
        var upTo: Int64
        var device: String
    }

    private struct StoredSnapshot {
        var parts: [Int: Data]
        var count: Int
        var complete = false
    }

    /// Devices not seen for longer than this have no say in pruning (the server's default: 90 days).
    public var horizon: Duration {
        get { lock.withLock { _horizon } }
        set { lock.withLock { _horizon = newValue } }
    }
    private var _horizon: Duration = .seconds(90 * 86_400)

    /// The time as this server sees it (tests move it forward to send a device past the horizon).
    public var now: @Sendable () -> Date {
        get { lock.withLock { _now } }
        set { lock.withLock { _now = newValue } }
    }
    private var _now: @Sendable () -> Date = { Date() }

    /// When set, every push and pull throws this error before doing anything (tests use it to
    /// simulate a server that is down).
    public var failure: (any Error)? {
        get { lock.withLock { _failure } }
        set { lock.withLock { _failure = newValue } }
    }
    private var _failure: (any Error)?

    /// An empty server.
    public init() {}

    /// Appends the change sets not stored yet and returns every one's server sequence.
    ///
    /// - Parameters:
    ///   - changeSets: sealed change sets of one device, in sequence order.
    ///   - space: the space's name.
    /// - Returns: the server sequence of each change set (the stored one for a repeat).
    /// - Throws: ``failure`` when set.
    public func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] {
        let (sequences, wake): ([Int64], [AsyncStream<Void>.Continuation]) = try lock.withLock {
            if let failure = _failure { throw failure }
            let removed = Set(
                (memberDevices[space] ?? []).filter { $0.removedIn != nil }.map(\.device))
            if let refused = changeSets.first(where: { removed.contains($0.device) }) {
                throw SyncError.removedFromSpace(space: space, device: refused.device)
            }
            let epoch = keyEpochs[space] ?? 0
            if epoch > 0,
                changeSets.contains(where: { SpaceKeys.epoch(of: Array($0.payload)) < epoch })
            {
                throw SyncError.staleKeyEpoch(space: space)
            }
            var feed = feeds[space] ?? []
            var known = positions[space] ?? [:]
            var last = lastSequences[space] ?? 0
            var sequences: [Int64] = []
            for set in changeSets {
                let key = "\(set.device)/\(set.deviceSequence)"
                if let existing = known[key] {
                    sequences.append(existing)
                    continue
                }
                var stored = set
                last += 1
                stored.serverSequence = last
                feed.append(stored)
                known[key] = stored.serverSequence
                sequences.append(stored.serverSequence!)
            }
            feeds[space] = feed
            positions[space] = known
            lastSequences[space] = last
            return (sequences, Array((listeners[space] ?? [:]).values))
        }
        for continuation in wake { continuation.yield() }
        return sequences
    }

    /// The change sets above `after`, ascending, at most `limit`.
    ///
    /// - Parameters:
    ///   - space: the space's name.
    ///   - after: the last server sequence the caller has.
    ///   - limit: the most change sets to return.
    /// - Returns: the change sets with their server sequences.
    /// - Throws: ``failure`` when set.
    public func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        try lock.withLock {
            if let failure = _failure { throw failure }
            let feed = feeds[space] ?? []
            guard let start = feed.firstIndex(where: { ($0.serverSequence ?? 0) > after }) else {
                return []
            }
            return Array(feed[start..<min(feed.count, start + limit)])
        }
    }

    /// The change sets above `after`, ascending, at most `limit` and at most `maxBytes` of payload
    /// (the first one whatever its size).
    ///
    /// - Parameters:
    ///   - space: the space's name.
    ///   - after: the last server sequence the caller has.
    ///   - limit: the most change sets to return.
    ///   - maxBytes: the most payload bytes to return (the first change set comes anyway).
    /// - Returns: the change sets with their server sequences.
    /// - Throws: ``failure`` when set.
    public func pull(space: String, after: Int64, limit: Int, maxBytes: Int) async throws
        -> [SealedChangeSet]
    {
        var page: [SealedChangeSet] = []
        var bytes = 0
        for set in try await pull(space: space, after: after, limit: limit) {
            if !page.isEmpty, bytes + set.payload.count > maxBytes { break }
            bytes += set.payload.count
            page.append(set)
        }
        return page
    }

    /// Stores one sealed part of a snapshot.
    ///
    /// - Throws: ``failure`` when set.
    public func putSnapshotPart(
        _ payload: Data, part: Int, of parts: Int, upTo: Int64, device: String, space: String
    )
        async throws
    {
        try lock.withLock {
            if let failure = _failure { throw failure }
            if SpaceKeys.epoch(of: Array(payload)) < keyEpochs[space] ?? 0 {
                throw SyncError.staleKeyEpoch(space: space)
            }
            let key = SnapshotKey(upTo: upTo, device: device)
            var stored = snapshots[space]?[key] ?? StoredSnapshot(parts: [:], count: parts)
            // As the server does: a complete snapshot is kept whole; parts beyond a new count go.
            if stored.complete { return }
            stored.count = parts
            stored.parts = stored.parts.filter { $0.key < parts }
            stored.parts[part] = payload
            snapshots[space, default: [:]][key] = stored
        }
    }

    /// Marks a snapshot complete when every part is there, and deletes the older ones.
    ///
    /// - Throws: ``failure`` when set.
    public func finishSnapshot(upTo: Int64, device: String, space: String) async throws -> Bool {
        try lock.withLock {
            if let failure = _failure { throw failure }
            let key = SnapshotKey(upTo: upTo, device: device)
            guard var stored = snapshots[space]?[key],
                (0..<stored.count).allSatisfy({ stored.parts[$0] != nil })
            else {
                return false
            }
            stored.complete = true
            snapshots[space]?[key] = stored
            for (other, value) in snapshots[space] ?? [:]
            where value.complete && (other.upTo, other.device) < (upTo, device) {
                snapshots[space]?[other] = nil
            }
            return true
        }
    }

    /// One sealed part of a snapshot, nil when it is gone.
    ///
    /// - Throws: ``failure`` when set.
    public func snapshotPart(_ part: Int, of snapshot: SnapshotDescriptor, space: String)
        async throws -> Data?
    {
        try lock.withLock {
            if let failure = _failure { throw failure }
            return snapshots[space]?[
                SnapshotKey(upTo: snapshot.upToSequence, device: snapshot.device)]?.parts[part]
        }
    }

    /// Records a device's cursor, then prunes the feed at or below both the newest snapshot and
    /// the smallest cursor of the devices seen within ``horizon``.
    ///
    /// - Returns: how many change sets were pruned.
    /// - Throws: ``failure`` when set.
    public func reportCursor(_ pulledUpTo: Int64, device: String, space: String) async throws
        -> Int64
    {
        try lock.withLock {
            if let failure = _failure { throw failure }
            let now = _now()
            let previous = cursors[space]?[device]?.pulled ?? 0
            cursors[space, default: [:]][device] = (max(previous, pulledUpTo), now)
            guard let snapshot = newestSnapshotLocked(space) else { return 0 }
            let cutoff = now.addingTimeInterval(-Self.seconds(_horizon))
            let slowest = (cursors[space] ?? [:]).values.filter { $0.seen >= cutoff }.map(\.pulled)
                .min()
            let bound = min(snapshot.upToSequence, slowest ?? snapshot.upToSequence)
            guard bound > prunedUpTo[space] ?? 0 else { return 0 }
            let before = feeds[space]?.count ?? 0
            for set in feeds[space] ?? [] where (set.serverSequence ?? 0) <= bound {
                positions[space]?["\(set.device)/\(set.deviceSequence)"] = nil
            }
            feeds[space]?.removeAll { ($0.serverSequence ?? 0) <= bound }
            prunedUpTo[space] = bound
            return Int64(before - (feeds[space]?.count ?? 0))
        }
    }

    /// The feed's state.
    ///
    /// - Throws: ``failure`` when set.
    public func feedState(space: String, fullSize: Bool) async throws -> FeedState {
        try lock.withLock {
            if let failure = _failure { throw failure }
            let feed = feeds[space] ?? []
            let snapshot = newestSnapshotLocked(space)
            let tail = feed.filter { ($0.serverSequence ?? 0) > (snapshot?.upToSequence ?? 0) }
            return FeedState(
                lastSequence: lastSequences[space] ?? 0, prunedUpTo: prunedUpTo[space] ?? 0,
                snapshot: snapshot,
                horizon: _horizon, changeSetsSinceSnapshot: Int64(tail.count),
                bytesSinceSnapshot: Int64(tail.reduce(0) { $0 + $1.payload.count }),
                changeSets: fullSize ? Int64(feed.count) : nil,
                bytes: fullSize ? Int64(feed.reduce(0) { $0 + $1.payload.count }) : nil)
        }
    }

    private func newestSnapshotLocked(_ space: String) -> SnapshotDescriptor? {
        guard
            let (key, stored) = (snapshots[space] ?? [:]).filter({ $0.value.complete })
                .max(by: { ($0.key.upTo, $0.key.device) < ($1.key.upTo, $1.key.device) })
        else { return nil }
        return SnapshotDescriptor(
            upToSequence: key.upTo, device: key.device, parts: stored.count,
            bytes: Int64(stored.parts.values.reduce(0) { $0 + $1.count }))
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Yields after every push that stored something in `space`.
    ///
    /// - Parameter space: the space's name.
    /// - Returns: a stream that ends when the caller stops iterating.
    public func notifications(space: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(
            bufferingPolicy: .bufferingNewest(1))
        let id = lock.withLock {
            nextListener += 1
            listeners[space, default: [:]][nextListener] = continuation
            return nextListener
        }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock { _ = self.listeners[space]?.removeValue(forKey: id) }
        }
        return stream
    }

    /// The space's key check, nil until a device set one.
    ///
    /// - Parameter space: the space's name.
    /// - Returns: the stored value.
    /// - Throws: ``failure`` when set.
    public func keyCheck(space: String) async throws -> Data? {
        try lock.withLock {
            if let failure = _failure { throw failure }
            return keyChecks[space]
        }
    }

    /// Stores `check` unless the space has a key check, and returns the one kept.
    ///
    /// - Parameters:
    ///   - check: the sealed key check.
    ///   - space: the space's name.
    /// - Returns: the stored key check (the first one set).
    /// - Throws: ``failure`` when set.
    public func setKeyCheck(_ check: Data, space: String) async throws -> Data {
        try lock.withLock {
            if let failure = _failure { throw failure }
            if let kept = keyChecks[space] { return kept }
            keyChecks[space] = check
            return check
        }
    }

    /// Removes one change set from the feed, as a space's owner does with one no device can open
    /// (the others keep their server sequences).
    ///
    /// - Parameters:
    ///   - device: the device that sealed it.
    ///   - deviceSequence: that device's sequence number for it.
    ///   - space: the space's name.
    /// - Returns: whether there was such a change set.
    @discardableResult
    public func deleteChangeSet(device: String, deviceSequence: Int64, space: String) -> Bool {
        lock.withLock {
            guard
                let index = feeds[space]?.firstIndex(where: {
                    $0.device == device && $0.deviceSequence == deviceSequence
                })
            else { return false }
            feeds[space]?.remove(at: index)
            positions[space]?["\(device)/\(deviceSequence)"] = nil
            return true
        }
    }

    /// Every stored change set of `space`, in feed order (what a server would hold: ciphertext).
    ///
    /// - Parameter space: the space's name.
    /// - Returns: the feed.
    public func feed(space: String) -> [SealedChangeSet] {
        lock.withLock { feeds[space] ?? [] }
    }

    /// Replaces the stored payload of one change set (tests: a server that alters data).
    ///
    /// - Parameters:
    ///   - serverSequence: the change set's position.
    ///   - space: the space's name.
    ///   - payload: the new bytes.
    public func replacePayload(at serverSequence: Int64, space: String, with payload: Data) {
        lock.withLock {
            guard
                let index = feeds[space]?.firstIndex(where: { $0.serverSequence == serverSequence })
            else { return }
            feeds[space]?[index].payload = payload
        }
    }
}
