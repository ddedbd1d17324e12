import Foundation
import TroveSQLite

/// Merges the FTS5 segments of text indexes on a background connection while nobody writes.
///
/// FTS5 writes each transaction's new terms as a segment and by default merges segments inside
/// the writer's commits (`automerge`). For batch inserts that merging was about a third of the
/// time (BENCHMARKS.md, "Batch insert"). Trove's text indexes therefore leave the writer only
/// FTS5's crisis merges (a level reaching ``CollectionSchema/ftsCrisisMerge`` segments) and do
/// the rest here: after a write, once the file has had no Trove write for a quiet period (250 ms),
/// it runs FTS5's `merge` command in short write transactions (256 leaf pages each) until
/// FTS5 reports that no level holds enough segments to merge, which leaves the index shaped as
/// the default automerge would have.
///
/// A step never waits for the write lock: when another connection writes, it gives up and tries
/// again after the next quiet period; and it holds the lock for a few milliseconds only, so the
/// app's own writes are not held up. Searches are correct whatever the segments: merging only
/// makes FTS5 queries (snippets, FTS5 syntax) read fewer of them.
final class BackgroundMerger: @unchecked Sendable {
    private let queue: DispatchQueue
    // What the queue's blocks use. They never hold the merger itself, so its deinit (which waits
    // for the queue) can't end up running on the queue.
    private let worker: MergeWorker

    /// - Parameters:
    ///   - path: the database file.
    ///   - quietPeriod: how long the file must go without a Trove write before merging starts.
    ///   - pagesPerStep: leaf pages merged per write transaction.
    init(
        path: String, encryption: EncryptionKey? = nil,
        quietPeriod: DispatchTimeInterval = .milliseconds(250),
        pagesPerStep: Int = 256
    ) {
        let queue = DispatchQueue(label: "trove.fts-merge", qos: .utility)
        self.queue = queue
        worker = MergeWorker(
            path: path, queue: queue, quietPeriod: quietPeriod, pagesPerStep: pagesPerStep)
        worker.encryption = encryption
    }

    deinit {
        // Wait for a step in flight; scheduled runs that fire later find the worker closed.
        queue.sync { worker.close() }
    }

    /// Records a committed write to the FTS5 table `fts` (its quoted name) and makes sure a merge
    /// runs once the writes pause.
    func noteWrite(fts: String) {
        worker.noteWrite(fts: fts)
    }

    /// Records that a connection of the file waits for the lock: a merge in progress stops after
    /// its current step and starts again once writes pause.
    func giveWay() {
        worker.giveWay()
    }

    /// One short write transaction of FTS5 merging on `connection`: what the background worker
    /// runs repeatedly, and `Database.mergeTextIndexes()` too.
    ///
    /// - Parameter fts: the FTS5 table's quoted name.
    /// - Returns: whether FTS5 found anything to merge.
    static func mergeStep(on connection: Connection, fts: String, pages: Int = 256) throws -> Bool {
        let before = connection.totalChanges
        try connection.transaction(.immediate) {
            try connection.execute(
                "INSERT INTO \(fts)(\(fts), rank) VALUES ('merge', ?)", [.integer(Int64(pages))])
        }
        // FTS5's documented signal: a merge that did any work changes at least two rows.
        return connection.totalChanges - before >= 2
    }
}

/// The merging side: its own connection, used only on the merger's queue.
private final class MergeWorker: @unchecked Sendable {
    let path: String
    let queue: DispatchQueue
    let quietPeriod: DispatchTimeInterval
    let pagesPerStep: Int
    // Guards `pending`, `writes` and `isArmed`: updated by the writer, read on `queue`.
    private let lock = NSLock()
    private var pending: Set<String> = []
    private var writes = 0
    // Whether a timer is waiting to fire: one at a time, however many writes come in.
    private var isArmed = false
    // The writer's key when the file is encrypted; set once, before any merge is scheduled.
    var encryption: EncryptionKey?
    // Used only on `queue`.
    private var connection: Connection?
    private var isClosed = false

    init(path: String, queue: DispatchQueue, quietPeriod: DispatchTimeInterval, pagesPerStep: Int) {
        self.path = path
        self.queue = queue
        self.quietPeriod = quietPeriod
        self.pagesPerStep = pagesPerStep
    }

    func noteWrite(fts: String) {
        let generation: Int? = lock.withLock {
            pending.insert(fts)
            writes += 1
            return arm()
        }
        if let generation { schedule(since: generation) }
    }

    /// Counts as a write (the merging loop stops at its next check, and a quiet period starts
    /// again) when there is something to merge; nothing otherwise.
    func giveWay() {
        let generation: Int? = lock.withLock {
            guard !pending.isEmpty else { return nil }
            writes += 1
            return arm()
        }
        if let generation { schedule(since: generation) }
    }

    /// Under the lock: arms the timer unless it is armed already; returns the write count to
    /// wait after, or nil.
    private func arm() -> Int? {
        guard !isArmed else { return nil }
        isArmed = true
        return writes
    }

    /// On `queue`: no more merging; closes the connection.
    func close() {
        isClosed = true
        connection?.close()
        connection = nil
    }

    private func schedule(since generation: Int) {
        queue.asyncAfter(deadline: .now() + quietPeriod) { [self] in fire(since: generation) }
    }

    /// Runs on `queue` a quiet period after write number `generation` was recorded.
    private func fire(since generation: Int) {
        guard !isClosed else { return }
        let latest: Int = lock.withLock {
            if writes == generation { isArmed = false }
            return writes
        }
        // Writes came in meanwhile: wait a quiet period after the latest (the timer stays armed).
        guard latest == generation else { return schedule(since: latest) }
        func quiet() -> Bool { !isClosed && lock.withLock { writes == generation } }
        for fts in lock.withLock({ pending.sorted() }) {
            while quiet() {
                switch step(fts) {
                case .merged: continue
                case .done:
                    lock.withLock { _ = pending.remove(fts) }
                case .busy:
                    // Another connection is writing: come back after a quiet period (unless a
                    // new write armed the timer already).
                    if let next = lock.withLock({ arm() }) { schedule(since: next) }
                    return
                }
                break
            }
        }
        // A write that stopped the loop armed its own timer.
    }

    private enum StepResult { case merged, done, busy }

    /// One short write transaction of merging.
    private func step(_ fts: String) -> StepResult {
        do {
            if connection == nil {
                // No busy wait: a step that can't have the lock at once comes back later.
                let opened = try Connection(
                    .file(path),
                    options: .init(
                        create: false, walMode: false, busyTimeout: .zero, encryption: encryption))
                try opened.registerTroveTokenizer()  // FTS5 loads a table's tokenizer on connect
                // The writer's checkpointer copies the log back; this connection never holds the
                // checkpoint lock (which `Database.checkpoint()` would find taken).
                try opened.execute(script: "PRAGMA wal_autocheckpoint = 0")
                connection = opened
            }
            return try BackgroundMerger.mergeStep(on: connection!, fts: fts, pages: pagesPerStep)
                ? .merged : .done
        } catch let error as SQLiteError where error.code == .busy || error.code == .locked {
            return .busy
        } catch {
            // The table is gone (collection dropped) or the file can't be opened: nothing to do.
            return .done
        }
    }
}
