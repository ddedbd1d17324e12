import Foundation
import TroveSQLite

/// The read path's one entry for which rows a query sees: every read decides it here and nowhere
/// else. SQL reads go through `condition(_:on:)` (the filter compiled, and the rows that exist at
/// all: expired documents are invisible until purged), the in-memory legs through
/// `candidates(_:on:)`. A later kind of read that starts from either gets expiry for free.
extension DocumentStore {
    /// The SQL condition a row must meet to be read: the filter, and for collections that allow
    /// expiry, "not expired at the clock's current second".
    func condition(_ filter: Filter, on connection: Connection) throws -> SQLFragment {
        let compiled = try compileFilter(filter, on: connection)
        guard let visible = visibility() else { return compiled }
        if case .all = filter { return visible }
        var out = SQLFragment(sql: "(")
        out.append(compiled)
        out.append(") AND ")
        out.append(visible)
        return out
    }

    /// `("_expires" IS NULL OR "_expires" > now)`, or nil when the collection has no expiry.
    ///
    /// A document expiring at second `T` is visible while now < T: at exactly `T` it is gone.
    func visibility() -> SQLFragment? {
        guard schema.allowsExpiry else { return nil }
        var out = SQLFragment(
            sql: "(\(DocumentLayout.expiresColumn) IS NULL OR \(DocumentLayout.expiresColumn) > ")
        out.bind(.real(clock.now.timeIntervalSince1970))
        out.append(")")
        return out
    }

    /// The rows an in-memory leg (vector search, later graph or geo) may return.
    struct Candidates {
        /// The rows passing the filter, or nil when every row does.
        var rids: [Int64]?
        /// Rows to leave out although `rids` is nil (expired, not yet purged): usually few, found
        /// through the partial index on `_expires`.
        var excluded: Set<Int64>

        static let everything = Candidates(rids: nil, excluded: [])

        func allows(_ rid: Int64) -> Bool { !excluded.contains(rid) }
    }

    /// Expired rows left out by skipping them in the legs' results, above which the candidates
    /// are the visible rows instead.
    static let maxExcludedCandidates = 1_000

    /// The candidates for `filter` on this connection's snapshot.
    func candidates(_ filter: Filter, on connection: Connection) throws -> Candidates {
        if case .all = filter {
            guard schema.allowsExpiry else { return .everything }
            var excluded: Set<Int64> = []
            let statement = try connection.cachedStatement(
                "SELECT \(layout.rid) FROM \(layout.table) WHERE \(DocumentLayout.expiresColumn) <= ?"
            )
            try statement.forEachRow([.real(clock.now.timeIntervalSince1970)]) {
                excluded.insert($0.int64(at: 0))
            }
            // Many expired rows waiting for a purge: a search k + excluded deep would cost more
            // than naming the visible rows.
            guard excluded.count > Self.maxExcludedCandidates else {
                return Candidates(rids: nil, excluded: excluded)
            }
        }
        var sql = SQLFragment(sql: "SELECT \(layout.rid) FROM \(layout.table) WHERE ")
        sql.append(try condition(filter, on: connection))
        var rids: [Int64] = []
        try connection.cachedStatement(sql.sql).forEachRow(sql.bindings) {
            rids.append($0.int64(at: 0))
        }
        return Candidates(rids: rids, excluded: [])
    }
}
