import Foundation
import TroveSQLite

/// A small pool of read-only WAL connections beside the writer, so reads and searches run in
/// parallel with writes and with each other (ARCHITECTURE.md, "Concurrency").
///
/// Connections open on first use, up to ``capacity``; a task that finds all in use waits (an
/// async suspension, never a blocking sleep) until one is returned. Each read runs in one read
/// transaction, so it sees one committed snapshot.
final class ReaderPool: @unchecked Sendable {
    // @unchecked Sendable: `idle`, `waiters` and `opened` are only touched under `lock`; a
    // Connection is used by one task at a time: it is either in `idle` or checked out by exactly
    // one `withReader` call.
    private let lock = NSLock()
    private var idle: [Connection] = []
    private var waiters: [CheckedContinuation<Handoff, Never>] = []
    private var opened = 0
    /// When a read last yielded (`DispatchTime` nanoseconds); see ``withReader(transaction:yielding:_:)``.
    private var lastYield: UInt64 = 0
    let path: String
    let capacity: Int
    let busyTimeout: Duration
    /// The key of an encrypted file (each reader opens it through the encrypting VFS).
    let encryption: EncryptionKey?

    init(path: String, capacity: Int, busyTimeout: Duration, encryption: EncryptionKey? = nil) {
        self.path = path
        self.capacity = capacity
        self.busyTimeout = busyTimeout
        self.encryption = encryption
    }

    /// Bytes of the file readers map into memory (SQLite's `mmap_size`).
    static let mmapSize = 1 << 30

    /// The default number of readers: one per core, 2 to 4.
    static var defaultCapacity: Int { max(2, min(4, ProcessInfo.processInfo.activeProcessorCount)) }

    /// Runs `body` on a reader connection inside one read transaction, on the calling thread.
    ///
    /// It first yields when no read on this pool has yielded for ``yieldInterval``: a loop of
    /// reads would otherwise keep Swift's cooperative threads (one per core) busy without ever
    /// suspending, and the writer actor's jobs would wait behind it. Yielding on every read
    /// bounded that wait by one read but cost each read a trip through the global executor,
    /// often to another thread that must be woken (more than the SQL of a small query on a
    /// busy machine); once per interval bounds the wait by the interval. (Running reads on a
    /// Dispatch queue instead cost two thread hops per read, a large share of a small query's
    /// latency on a busy machine.)
    ///
    /// - Parameters:
    ///   - transaction: false for a body that runs one statement (which is its own snapshot),
    ///     saving BEGIN and COMMIT.
    ///   - yielding: false for a caller that has just resumed from a suspension of its own (a
    ///     live query woken by a commit), which cannot be such a loop.
    func withReader<T: Sendable>(
        transaction: Bool = true, yielding: Bool = true, _ body: @Sendable (Connection) throws -> T
    ) async throws -> T {
        if yielding, yieldIsDue() { await Task.yield() }
        let connection = try await checkout()
        defer { checkin(connection) }
        guard transaction else { return try body(connection) }
        return try connection.transaction(.deferred) { try body(connection) }
    }

    /// How long reads may run back to back on the cooperative threads before one yields.
    static let yieldInterval: UInt64 = 1_000_000  // 1 ms, in nanoseconds

