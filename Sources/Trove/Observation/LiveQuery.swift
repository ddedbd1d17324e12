import Foundation
import TroveSQLite

/// A read that stays current: an `AsyncSequence` that yields the read's result now, then again
/// after every commit that changes it.
///
/// Commits are seen from this database, from other ``Database`` values on the same file in this
/// process (both at once, through the writer's commit hooks), and from other processes (within
/// a few tens of milliseconds, by polling `PRAGMA data_version`). The read runs on a reader
/// connection, on one snapshot, and records what it touched: the collections it opened and the
/// tables its raw SQL read. A commit to anything else wakes nothing; a possible change is first
/// checked against the collections' change logs, and only a real one reruns the read.
///
/// - Coalescing: the read reruns when the consumer asks for the next value, so a burst of
///   commits while the consumer is busy costs one rerun, not one per commit.
/// - No duplicates: a rerun whose result equals the last one yielded is not yielded.
/// - Errors: a read that throws ends the sequence with that error.
/// - Cancellation: cancelling the consuming task ends the sequence (`next()` returns nil) and
///   releases its subscription; so does dropping the iterator.
///
/// Each iterator is an independent observation (its own subscription and reads).
///
/// ```swift
/// for try await count in items.observeCount(where: Field("category") == "c0") {
///     print("c0 now has", count)
/// }
/// ```
public struct LiveQuery<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let database: Database
    /// Makes one iterator's read, which returns nil when its result equals the last it returned.
    let makeRead: @Sendable () -> @Sendable (ReadTransaction) throws -> Value?

    /// A live query whose results are compared as `Raw` (documents, counts: Equatable values)
    /// and handed out as `transform` makes them (models, which need not be Equatable): a raw
    /// result equal to the last one is neither transformed nor yielded.
    init<Raw: Equatable & Sendable>(
        database: Database, read: @escaping @Sendable (ReadTransaction) throws -> Raw,
        transform: @escaping @Sendable (Raw) throws -> Value
    ) {
        self.database = database
        makeRead = {
            let last = LastResult<Raw>()
            return { transaction in
                let raw = try read(transaction)
                return last.replace(with: raw) ? try transform(raw) : nil
            }
        }
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(database: database, read: makeRead())
    }

    /// Reads when asked for the next value; see ``LiveQuery``.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        let database: Database
        let read: @Sendable (ReadTransaction) throws -> Value?
        private var subscription: SubscriptionHandle?
        private var seen: (region: ObservedRegion, tokens: ObservedRegion.Tokens)?
        private var finished = false

        init(database: Database, read: @escaping @Sendable (ReadTransaction) throws -> Value?) {
            self.database = database
            self.read = read
        }

        /// The current result first; afterwards, waits for a commit that changes it.
        ///
        /// - Returns: nil once the task is cancelled or the sequence has ended.
        /// - Throws: what the read throws (the sequence then ends).
        public mutating func next() async throws -> Value? {
            guard !finished, !Task.isCancelled else { return end() }
            do {
                guard let subscription else {
                    // Subscribe before the first read, so a commit during it is not missed.
                    let handle = database.subscribeToChanges()
                    subscription = handle
                    return try await refresh(handle, checkingLogsFirst: false)
                }
                while true {
                    guard let change = await subscription.subscription.nextChange() else {
                        return end()
                    }
                    let possible = change == .possible
                    if let value = try await refresh(subscription, checkingLogsFirst: possible) {
                        return value
                    }
                }
            } catch {
                _ = end()
                throw error
            }
        }

        /// Reruns the read unless the change logs say nothing it read changed; returns the
        /// result when it differs from the last one yielded (the first always does).
        private mutating func refresh(_ handle: SubscriptionHandle, checkingLogsFirst: Bool)
            async throws -> Value?
        {
            switch try await database.observedRead(
                read, after: seen, checkingLogsFirst: checkingLogsFirst)
            {
            case .unchanged:
                return nil
            case .changed(let value, let region, let tokens):
                if seen?.region.tables != region.tables { handle.subscription.track(region.tables) }
                seen = (region, tokens)
                return value
            }
        }

        private mutating func end() -> Value? {
            finished = true
            subscription = nil  // releases the subscription (and, with the last one, the poller)
            return nil
        }
    }
}

