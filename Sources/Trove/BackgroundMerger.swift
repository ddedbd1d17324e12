import Foundation
import TroveSQLite

/// Merges the FTS5 segments of text indexes on a background connection while nobody writes.
///
/// FTS5 writes each transaction's new terms as a segment and by default merges segments inside
/// the writer's commits (`automerge`). For batch inserts that merging was about a third of the
/// time (BENCHMARKS.md, "Batch insert"). Trove's text indexes therefore leave the writer only
/// FTS5's crisis merges (a level reaching ``CollectionSchema/ftsCrisisMerge`` segments) and do
/// the rest here: after a write, once the file has had no Trove write for ``quietPeriod``, it runs
/// FTS5's `merge` command in short write transactions (``pagesPerStep`` leaf pages each) until
/// FTS5 reports that no level holds enough segments to merge, which leaves the index shaped as
/// the default automerge would have.
///
/// A step never waits for the write lock: when another connection writes, it gives up and tries
/// again after the next quiet period; and it holds the lock for a few milliseconds only, so the
/// app's own writes are not held up. Searches are correct whatever the segments: merging only
/// makes FTS5 queries (snippets, FTS5 syntax) read fewer of them.
final class BackgroundMerger: @unchecked Sendable {
    /// How long the file must go without a Trove write before merging starts.
    let quietPeriod: DispatchTimeInterval
    /// Leaf pages merged per write transaction.
    let pagesPerStep: Int

    private let path: String
    private let queue = DispatchQueue(label: "trove.fts-merge", qos: .utility)
    // Guards `pending` and `writes`: updated by the writer, read on `queue`.
    private let lock = NSLock()
    private var pending: Set<String> = []
    private var writes = 0
    // Used only on `queue`.
    private var connection: Connection?

    init(path: String, quietPeriod: DispatchTimeInterval = .milliseconds(250), pagesPerStep: Int = 256) {
        self.path = path
        self.quietPeriod = quietPeriod
        self.pagesPerStep = pagesPerStep
    }

    deinit {
        queue.sync { connection?.close() }
    }

    /// Records a committed write to the FTS5 table `fts` and schedules a merge after the quiet period.
    func noteWrite(fts: String) {
        let generation = lock.withLock {
            pending.insert(fts)
            writes += 1
            return writes
        }
        queue.asyncAfter(deadline: .now() + quietPeriod) { [weak self] in
            self?.mergeIfQuiet(since: generation)
        }
    }

    /// Whether merges are still waiting to run (for tests and benchmarks).
    var hasPendingWork: Bool {
        lock.withLock { !pending.isEmpty }
    }

    /// Runs on `queue` once the quiet period after write number `generation` has passed.
    private func mergeIfQuiet(since generation: Int) {
        func quiet() -> Bool { lock.withLock { writes == generation } }
        guard quiet() else { return }  // a later write scheduled its own run
        for fts in lock.withLock({ pending.sorted() }) {
            while quiet() {
                switch step(fts) {
                case .merged: continue
                case .done:
                    lock.withLock { _ = pending.remove(fts) }
                case .busy:
                    queue.asyncAfter(deadline: .now() + quietPeriod) { [weak self] in
                        self?.mergeIfQuiet(since: generation)
                    }
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
