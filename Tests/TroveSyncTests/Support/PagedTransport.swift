import Foundation
import TroveSync

/// An ``InProcessTransport`` seen in small pages, with a hook that runs once before the page
/// after a given cursor is read: what other devices do between two pages of one pull. With
/// ``partsGone`` every snapshot part reads as gone, as when newer snapshots keep replacing the
/// one being downloaded; with ``snapshotHidden`` the feed has no complete snapshot.
final class PagedTransport: SnapshotTransport, @unchecked Sendable {
    // `base` is Sendable itself; the hook and the flags are read and set under `lock`.
    let base: InProcessTransport
    let pageSize: Int
    private let lock = NSLock()
    private var hook: (after: Int64, run: @Sendable () async throws -> Void)?
    private var _partsGone = false
    private var _snapshotHidden = false

    var partsGone: Bool {
        get { lock.withLock { _partsGone } }
        set { lock.withLock { _partsGone = newValue } }
    }
    var snapshotHidden: Bool {
        get { lock.withLock { _snapshotHidden } }
        set { lock.withLock { _snapshotHidden = newValue } }
    }

    init(_ base: InProcessTransport, pageSize: Int) {
        self.base = base
        self.pageSize = pageSize
    }

    /// Runs `body` once, before the first page read after `cursor`.
    func beforePage(after cursor: Int64, _ body: @escaping @Sendable () async throws -> Void) {
        lock.withLock { hook = (cursor, body) }
    }

    private func runHook(after: Int64) async throws {
        let body: (@Sendable () async throws -> Void)? = lock.withLock {
            guard let hook, hook.after == after else { return nil }
            self.hook = nil
            return hook.run
        }
        try await body?()
    }

    func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] {
        try await base.push(changeSets, space: space)
    }
    func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        try await runHook(after: after)
        return try await base.pull(space: space, after: after, limit: min(limit, pageSize))
    }
    func pull(space: String, after: Int64, limit: Int, maxBytes: Int) async throws
        -> [SealedChangeSet]
    {
        try await runHook(after: after)
        return try await base.pull(
            space: space, after: after, limit: min(limit, pageSize), maxBytes: maxBytes)
    }
    func notifications(space: String) -> AsyncStream<Void> { base.notifications(space: space) }
    func keyCheck(space: String) async throws -> Data? { try await base.keyCheck(space: space) }
    func setKeyCheck(_ check: Data, space: String) async throws -> Data {
        try await base.setKeyCheck(check, space: space)
    }
    func putSnapshotPart(
        _ payload: Data, part: Int, of parts: Int, upTo: Int64, device: String, space: String
    ) async throws {
        try await base.putSnapshotPart(
            payload, part: part, of: parts, upTo: upTo, device: device, space: space)
    }
    func finishSnapshot(upTo: Int64, device: String, space: String) async throws -> Bool {
        try await base.finishSnapshot(upTo: upTo, device: device, space: space)
    }
    func snapshotPart(_ part: Int, of snapshot: SnapshotDescriptor, space: String) async throws
        -> Data?
    {
        if partsGone { return nil }
        return try await base.snapshotPart(part, of: snapshot, space: space)
    }
    func reportCursor(_ pulledUpTo: Int64, device: String, space: String) async throws -> Int64 {
        try await base.reportCursor(pulledUpTo, device: device, space: space)
    }
    func feedState(space: String, fullSize: Bool) async throws -> FeedState {
        var state = try await base.feedState(space: space, fullSize: fullSize)
        if snapshotHidden { state.snapshot = nil }
        return state
    }
}
