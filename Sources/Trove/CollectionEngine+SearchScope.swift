import Foundation
import TroveSQLite

/// What the legs of one search share: one read transaction, one look at the change log, and each
/// filter's candidate ids computed once. Inside a scope every in-memory index (flat, HNSW, BM25)
/// catches up at most once, from the same log state and without a savepoint of its own, and a
/// hybrid search's vector and text legs reuse one evaluation of the filter's SQL.
final class SearchScope {
    /// The change log's newest seq and pruned floor, read once at the start of the search.
    let maxSeq: Int64
    let floor: Int64
    /// Candidate ids per filter (nil inside: every row passes).
    var candidates: [SearchFilter: CandidateIDs] = [:]

    struct CandidateIDs {
        let ids: [Int64]?
    }

    init(maxSeq: Int64, floor: Int64) {
        self.maxSeq = maxSeq
        self.floor = floor
    }
}

extension CollectionEngine {
    /// Runs one search's `body` in one read transaction with one log state (see ``SearchScope``).
    /// Nested calls join the scope already open. The engine lives on its database's actor and
    /// `body` is synchronous, so no other work can see the scope.
    func inSearchScope<T>(_ body: () throws -> T) throws -> T {
        if searchScope != nil { return try body() }
        return try connection.transaction(.deferred) {
            let (maxSeq, floor) = try logState()
            searchScope = SearchScope(maxSeq: maxSeq, floor: floor)
            defer { searchScope = nil }
            return try body()
        }
    }

    /// Runs a catch-up against the scope's log state, or (outside a search) in a read
    /// transaction of its own with a fresh look at the log.
    func withLogState<T>(_ body: (_ maxSeq: Int64, _ floor: Int64) throws -> T) throws -> T {
        if let searchScope { return try body(searchScope.maxSeq, searchScope.floor) }
        return try connection.transaction(.deferred) {
            let (maxSeq, floor) = try logState()
            return try body(maxSeq, floor)
        }
    }
}
