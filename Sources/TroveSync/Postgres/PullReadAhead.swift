import Foundation

/// The page of the feed a transport expects to be asked for next, read on the session's queue
/// right after it handed over a full page.
///
/// A page read early is as good as one read when asked for: the feed at or below a page's last
/// sequence no longer changes (SYNC.md, "Ordering": pushes to a space commit in sequence order), so the early page only lacks change sets
/// pushed since, which the next pull brings. At most one page is kept (within the pull's count
/// and byte budget), and it is dropped by any pull that asks for another.
///
/// `@unchecked Sendable`: `kept` is only touched while holding `lock`.
final class PullReadAhead: @unchecked Sendable {
    /// What a pull asks for.
    struct Request: Equatable, Sendable {
        let space: String
        let after: Int64
        let limit: Int
        /// The byte budget (`trove_sync.pull` with `max_bytes`), nil for none.
        let maxBytes: Int?

        /// The request for the page after `page` when `page` is full (it stopped at its count,
        /// or within half its byte budget of the end); nil when the feed likely ends there.
        func next(after page: [SealedChangeSet]) -> Request? {
            guard let last = page.last?.serverSequence else { return nil }
            let full =
                page.count >= limit
                || maxBytes.map { page.reduce(0) { $0 + $1.payload.count } * 2 >= $0 } ?? false
            guard full else { return nil }
            return Request(space: space, after: last, limit: limit, maxBytes: maxBytes)
        }
    }

    private let lock = NSLock()
    private var kept: (request: Request, page: [SealedChangeSet])?

    /// The page read ahead for `request`, or nil; either way nothing stays kept.
    func take(_ request: Request) -> [SealedChangeSet]? {
        lock.withLock {
            defer { kept = nil }
            guard let kept, kept.request == request else { return nil }
            return kept.page
        }
    }

    /// Keeps `page` as the answer to `request` (nil: the read failed, nothing is kept; the
    /// pull asked for it runs the query itself and reports the error).
    func keep(_ page: [SealedChangeSet]?, for request: Request) {
        lock.withLock { kept = page.map { (request, $0) } }
    }

    /// Drops the kept page (the transport closed).
    func clear() {
        lock.withLock { kept = nil }
    }
}
