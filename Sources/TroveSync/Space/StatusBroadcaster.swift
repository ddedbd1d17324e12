import Foundation

/// Hands every published status to every subscribed stream. A lock guards the continuations
/// (publishers and subscribers run on any thread); that is why it is `@unchecked Sendable`.
final class StatusBroadcaster: @unchecked Sendable {
    private let lock = NSLock()
    private var continuations: [Int: AsyncStream<SyncStatus>.Continuation] = [:]
    private var next = 0
    private var latest: SyncStatus?

    func subscribe() -> AsyncStream<SyncStatus> {
        let (stream, continuation) = AsyncStream<SyncStatus>.makeStream(
            bufferingPolicy: .bufferingNewest(16))
        lock.lock()
        let id = next
        next += 1
        continuations[id] = continuation
        let current = latest
        lock.unlock()
        if let current { continuation.yield(current) }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.lock()
            self.continuations[id] = nil
            self.lock.unlock()
        }
        return stream
    }

    func publish(_ status: SyncStatus) {
        lock.lock()
        latest = status
        let targets = Array(continuations.values)
        lock.unlock()
        for continuation in targets { continuation.yield(status) }
    }

    deinit {
        for continuation in continuations.values { continuation.finish() }
    }
}
