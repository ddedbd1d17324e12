import CSQLite
import Foundation

/// Copies a WAL database's log back into the main file from a second connection on a background
/// thread, instead of inside the writer's commits.
///
/// SQLite's automatic checkpoint runs in the commit that pushes the log past 1,000 pages: that
/// commit reads the new pages back from the log, writes them into the database file and syncs
/// both, while the caller waits. For a batch insert this was about a quarter of the wall time
/// (BENCHMARKS.md, "Batch insert"). With a checkpointer attached, the writer's commits only append
/// to the log; a utility-priority queue runs a passive checkpoint (which never blocks readers or
/// the writer) whenever the log has grown past ``thresholdPages``. Once the log passes
/// ``fallbackPages`` the writer finishes the copy in its own commit, as SQLite would have, so that
/// the log can restart from its beginning: that copy is short, because the background queue has
/// copied all but the last few commits.
///
/// Durability is unchanged: a commit is as safe in the log as it was before; the checkpoint only
/// moves pages, and SQLite makes that crash-safe itself.
///
/// ```swift
/// let writer = try Connection(path: "notes.sqlite")
/// let checkpointer = try BackgroundCheckpointer(attachingTo: writer)
/// // … write through `writer`; the log is copied back on another thread …
/// checkpointer.flush()  // optional: wait for the checkpoint in flight
/// ```
///
/// The checkpointer keeps the writer connection alive and detaches from it in `deinit`, after
/// waiting for a checkpoint in flight; release both together.
public final class BackgroundCheckpointer: @unchecked Sendable {
    /// Log size, in pages, at which a commit asks for a background checkpoint (SQLite's own
    /// automatic checkpoint threshold).
    public let thresholdPages: Int32
    /// Log size, in pages, at which the writer checkpoints in its own commit instead.
    public let fallbackPages: Int32

    private let writer: Connection
    private let queue = DispatchQueue(label: "trove.wal-checkpoint", qos: .utility)
    // What the queue's blocks use. They never hold the checkpointer itself, so its deinit (which
    // waits for the queue) can't end up running on the queue.
    private let worker: Worker
    // Background runs started when the writer last copied the log itself (writer's thread only).
    private var runsStartedAtLastFallback = 0
    // Its listener on the writer's WAL hook (shared with commit observation).
    private var listenerID = 0

    /// Attaches a checkpointer to a read-write connection on a WAL file. Replaces the
    /// connection's automatic checkpoint (`PRAGMA wal_autocheckpoint`).
    ///
    /// - Parameters:
    ///   - writer: the connection whose commits grow the log.
    ///   - thresholdPages: log pages after which a background checkpoint starts.
    ///   - fallbackPages: log pages after which the writer checkpoints itself.
    /// - Throws: ``SQLiteError`` when `writer` is in memory or read-only (there is no log to copy).
    public init(
        attachingTo writer: Connection, thresholdPages: Int32 = 1000, fallbackPages: Int32 = 4000
    ) throws {
        guard case .file(let path) = writer.location, !writer.isReadOnly else {
            throw SQLiteError(
                extendedCode: .misuse,
                message: "a background checkpointer needs a writable database file")
        }
        self.writer = writer
        self.worker = Worker(path: path, encryption: writer.options.encryption)
        self.thresholdPages = thresholdPages
        self.fallbackPages = fallbackPages
        // Unowned: the writer keeps the listener, and deinit removes it before self is gone.
        listenerID = writer.addWALListener { [unowned self] database, pages in
            self.committed(database: database, pages: pages)
        }
    }

    deinit {
        writer.removeWALListener(listenerID)
        // Nothing can schedule now; wait for a checkpoint in flight, then close its connection.
        queue.sync { worker.close() }
    }

    /// How many background checkpoints have run (for tests and diagnostics).
    public var completedCheckpoints: Int {
        queue.sync { worker.completed }
    }

    /// Waits for the checkpoint in flight, if any.
    public func flush() {
        queue.sync {}
    }

    /// Called from the WAL hook after each commit, on the writer's thread.
    fileprivate func committed(database: UnsafePointer<CChar>?, pages: Int32) {
        if pages >= fallbackPages {
            let started = worker.runsStarted
            if started == runsStartedAtLastFallback {
                // No background checkpoint since the last fallback: one large transaction grew the
                // log past the limit by itself. Hand the whole copy to the queue instead of
                // making this commit wait for it; the next commit comes back here.
                if worker.schedule() { queue.async { [worker] in worker.run() } }
                return
            }
            // The log only restarts from its beginning when a transaction begins with every page
            // copied back, which a checkpoint running beside a busy writer rarely achieves. So
            // here the writer waits for the checkpoint in flight (it copied all but the last few
            // commits) and copies the rest itself; the next transaction then restarts the log.
            queue.sync {}
            sqlite3_wal_checkpoint_v2(writer.db, database, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            runsStartedAtLastFallback = worker.runsStarted
            return
        }
        guard pages >= thresholdPages, worker.schedule() else { return }
        queue.async { [worker] in worker.run() }
    }
}

/// The checkpointing side: its own connection, used only on the checkpointer's queue.
private final class Worker: @unchecked Sendable {
    let path: String
    // The writer's key, when the file is encrypted.
    let encryption: EncryptionKey?
    // Guards `isScheduled` (set by the writer's thread, cleared on the queue) and `started`.
    private let lock = NSLock()
    private var isScheduled = false
    private var started = 0
    private var connection: Connection?
    private(set) var completed = 0

    init(path: String, encryption: EncryptionKey?) {
        self.path = path
        self.encryption = encryption
    }

    /// Marks a checkpoint as scheduled; false when one is already waiting to start.
    func schedule() -> Bool {
        lock.withLock {
            defer { isScheduled = true }
            return !isScheduled
        }
    }

    /// Checkpoints started so far.
    var runsStarted: Int { lock.withLock { started } }

    func run() {
        lock.withLock {
            isScheduled = false
            started += 1
        }
        do {
            if connection == nil {
                // Not creating, not switching modes: the writer owns the file and its settings.
                connection = try Connection(
                    .file(path),
                    options: .init(
                        create: false, walMode: false, foreignKeys: false, encryption: encryption))
            }
            // Passive: copies what it can without waiting for, or blocking, readers and the writer.
            _ = sqlite3_wal_checkpoint_v2(connection!.db, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        } catch {
            // Best effort: if the file can't be opened here, the writer's fallback still bounds the log.
        }
        completed += 1
    }

    func close() {
        connection?.close()
        connection = nil
    }
}
