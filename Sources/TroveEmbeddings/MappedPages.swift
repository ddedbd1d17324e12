#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Giving pages of a read-only file mapping back to the system.
///
/// Every page of a mapping a process has touched counts in its resident memory until it is
/// unmapped or released. On a `MAP_PRIVATE`, `PROT_READ` file mapping, `madvise(MADV_DONTNEED)`
/// drops this process's copy of the pages; a later read maps them again from the page cache
/// (a minor fault), with the same bytes, so releasing is always safe, even while another thread
/// reads the same pages.
///
/// ```swift
/// MappedPages.release(header, byteCount: parsedBytes)  // after copying the header out
/// ```
enum MappedPages {
    /// The system's page size in bytes (0 if unknown).
    static let pageSize: Int = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// The addresses of the whole pages inside `[address, address + byteCount)`: partial pages
    /// at either end are left out, because they may hold bytes of a neighbour still in use
    /// (not to keep the mapping correct, which a release never breaks, but so that a neighbour
    /// is not faulted in again at once). Nil when no whole page lies inside.
    static func wholePages(address: Int, byteCount: Int, pageSize: Int) -> Range<Int>? {
        guard pageSize > 0, byteCount > 0 else { return nil }
        let start = (address + pageSize - 1) / pageSize * pageSize
        let end = (address + byteCount) / pageSize * pageSize
        return end > start ? start..<end : nil
    }

    /// Releases the whole pages inside `pointer[0..<byteCount]`, which must lie in a read-only
    /// private file mapping. Does nothing where `madvise` is unavailable.
    static func release(_ pointer: UnsafeRawPointer, byteCount: Int) {
        #if canImport(Glibc) || canImport(Musl)
            guard
                let pages = wholePages(
                    address: Int(bitPattern: pointer), byteCount: byteCount, pageSize: pageSize)
            else { return }
            _ = madvise(
                UnsafeMutableRawPointer(bitPattern: pages.lowerBound), pages.count, MADV_DONTNEED)
        #endif
    }
}