extension LiveQuery where Value: Equatable {
    /// A live query yielding `read`'s results, equal consecutive ones once.
    init(database: Database, read: @escaping @Sendable (ReadTransaction) throws -> Value) {
        self.init(database: database, read: read, transform: { $0 })
    }
}

/// One iterator's last result, to drop equal ones.
private final class LastResult<Raw: Equatable & Sendable>: @unchecked Sendable {
    // @unchecked Sendable: `last` is only touched under `lock` (one read at a time uses it; the
    // lock makes handing it between reader threads safe).
    private let lock = NSLock()
    private var last: Raw?

    /// Stores `raw`; returns whether it differs from the previous one (true the first time).
    func replace(with raw: Raw) -> Bool {
        lock.withLock {
            if let last, last == raw { return false }
            last = raw
            return true
        }
    }
}

/// A subscription to a database's change hub, removed when the last iterator holding it goes.
final class SubscriptionHandle: Sendable {
    let subscription: ChangeSubscription
    let hub: ChangeHub
    let id: Int

    init(hub: ChangeHub, openConnection: (() throws -> Connection)?) {
        self.hub = hub
        subscription = ChangeSubscription()
        id = hub.subscribe(subscription, openConnection: openConnection)
    }

    deinit { hub.unsubscribe(id) }
}

/// What one observed read found.
enum ObservedResult<Value: Sendable>: Sendable {
    /// The change logs of everything it read are where they were: the result cannot differ.
    case unchanged
    /// The read ran: its result, what it read, and the logs' positions on the same snapshot.
    case changed(Value, ObservedRegion, ObservedRegion.Tokens)
}

extension Database {
    /// Subscribes to commits on this database's file (starting the poller for other processes'
    /// commits, if it is not running).
    nonisolated func subscribeToChanges() -> SubscriptionHandle {
        SubscriptionHandle(
            hub: changeHub, openConnection: readers.map { pool in { try pool.openConnection() } })
    }

    /// Runs an observed read on one snapshot: with `checkingLogsFirst`, first the change-log
    /// tokens of the previous run's region (returning `.unchanged` when they have not moved and
    /// the region is fully logged); then the read itself, recording the collections and tables
    /// it touches.
    ///
    /// Without the reader pool's fairness yield: the caller has just resumed from waiting for a
    /// commit, so it cannot be a loop of reads starving the writer.
    nonisolated func observedRead<Value: Sendable>(
        _ read: @escaping @Sendable (ReadTransaction) throws -> Value,
        after previous: (region: ObservedRegion, tokens: ObservedRegion.Tokens)?,
        checkingLogsFirst: Bool
    ) async throws -> ObservedResult<Value> {
        try await reading(yielding: false) { connection, lookup in
            var before: ObservedRegion.Tokens?
            if checkingLogsFirst, let previous, previous.region.isFullyLogged {
                let now = try previous.region.tokens(connection)
                if now == previous.tokens { return .unchanged }
                before = now
            }
            let recorder = RegionRecorder()
            let value = try withoutActuallyEscaping(lookup) { lookup in
                try read(
                    ReadTransaction(
                        connection: connection,
                        lookup: { name in
                            let store = try lookup(name)
                            recorder.collection(store.name, log: store.layout.log)
                            return store
                        },
                        graph: documentStores.graph,
                        recorder: recorder))
            }
            let region = try ObservedRegion.resolve(recorder, on: connection)
            // Same snapshot: the tokens read before the read are still current.
            if let before, region == previous?.region { return .changed(value, region, before) }
            return .changed(value, region, try region.tokens(connection))
        }
    }
}
