import Foundation

/// The scratch memory of one e5 forward pass, kept between passes so that memory is bounded by
/// the number of callers running at once, not by the number of batches.
///
/// A pass of t tokens needs 6·t·H floats of activations plus one feed-forward chunk's
/// intermediate, Q8 codes with their block scales and sums, per-thread attention scratch, and
/// one word-embedding row: about 6 MB for ``E5Embedder``'s 512-token passes. Allocating that per pass and freeing it leaves the
/// allocator holding freed pages (glibc raises its mmap threshold after the first free, so later
/// blocks come from arenas it seldom trims), and resident memory grew with the batches; a
/// ``Pool`` hands each concurrent caller one set and takes it back, growing a set only when a
/// pass is larger than any before.
///
/// ```swift
/// let pool = E5Activations.Pool()
/// let scratch = pool.take(shape)   // the largest shape seen so far, reused
/// defer { pool.give(scratch) }
/// ```
final class E5Activations {
    /// What one pass needs.
    struct Shape {
        /// Floats of activations.
        var floats: Int
        /// Q8 codes (the largest multiply input; a scale and a sum per 32).
        var codes: Int
        /// Floats of attention scratch for all threads.
        var attention: Int
        /// Bytes of one word-embedding row.
        var row: Int

        func fits(in capacity: Shape) -> Bool {
            floats <= capacity.floats && codes <= capacity.codes && attention <= capacity.attention
                && row <= capacity.row
        }

        /// The smallest shape either fits in.
        func union(_ other: Shape) -> Shape {
            Shape(
                floats: max(floats, other.floats), codes: max(codes, other.codes),
                attention: max(attention, other.attention), row: max(row, other.row))
        }
    }

    let capacity: Shape
    let floats: UnsafeMutablePointer<Float>
    let codes: UnsafeMutablePointer<Int8>
    let scales: UnsafeMutablePointer<Float>
    let sums: UnsafeMutablePointer<Int32>
    let attention: UnsafeMutablePointer<Float>
    let row: UnsafeMutableRawPointer

    init(_ capacity: Shape) {
        self.capacity = capacity
        let blocks = max(1, capacity.codes / 32)
        floats = .allocate(capacity: max(1, capacity.floats))
        codes = .allocate(capacity: max(1, capacity.codes))
        scales = .allocate(capacity: blocks)
        sums = .allocate(capacity: blocks)
        attention = .allocate(capacity: max(1, capacity.attention))
        row = .allocate(byteCount: max(1, capacity.row), alignment: 16)
    }

    deinit {
        floats.deallocate()
        codes.deallocate()
        scales.deallocate()
        sums.deallocate()
        attention.deallocate()
        row.deallocate()
    }

    /// Sets of activations not in use, at most one per caller that ran at the same time.
    final class Pool: @unchecked Sendable {
        // @unchecked Sendable: `idle` is only touched under `lock`; a set taken out belongs to
        // its caller alone until it is given back.
        private let lock = NSLock()
        private var idle: [E5Activations] = []

        /// A set that fits `shape`: an idle one if it fits, else a new one as large as both.
        func take(_ shape: Shape) -> E5Activations {
            lock.lock()
            let reused = idle.popLast()
            lock.unlock()
            if let reused, shape.fits(in: reused.capacity) { return reused }
            return E5Activations(reused.map { shape.union($0.capacity) } ?? shape)
        }

        /// Returns a set for the next caller.
        func give(_ activations: E5Activations) {
            lock.lock()
            idle.append(activations)
            lock.unlock()
        }

        /// Sets kept for reuse (for tests).
        var idleCount: Int {
            lock.lock()
            defer { lock.unlock() }
            return idle.count
        }
    }
}
