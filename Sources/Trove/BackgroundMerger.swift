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
    init(path: String, quietPeriod: DispatchTimeInterval = .milliseconds(250), pagesPerStep: Int = 256) {
        let queue = DispatchQueue(label: "trove.fts-merge", qos: .utility)
        self.queue = queue
        worker = MergeWorker(path: path, queue: queue, quietPeriod: quietPeriod, pagesPerStep: pagesPerStep)
    }

    deinit {
        // Wait for a step in flight; scheduled runs that fire later find the worker closed.
        queue.sync { worker.close() }
    }

    /// Records a committed write to the FTS5 table `fts` and schedules a merge after the quiet period.
    func noteWrite(fts: String) {
        worker.noteWrite(fts: fts)
    }

    /// Whether merges are still waiting to run (for tests and benchmarks).
    var hasPendingWork: Bool { worker.hasPendingWork }
}

/// The merging side: its own connection, used only on the merger's queue.
private final class MergeWorker: @unchecked Sendable {
    let path: String
    let queue: DispatchQueue
    let quietPeriod: DispatchTimeInterval
    let pagesPerStep: Int
    // Guards `pending` and `writes`: updated by the writer, read on `queue`.
    private let lock = NSLock()
    private var pending: Set<String> = []
    private var writes = 0
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
        let generation = lock.withLock {
            pending.insert(fts)
            writes += 1
            return writes
        }
        schedule(since: generation)
    }

    var hasPendingWork: Bool {
        lock.withLock { !pending.isEmpty }
    }

    /// On `queue`: no more merging; closes the connection.
    func close() {
        isClosed = true
        connection?.close()
        connection = nil
    }

    private func schedule(since generation: Int) {
        queue.asyncAfter(deadline: .now() + quietPeriod) { [self] in mergeIfQuiet(since: generation) }
    }

    /// Runs on `queue` once the quiet period after write number `generation` has passed.
    private func mergeIfQuiet(since generation: Int) {
        func quiet() -> Bool { !isClosed && lock.withLock { writes == generation } }
        guard quiet() else { return }  // closed, or a later write scheduled its own run
        for fts in lock.withLock({ pending.sorted() }) {
            while quiet() {
                switch step(fts) {
                case .merged: continue
                case .done:
                    lock.withLock { _ = pending.remove(fts) }
                case .busy:
                    schedule(since: generation)
                    return
                }
                break
            }
        }
    }

    private enum StepResult { case merged, done, busy }

    /// One short write transaction of merging.
    private func step(_ fts: String) -> StepResult {
        do {
            if connection == nil {
                // No busy wait: a step that can't have the lock at once comes back later.
                let opened = try Connection(.file(path), options: .init(create: false, walMode: false, busyTimeout: .zero))
                try opened.registerTroveTokenizer()  // FTS5 loads a table's tokenizer on connect
                // The writer's checkpointer copies the log back; this connection never holds the
                // checkpoint lock (which `Database.checkpoint()` would find taken).
                try opened.execute(script: "PRAGMA wal_autocheckpoint = 0")
                connection = opened
            }
            let connection = connection!
            let before = connection.totalChanges
            try connection.transaction(.immediate) {
                try connection.execute("INSERT INTO \"\(fts)\"(\"\(fts)\", rank) VALUES ('merge', ?)", [.integer(Int64(pagesPerStep))])
            }
            // FTS5's documented signal: a merge that did any work changes at least two rows.
            return connection.totalChanges - before >= 2 ? .merged : .done
        } catch let error as SQLiteError where error.code == .busy || error.code == .locked {
            return .busy
        } catch {
            // The table is gone (collection dropped) or the file can't be opened: nothing to do.
            return .done
        }
    }
}
