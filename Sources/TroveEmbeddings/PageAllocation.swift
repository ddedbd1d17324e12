#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Zeroed memory in pages of its own (an anonymous `mmap`), unmapped when this object goes.
///
/// For buffers of megabytes that live as long as a model: `malloc` would give a freed 12 MB
/// block back to the system only below its mmap threshold, which glibc raises to the size of the
/// last large block freed, so models loaded and dropped one after another kept their copies in
/// the heap (resident memory grew by the packed weights' 12 MB per load).
///
/// ```swift
/// guard let pages = PageAllocation(byteCount: 12 << 20) else { ... }  // nil if mmap fails
/// pages.pointer.storeBytes(of: 1, as: UInt8.self)
/// ```
final class PageAllocation: @unchecked Sendable {
    // @unchecked Sendable: the owner writes the pages before sharing them and only reads after.
    let pointer: UnsafeMutableRawPointer
    let byteCount: Int

    init?(byteCount: Int) {
        #if canImport(Darwin)
            let flags = MAP_PRIVATE | MAP_ANON
        #else
            let flags = MAP_PRIVATE | MAP_ANONYMOUS
        #endif
        guard byteCount > 0,
            let address = mmap(nil, byteCount, PROT_READ | PROT_WRITE, flags, -1, 0),
            address != MAP_FAILED
        else { return nil }
        pointer = address
        self.byteCount = byteCount
    }

    deinit { munmap(pointer, byteCount) }
}
