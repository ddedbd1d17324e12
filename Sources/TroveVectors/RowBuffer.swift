#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The float storage of a `VectorMatrix`: one allocation the matrix owns, so that it can choose
/// the alignment and the page size.
///
/// Why not `[Float]`: an exact scan streams the whole buffer per query, so it is bound by memory
/// bandwidth, and with 4 KB pages the hardware prefetchers stop at every page boundary and each
/// 4 KB costs a TLB miss. From `hugePageThreshold` up the buffer is therefore 2 MB aligned and,
/// on Linux, advised with `madvise(MADV_HUGEPAGE)` before its pages are first touched, so that
/// transparent huge pages back it in the common `madvise` THP mode. Measured in BENCHMARKS.md.
///
/// Mutated only through a `VectorMatrix` holding the sole reference (checked with
/// `isKnownUniquelyReferenced`), otherwise copied first.
// @unchecked Sendable: a shared buffer is never written (every writer makes its own copy first,
// see `VectorMatrix.makeStorageUnique`), so concurrent readers of shared values see immutable
// memory.
@usableFromInline
final class RowBuffer: @unchecked Sendable {
    /// The first float; `capacity` floats are allocated, the first `count` initialised.
    @usableFromInline let base: UnsafeMutablePointer<Float>
    /// Floats allocated.
    @usableFromInline let capacity: Int
    /// Floats in use (rows × dimension).
    @usableFromInline var count: Int

    // Buffers at least this large (bytes) are 2 MB aligned and advised for huge pages: below it
    // the rounding to whole 2 MB pages would waste a noticeable share of the memory.
    static let hugePageThreshold = 4 << 20
    static let hugePageSize = 2 << 20

    /// Allocates room for at least `minimumCapacity` floats, none in use.
    init(minimumCapacity: Int) {
        let bytes = Swift.max(minimumCapacity, 16) &* MemoryLayout<Float>.stride
        let huge = bytes >= Self.hugePageThreshold
        let rounded = huge ? (bytes + Self.hugePageSize - 1) / Self.hugePageSize * Self.hugePageSize : bytes
        let raw = UnsafeMutableRawPointer.allocate(byteCount: rounded, alignment: huge ? Self.hugePageSize : 64)
        #if os(Linux)
        // Advice only: when THP is disabled the call fails and the buffer keeps 4 KB pages.
        if huge { _ = madvise(raw, rounded, MADV_HUGEPAGE) }
        #endif
        base = raw.bindMemory(to: Float.self, capacity: rounded / MemoryLayout<Float>.stride)
        capacity = rounded / MemoryLayout<Float>.stride
        count = 0
    }

    /// Runs `body`, which writes the first `bytes` bytes of the buffer, while (on Linux, for a
    /// buffer advised for huge pages) a second thread has the kernel map and zero those pages
    /// (`MADV_POPULATE_WRITE`, which leaves pages already written alone): the page clearing of
    /// a fresh buffer, about as long as copying into it, then runs beside `body` instead of
    /// inside its first write to each page. Returns once both are done.
    func populatingConcurrently<R>(bytes: Int, _ body: () throws -> R) rethrows -> R {
        #if os(Linux)
        guard bytes >= Self.hugePageThreshold else { return try body() }
        let range = UnsafeMutablePointer<Int>.allocate(capacity: 2)
        range[0] = Int(bitPattern: UnsafeMutableRawPointer(base))
        range[1] = Swift.min(bytes, capacity * MemoryLayout<Float>.stride)
        var thread = pthread_t()
        // Advice only: when the thread or the call fails, `body` faults the pages in itself.
        let started = pthread_create(&thread, nil, { argument in
            let range = argument!.assumingMemoryBound(to: Int.self)
            _ = madvise(UnsafeMutableRawPointer(bitPattern: range[0]), range[1], MADV_POPULATE_WRITE)
            return nil
        }, range)
        defer {
            if started == 0 { pthread_join(thread, nil) }
            range.deallocate()
        }
        #endif
        return try body()
    }

    /// A new buffer of at least `minimumCapacity` floats (and at least `count`) holding a copy of
    /// the floats in use.
    func copy(minimumCapacity: Int) -> RowBuffer {
        let copy = RowBuffer(minimumCapacity: Swift.max(minimumCapacity, count))
        copy.base.initialize(from: base, count: count)
        copy.count = count
        return copy
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }
}