    /// Whether this read should yield (and if so, the interval starts again).
    private func yieldIsDue() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return lock.withLock {
            guard now &- lastYield >= Self.yieldInterval else { return false }
            lastYield = now
            return true
        }
    }

    private func checkout() async throws -> Connection {
        enum Next {
            case ready(Connection)
            case open, wait
        }
        let next: Next = lock.withLock {
            if let connection = idle.popLast() { return .ready(connection) }
            if opened < capacity {
                opened += 1
                return .open
            }
            return .wait
        }
        switch next {
        case .ready(let connection): return connection
        case .open:
            do {
                return try openConnection()
            } catch {
                lock.withLock { opened -= 1 }
                throw error
            }
        case .wait:
            let handed: Handoff = await withCheckedContinuation { continuation in
                lock.withLock {
                    if let connection = idle.popLast() {
                        continuation.resume(returning: Handoff(connection: connection))
                    } else {
                        waiters.append(continuation)
                    }
                }
            }
            return handed.connection
        }
    }

    private func checkin(_ connection: Connection) {
        let waiter: CheckedContinuation<Handoff, Never>? = lock.withLock {
            if !waiters.isEmpty { return waiters.removeFirst() }
            idle.append(connection)
            return nil
        }
        waiter?.resume(returning: Handoff(connection: connection))
    }

    /// A connection passed from the task returning it to the task waiting for it.
    private struct Handoff: @unchecked Sendable {
        // @unchecked Sendable: the returning task gives the connection up entirely (it is in no
        // list and no other task holds it) before the waiting task receives it.
        let connection: Connection
    }

    /// Opens a reader connection configured like the pool's (also used outside the pool, by the
    /// live queries' `data_version` poller).
    func openConnection() throws -> Connection {
        var options = Connection.Options(
            readOnly: true, walMode: false, busyTimeout: busyTimeout, foreignKeys: false)
        options.encryption = encryption
        let connection = try Connection(.file(path), options: options)
        // The writer's page cache size (Database.init): with 16 KB pages SQLite's default 2 MB holds
        // only 128 pages. And memory-mapped reads: a page that misses the cache is read in place
        // instead of copied from the OS cache (16 KB per row lookup in an index scan).
        // (The encrypting VFS refuses mappings, so encrypted files read through its xRead.)
        // Encrypted files keep the writer's larger cache: a page that misses it is decrypted again.
        let cacheKB = encryption == nil ? 16384 : Database.encryptedCacheKB
        try connection.execute(
            script:
                "PRAGMA cache_size = -\(cacheKB); PRAGMA mmap_size = \(encryption == nil ? Self.mmapSize : 0)"
        )
        try connection.registerTroveTokenizer()
        try connection.registerTroveFunctions()  // geo queries' exact distance
        return connection
    }
}

/// The document collections opened on a database, readable from any task.
final class DocumentStoreRegistry: @unchecked Sendable {
    // @unchecked Sendable: `stores` is only touched under `lock`; DocumentStore is Sendable.
    private let lock = NSLock()
    private var stores: [String: DocumentStore] = [:]
    /// The file's links (one edge table for every collection).
    let graph = GraphStore()

    subscript(name: String) -> DocumentStore? {
        get { lock.withLock { stores[name] } }
        set { lock.withLock { stores[name] = newValue } }
    }

    /// The store already registered under `name`, else `store`, registered now (two readers may
    /// open one collection at once; both then use the first).
    func insertIfAbsent(_ name: String, _ store: DocumentStore) -> DocumentStore {
        lock.withLock {
            if let known = stores[name] { return known }
            stores[name] = store
            return store
        }
    }

    /// Every collection opened so far.
    var all: [DocumentStore] { lock.withLock { Array(stores.values) } }

    /// Lets every open collection's in-memory indexes take in what the writer just committed,
    /// then saves the HNSW snapshots that are due (``DocumentStore/autosaveSnapshots(on:)``).
    func catchUpAfterCommit(_ connection: Connection) {
        let stores = all
        for store in stores { store.indexes.catchUpAfterCommit(connection) }
        graph.indexes.catchUpAfterCommit(connection)
        for store in stores { store.autosaveSnapshots(on: connection) }
    }

    /// After a commit on the writer that changed `tables` (lowercased): has `merger` merge the
    /// full-text index of every open collection whose table changed, once writes pause.
    func noteTextWrites(_ tables: Set<String>, to merger: BackgroundMerger) {
        for store in all
        where store.schema.fullText != nil && tables.contains(store.name.lowercased()) {
            merger.noteWrite(fts: store.layout.fts)
        }
    }
}
