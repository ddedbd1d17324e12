import Foundation

/// A transport that keeps the space's feed in memory, shared by the sync spaces of one process:
/// what the tests use, and the smallest example of an app's own backend.
///
/// A backend needs only what this one does: an append-only feed per space in which each change
/// set gets the next server sequence, once per (device, device sequence); reads above a
/// sequence; and, optionally, a signal when the feed grows. It never opens a payload.
///
/// ```swift
/// let server = InProcessTransport()
/// let phone = try await SyncSpace(database: phoneDB, space: "notes", key: key, transport: server, collections: ["notes"])
/// let laptop = try await SyncSpace(database: laptopDB, space: "notes", key: key, transport: server, collections: ["notes"])
/// try await phone.push()
/// try await laptop.pull()
/// ```
public final class InProcessTransport: SyncTransport, @unchecked Sendable {
    // One lock guards the feeds and the listeners (any thread may push, pull or subscribe):
    // that is why the class is `@unchecked Sendable`.
    private let lock = NSLock()
    private var feeds: [String: [SealedChangeSet]] = [:]
    private var positions: [String: [String: Int64]] = [:]  // space -> "device/sequence" -> server sequence
    private var lastSequences: [String: Int64] = [:]  // a feed's counter (deleting keeps the others' numbers)
    private var keyChecks: [String: Data] = [:]
    private var listeners: [String: [Int: AsyncStream<Void>.Continuation]] = [:]
    private var nextListener = 0

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
            guard let start = feed.firstIndex(where: { ($0.serverSequence ?? 0) > after }) else { return [] }
            return Array(feed[start..<min(feed.count, start + limit)])
        }
    }

    /// Yields after every push that stored something in `space`.
    ///
    /// - Parameter space: the space's name.
    /// - Returns: a stream that ends when the caller stops iterating.
    public func notifications(space: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
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
            guard let index = feeds[space]?.firstIndex(where: { $0.device == device && $0.deviceSequence == deviceSequence })
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
            guard let index = feeds[space]?.firstIndex(where: { $0.serverSequence == serverSequence }) else { return }
            feeds[space]?[index].payload = payload
        }
    }
}
