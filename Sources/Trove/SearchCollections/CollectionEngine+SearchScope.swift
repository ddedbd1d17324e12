import Foundation
import TroveSQLite

/// What the legs of one search share: one read transaction, the in-memory indexes caught up once
/// with its snapshot (``DerivedIndexScope``), and each filter's candidate ids computed once.
/// Inside a scope no index catches up again, and a hybrid search's vector and text legs reuse
/// one evaluation of the filter's SQL. Opened by ``CollectionEngine/inSearchScope(loading:_:)``.
final class SearchScope {
    /// The indexes, current for this search's snapshot.
    let indexes: DerivedIndexScope
    /// Candidate ids per filter (nil inside: every row passes).
    var candidates: [SearchFilter: CandidateIDs] = [:]

    struct CandidateIDs {
        let ids: [Int64]?
    }

    init(indexes: DerivedIndexScope) {
        self.indexes = indexes
    }
}
