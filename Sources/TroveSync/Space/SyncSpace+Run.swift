import Foundation
import Trove

extension SyncSpace {
    /// Keeps the space in sync until the calling task is cancelled: pushes local changes soon
    /// after they commit, pulls when the transport announces new change sets (PostgreSQL:
    /// LISTEN/NOTIFY) and at least every `pollInterval`. After a failure (visible in
    /// ``status`` and ``statuses``) it waits and tries again, the wait doubling from
    /// `initialBackoff` up to `maximumBackoff` (with jitter, so many devices do not retry in step).
    /// After a sync (at most every ten minutes) it uploads a snapshot when ``snapshotPolicy`` says
    /// one is due.
    ///
    /// ```swift
    /// let syncing = Task { try await sync.run() }
    /// // ...
    /// syncing.cancel()
    /// ```
    /// - Parameters:
    ///   - pollInterval: the longest time between two pulls without a notification.
    ///   - initialBackoff: the first wait after a failure.
    ///   - maximumBackoff: the longest wait after repeated failures.
    /// - Throws: nothing so far: it returns when its task is cancelled, and every failure is
    ///   retried (and shown in ``status``) rather than thrown.
    public func run(
        pollInterval: Duration = .seconds(30), initialBackoff: Duration = .milliseconds(100),
        maximumBackoff: Duration = .seconds(30)
    ) async throws {
        let (wakeups, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let notifications = transport.notifications(space: space)
        // The count of pending changes with the device's clock, which every local write moves: a
        // live read yields a value only when it differs from the last one, and a count alone can
        // read the same after a push cleared it and a new write set it again (a lost wake-up,
        // leaving that write to the next poll).
        let pending = database.observe { read in
            let row = try read.query(
                "SELECT (SELECT count(*) FROM \(SyncTables.records) WHERE pending = 1), hlc FROM \(SyncTables.device)"
            ).first
            return [row?.int64(at: 0) ?? 0, row?.int64(at: 1) ?? 0]
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in notifications { wake.yield() }
            }
            group.addTask {
                do {
                    for try await value in pending where value[0] > 0 { wake.yield() }
                } catch {}
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: pollInterval)
                    wake.yield()
                }
            }
            var backoff = initialBackoff
            wake.yield()
            for await _ in wakeups {
                if Task.isCancelled { break }
                do {
                    try await push()
                    try await pull()
                    // A failed snapshot is no failed sync: the feed still serves every device.
                    if lastSnapshotCheck.map({ $0.duration(to: .now) > .seconds(600) }) ?? true {
                        lastSnapshotCheck = .now
                        _ = try? await snapshotIfDue()
                    }
                    // Changes committed during the pull are pushed at once.
                    if status.pendingChanges > 0 { wake.yield() }
                    backoff = initialBackoff
                } catch {
                    if Task.isCancelled { break }
                    let jitter = Double.random(in: 0.8...1.2)
                    try? await Task.sleep(for: backoff * jitter)
                    backoff = min(backoff * 2, maximumBackoff)
                    wake.yield()
                }
            }
            wake.finish()
            group.cancelAll()
        }
    }
}
