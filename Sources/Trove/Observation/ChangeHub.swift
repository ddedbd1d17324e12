import Foundation
import TroveSQLite

/// Where commits to one database file are announced to its live queries.
///
/// One hub per file per process, shared by every ``Database`` opened on that path (one per
/// in-memory database). Two sources feed it:
///
/// - in-process commits, exactly: each writer connection reports the tables every commit changed
///   from SQLite's update and WAL hooks, after the commit is visible to readers
///   (`Connection.observeCommits`);
/// - other processes, by polling: while anyone observes, one task reads `PRAGMA data_version` on
///   its own read-only connection every ``pollInterval``; when it moves, some other connection
///   committed something, and every subscriber is told "something may have changed" (they then
///   compare their change-log tokens, which is cheap, before refetching).
final class ChangeHub: @unchecked Sendable {
    // @unchecked Sendable: every var is only touched under `lock`.
    private let lock = NSLock()
    private var subscribers: [Int: ChangeSubscription] = [:]
    private var nextID = 0
    private var poller: Task<Void, Never>?
    private var isStartingPoller = false
    /// The file, or nil for an in-memory database (nothing else can write it: no polling).
    let path: String?

    /// How often the poller checks for commits by other processes.
    static let pollInterval: Duration = .milliseconds(25)

    private init(path: String?) {
        self.path = path
    }

    /// A private hub for an in-memory database.
    static func inMemory() -> ChangeHub { ChangeHub(path: nil) }

    /// The hub of the file at `path`, shared by every database of this process opened on it.
    static func shared(path: String) -> ChangeHub {
        let key = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        return registry.withLock { hubs in
            hubs = hubs.filter { $0.value.hub != nil }
            if let hub = hubs[key]?.hub { return hub }
            let hub = ChangeHub(path: key)
            hubs[key] = WeakHub(hub: hub)
            return hub
        }
    }

    private struct WeakHub { weak var hub: ChangeHub? }
    private static let registry = LockedHubs()

    /// Tells subscribers that a commit changed `tables` (lowercased), or that something may have
    /// changed when nil. Called on writers' threads, right after their commits: only locks and
    /// continuation resumes happen here.
    func publish(_ tables: Set<String>?) {
        for subscriber in lock.withLock({ Array(subscribers.values) }) { subscriber.notify(tables) }
    }

    /// Adds a subscriber; the first one of a file starts the poller, which opens its connection
    /// with `openConnection` and reads the first `data_version` before this returns (so a commit
    /// made after the subscriber's first read is never taken as the baseline). The connection is
    /// opened outside the lock, so writers publishing meanwhile never wait for it.
    func subscribe(_ subscriber: ChangeSubscription, openConnection: (() throws -> Connection)?)
        -> Int
    {
        let (id, startsPoller): (Int, Bool) = lock.withLock {
            nextID += 1
            subscribers[nextID] = subscriber
            let starts = poller == nil && !isStartingPoller && path != nil && openConnection != nil
            if starts { isStartingPoller = true }
            return (nextID, starts)
        }
        guard startsPoller, let openConnection else { return id }
        let started = startPoller(openConnection)
        let unwanted: Task<Void, Never>? = lock.withLock {
            isStartingPoller = false
            if subscribers.isEmpty { return started }  // everyone left while it opened
            poller = started
            return nil
        }
        unwanted?.cancel()
        // Others may have subscribed, and read, while the baseline was being taken: a commit by
        // another process in between would look like no change. One cheap token check each.
        if unwanted == nil { publish(nil) }
        return id
    }

    /// Removes a subscriber; the last one stops the poller (which closes its connection).
    func unsubscribe(_ id: Int) {
        let stopped: Task<Void, Never>? = lock.withLock {
            subscribers[id] = nil
            guard subscribers.isEmpty else { return nil }
            defer { poller = nil }
            return poller
        }
        stopped?.cancel()
    }

    /// Whether a poller is running, and how many subscribers there are (for tests).
    var isPolling: Bool { lock.withLock { poller != nil } }
    var subscriberCount: Int { lock.withLock { subscribers.count } }
    /// Wakes taken by all subscribers so far, and whether every one is waiting again, i.e. has
    /// handled every change announced so far (for tests that show a change ran no read).
    var wakesTaken: Int {
        lock.withLock { Array(subscribers.values) }.reduce(0) { $0 + $1.wakesTaken }
    }
    var allWaiting: Bool { lock.withLock { Array(subscribers.values) }.allSatisfy(\.isWaiting) }

