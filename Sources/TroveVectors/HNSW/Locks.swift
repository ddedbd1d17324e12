#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A readers-writer lock: many readers or one writer. When it `prefersWriters`, no new reader
/// enters once a writer waits, so a writer waits for the readers in progress only, never for a
/// stream of new ones (glibc's pthread_rwlock prefers readers, which can starve a writer forever
/// under steady searching); such a lock must not be taken for reading twice by one thread.
/// Otherwise readers always enter while no writer holds it, as with pthread_rwlock.
package final class ReadWriteLock: @unchecked Sendable {
    // @unchecked Sendable: `readers`, `writing` and `waitingWriters` are only touched while
    // `mutex` is held; the pthread objects live in their own allocations so they never move.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private var readers = 0
    private var writing = false
    private var waitingWriters = 0
    package let prefersWriters: Bool

    package init(prefersWriters: Bool = false) {
        self.prefersWriters = prefersWriters
        mutex = .allocate(capacity: 1)
        changed = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    package func read<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        while writing || (prefersWriters && waitingWriters > 0) {
            pthread_cond_wait(changed, mutex)
        }
        readers += 1
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            readers -= 1
            if readers == 0 { pthread_cond_broadcast(changed) }
            pthread_mutex_unlock(mutex)
        }
        return try body()
    }

    package func write<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        waitingWriters += 1
        while writing || readers > 0 { pthread_cond_wait(changed, mutex) }
        waitingWriters -= 1
        writing = true
        pthread_mutex_unlock(mutex)
        defer { release() }
        return try body()
    }

    /// Runs `body` exclusively if the lock is free now; nil (without running it) otherwise.
    package func tryWrite<T>(_ body: () throws -> T) rethrows -> T? {
        pthread_mutex_lock(mutex)
        guard !writing, readers == 0 else {
            pthread_mutex_unlock(mutex)
            return nil
        }
        writing = true
        pthread_mutex_unlock(mutex)
        defer { release() }
        return try body()
    }

    private func release() {
        pthread_mutex_lock(mutex)
        writing = false
        pthread_cond_broadcast(changed)
        pthread_mutex_unlock(mutex)
    }
}

/// A fixed set of mutexes; node `n` is guarded by mutex `n % count` ("lock striping"), so a
/// parallel build can lock single neighbour lists without a mutex per node (64 KB in all
/// instead of 40-64 bytes per node).
// @unchecked Sendable: as above, pthread mutexes in a never-moved heap buffer.
final class MutexStripes: @unchecked Sendable {
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    let count: Int

    init(count: Int = 1024) {
        self.count = count
        mutexes = .allocate(capacity: count)
        for i in 0..<count {
            (mutexes + i).initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutexes + i, nil)
        }
    }

    deinit {
        for i in 0..<count { pthread_mutex_destroy(mutexes + i) }
        mutexes.deallocate()
    }

    @inline(__always)
    func withLock<R>(_ key: Int, _ body: () throws -> R) rethrows -> R {
        let m = mutexes + (key & (count - 1))
        pthread_mutex_lock(m)
        defer { pthread_mutex_unlock(m) }
        return try body()
    }

    /// Locks or unlocks mutex `key` outside a scope (for a lock held across a function).
    @inline(__always)
    func withLockUnbalanced(_ key: Int, lock: Bool) {
        let m = mutexes + (key & (count - 1))
        if lock { pthread_mutex_lock(m) } else { pthread_mutex_unlock(m) }
    }
}
