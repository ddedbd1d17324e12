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
        let memory = allocateLargeBuffer(
            byteCount: Swift.max(minimumCapacity, 16) &* MemoryLayout<Float>.stride)
        base = memory.bindMemory(to: Float.self).baseAddress!
        capacity = memory.count / MemoryLayout<Float>.stride
        count = 0
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

/// Uninitialised memory for at least `byteCount` bytes, 64-byte aligned and, from
/// `RowBuffer.hugePageThreshold` up, 2 MB aligned and advised for huge pages before anything
/// touches it (its first touch then costs one fault per 2 MB instead of one per 4 KB). For the
/// large buffers of vector indexes and the snapshots they load from. Free it with
/// `deallocate()`.
///
/// - Returns: the memory, its size rounded up to whole huge pages.
package func allocateLargeBuffer(byteCount: Int) -> UnsafeMutableRawBufferPointer {
    let huge = byteCount >= RowBuffer.hugePageThreshold
    let size = RowBuffer.hugePageSize
    let rounded = huge ? (byteCount + size - 1) / size * size : Swift.max(byteCount, 1)
    let raw = UnsafeMutableRawPointer.allocate(byteCount: rounded, alignment: huge ? size : 64)
    #if os(Linux)
        // Advice only: when THP is disabled the call fails and the buffer keeps 4 KB pages.
        if huge { _ = madvise(raw, rounded, MADV_HUGEPAGE) }
    #endif
    return UnsafeMutableRawBufferPointer(start: raw, count: rounded)
}