    private func startPoller(_ openConnection: () throws -> Connection) -> Task<Void, Never>? {
        // Without a connection (a file that cannot be opened now) only in-process commits are seen.
        guard let connection = try? openConnection(), let first = try? Self.dataVersion(connection)
        else { return nil }
        let handoff = PollConnection(connection: connection)
        return Task.detached(priority: .medium) { [weak self] in
            let connection = handoff.connection
            var last = first
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.pollInterval)
                guard !Task.isCancelled, let self else { break }
                // A failed read (the file briefly locked by a checkpoint) is retried next time.
                guard let version = try? Self.dataVersion(connection), version != last else {
                    continue
                }
                last = version
                self.publish(nil)
            }
            connection.close()
        }
    }

    /// SQLite's `data_version`: changes whenever another connection commits to the file.
    private static func dataVersion(_ connection: Connection) throws -> Int64 {
        try connection.scalar("PRAGMA data_version")?.int64Value ?? 0
    }

    /// The poller's connection, handed to its task.
    private struct PollConnection: @unchecked Sendable {
        // @unchecked Sendable: opened by `startPoller` and from then on used only by the poll task.
        let connection: Connection
    }

    private final class LockedHubs: @unchecked Sendable {
        // @unchecked Sendable: `hubs` is only touched under `lock`.
        private let lock = NSLock()
        private var hubs: [String: WeakHub] = [:]
        func withLock<T>(_ body: (inout [String: WeakHub]) -> T) -> T {
            lock.withLock { body(&hubs) }
        }
    }
}

/// One live query's place at a ``ChangeHub``: which tables it depends on, and whether a commit
/// that may concern them arrived since it last looked.
final class ChangeSubscription: @unchecked Sendable {
    // @unchecked Sendable: every var is only touched under `lock`.
    private let lock = NSLock()
    /// Lowercased tables the last read touched; nil (before the first read) matches everything.
    private var tables: Set<String>?
    private var pending = false
    /// Whether a pending change is known to concern the tracked tables (an in-process commit to
    /// one of them), rather than "may have" (the poller, or before the first read).
    private var pendingIsCertain = false
    private var cancelled = false
    private var waiter: CheckedContinuation<Void, Never>?
    private var wakes = 0

    /// How often ``nextChange()`` has returned a change, and whether a consumer waits now.
    var wakesTaken: Int { lock.withLock { wakes } }
    var isWaiting: Bool { lock.withLock { waiter != nil } }

    /// Sets what the query depends on now (after each read).
    func track(_ tables: Set<String>) {
        lock.withLock { self.tables = tables }
    }

    /// Marks a change pending when `changed` (nil: unknown) may concern the tracked tables, and
    /// wakes the waiting consumer.
    func notify(_ changed: Set<String>?) {
        let woken: CheckedContinuation<Void, Never>? = lock.withLock {
            if let changed, let tables, tables.isDisjoint(with: changed) { return nil }
            pending = true
            if changed != nil, tables != nil { pendingIsCertain = true }
            defer { waiter = nil }
            return waiter
        }
        woken?.resume()
    }

    /// What ``nextChange()`` found.
    enum Change {
        /// A commit changed a tracked table.
        case certain
        /// Something may have changed (another connection committed; compare the logs).
        case possible
    }

    /// Waits until a change is pending and takes it (clearing it *before* the caller reads, so a
    /// commit during that read is pending again afterwards). Returns nil when the waiting task
    /// is cancelled. Suspends; never blocks a thread.
    func nextChange() async -> Change? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready: Bool = lock.withLock {
                    if pending || cancelled { return true }
                    waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let woken: CheckedContinuation<Void, Never>? = lock.withLock {
                cancelled = true
                defer { waiter = nil }
                return waiter
            }
            woken?.resume()
        }
        return lock.withLock {
            if cancelled { return nil }
            defer {
                pending = false
                pendingIsCertain = false
            }
            wakes += 1
            return pendingIsCertain ? .certain : .possible
        }
    }
}
