#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A readers-writer lock over `pthread_rwlock_t`: many concurrent readers or one writer.
// @unchecked Sendable: the pthread lock is the synchronisation primitive itself; its storage is
// heap-allocated once, never moved, and freed in deinit when no thread can hold it.
final class ReadersWriterLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    @inline(__always)
    func read<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    @inline(__always)
    func write<R>(_ body: () throws -> R) rethrows -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
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
