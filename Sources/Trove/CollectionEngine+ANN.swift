import Foundation
import TroveSQLite
import TroveVectors

/// The in-memory HNSW index of an approximate collection and what the engine knows about it.
/// Owned by a ``CollectionEngine`` (and so by its ``Database`` actor); not Sendable.
final class ANNState {
    /// The graph, owned here. Memory: the float32 vectors (4 × dimension bytes each, kept for
    /// exact scans and re-scoring unless the kind says `keepsFloatVectors: false`), the links (about 4 × (2m + 1) bytes per vector on layer 0),
    /// the walked codes in quantized modes, and the id map; see `HNSWIndex.memoryUsage`.
    let index: HNSWIndex
    /// The last change-log seq the index reflects.
    var watermark: Int64
    /// The watermark of the snapshot stored in `<name>_index`, when it is known to be this
    /// index's ancestor (nil: nothing saved since the last rebuild).
    var savedWatermark: Int64?
    var origin: IndexStatistics.Origin
    var loadSeconds: Double
    var replayedRows: Int

    init(index: HNSWIndex, watermark: Int64, savedWatermark: Int64?, origin: IndexStatistics.Origin,
         loadSeconds: Double, replayedRows: Int) {
        self.index = index
        self.watermark = watermark
        self.savedWatermark = savedWatermark
        self.origin = origin
        self.loadSeconds = loadSeconds
        self.replayedRows = replayedRows
    }
}

extension CollectionEngine {
    /// An API write that leaves the index this many change-log entries past its saved snapshot
    /// saves a new one. Half the entries a log prune keeps (``logKeep``), so the saved watermark
    /// stays above the pruned floor while this connection does the writing.
    static let annAutosaveChanges: Int64 = 5_000

    var snapshotStore: ANNSnapshotStore { ANNSnapshotStore(connection: connection, schema: schema) }

    // MARK: Catching up

    /// Brings the HNSW index up to date with the table (the same rule as ``catchUp()`` for the
    /// flat index): replays the change log past its watermark; on first use loads the stored
    /// snapshot and replays the log after the snapshot's watermark; rebuilds from the table when
    /// there is no snapshot, it fails a check, its parameters differ, or its watermark is below
    /// the pruned log floor (or above the log's newest seq: the log was recreated).
    ///
    /// - Complexity: O(changes × insert cost); O(snapshot size) to load, O(n × insert cost) to rebuild.
    @discardableResult
    func catchUpANN() throws -> ANNState {
        try withLogState { maxSeq, floor in
            if let ann, ann.watermark >= floor, ann.watermark <= maxSeq {
                if maxSeq > ann.watermark {
                    ann.replayedRows += try replayANN(into: ann.index, after: ann.watermark)
                    ann.watermark = maxSeq
                }
                return ann
            }
            let state = try loadOrRebuildANN(maxSeq: maxSeq, floor: floor)
            ann = state
            return state
        }
    }

    private func loadOrRebuildANN(maxSeq: Int64, floor: Int64) throws -> ANNState {
        let started = ContinuousClock.now
        func seconds() -> Double {
            let d = ContinuousClock.now - started
            return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
        }
        let reason: String
        switch try snapshotStore.read() {
        case .none:
            reason = "no snapshot saved"
        case .unusable(let why):
            reason = why
        case .snapshot(let saved, let bytes):
            if saved < floor {
                reason = "snapshot watermark \(saved) is below the pruned log floor \(floor)"
            } else if saved > maxSeq {
                reason = "snapshot watermark \(saved) is ahead of the change log (newest seq \(maxSeq))"
            } else {
                do {
                    let index = try HNSWIndex(snapshot: bytes)
                    if let mismatch = parameterMismatch(index) {
                        reason = mismatch
                    } else {
                        index.efSearch = configuration.index.hnswConfiguration!.efSearch
                        let replayed = try replayANN(into: index, after: saved)
                        return ANNState(
                            index: index, watermark: maxSeq, savedWatermark: saved, origin: .snapshot,
                            loadSeconds: seconds(), replayedRows: replayed)
                    }
                } catch {
                    reason = "snapshot rejected: \(error)"
                }
            }
        }
        let index = try rebuildANN()
        return ANNState(
            index: index, watermark: maxSeq, savedWatermark: nil, origin: .rebuilt(reason: reason),
            loadSeconds: seconds(), replayedRows: 0)
    }

    private func parameterMismatch(_ index: HNSWIndex) -> String? {
        let wanted = configuration.index.hnswConfiguration!
        let found = index.configuration
        if index.dimension != configuration.dimension || index.metric != configuration.metric
            || found.m != wanted.m || found.efConstruction != wanted.efConstruction
            || found.quantization != wanted.quantization || found.storesFullPrecision != wanted.storesFullPrecision
        {
            return "snapshot parameters (\(index.dimension)-d \(index.metric), m \(found.m), efConstruction "
                + "\(found.efConstruction), \(found.quantization)) differ from the collection's"
        }
        return nil
    }

    /// A fresh index over every usable vector in the table, built on all cores.
    private func rebuildANN() throws -> HNSWIndex {
        let index = try HNSWIndex(
            dimension: configuration.dimension, metric: configuration.metric,
            configuration: configuration.index.hnswConfiguration!)
        var items: [(id: Int64, vector: [Float])] = []
        let statement = try connection.prepare(
            "SELECT id, embedding FROM \(schema.table) WHERE embedding IS NOT NULL")
        try statement.forEachRow { row in
            if let vector = annVector(row, column: 1) { items.append((row.int64(at: 0), vector)) }
        }
        index.insert(contentsOf: items)
        return index
    }

    /// Applies the log entries after `seq`: the current row decides (vector → insert or replace,
    /// anything else → remove), so replay is idempotent.
    ///
    /// - Returns: the number of distinct rows replayed.
    private func replayANN(into index: HNSWIndex, after seq: Int64) throws -> Int {
        let statement = try connection.cachedStatement(
            """
            SELECT l.id, t.embedding FROM (SELECT DISTINCT id FROM \(schema.log) WHERE seq > ?) AS l
            LEFT JOIN \(schema.table) AS t ON t.id = l.id
            """)
        var upserts: [(id: Int64, vector: [Float])] = []
        var rows = 0
        try statement.forEachRow([.integer(seq)]) { row in
            rows += 1
            let id = row.int64(at: 0)
            if let vector = annVector(row, column: 1) {
                upserts.append((id, vector))
            } else {
                index.remove(id: id)
            }
        }
        insert(upserts, into: index)
        return rows
    }

    private func insert(_ items: [(id: Int64, vector: [Float])], into index: HNSWIndex) {
        if items.count == 1 {
            index.insert(id: items[0].id, vector: items[0].vector)
        } else if !items.isEmpty {
            index.insert(contentsOf: items)
        }
    }

    /// A stored vector the HNSW index can hold: ``decodeVector(_:column:)``, and under cosine
    /// not all zeros (raw SQL can store one; it has no direction, so it is treated as no vector).
    func annVector(_ statement: Statement, column: Int) -> [Float]? {
        guard let vector = decodeVector(statement, column: column) else { return nil }
        if configuration.metric == .cosine, vector.allSatisfy({ $0 == 0 }) { return nil }
        return vector
    }

    /// Applies a batch this connection just committed when the index was current before it (as
    /// ``applyCommitted(_:before:after:)``), then saves a snapshot when enough has changed.
    func applyCommittedANN(_ changes: [IndexChange], before: Int64, after: Int64) {
        guard let ann, ann.watermark == before else { return }
        var pending: [(id: Int64, vector: [Float])] = []
        for change in changes {
            switch change {
            case .upsert(let id, let vector):
                pending.append((id, vector))
            case .remove(let id):
                insert(pending, into: ann.index)
                pending.removeAll()
                ann.index.remove(id: id)
            case .removeAll:
                insert(pending, into: ann.index)
                pending.removeAll()
                ann.index.removeAll()
            }
        }
        insert(pending, into: ann.index)
        ann.watermark = after
        if after - (ann.savedWatermark ?? Int64.min / 2) >= Self.annAutosaveChanges {
            // Best effort: the rows are committed; a failed save only means a slower next open.
            _ = try? saveANN()
        }
    }

    // MARK: Saving

    /// Writes the index's snapshot with its watermark, in one write transaction (so nobody can
    /// write between the catch-up and the save).
    ///
    /// - Returns: the saved watermark and size, or nil for a flat collection (nothing to save).
    @discardableResult
    func saveANN() throws -> (watermark: Int64, bytes: Int)? {
        guard configuration.index.isApproximate else { return nil }
        return try connection.transaction(.immediate) {
            let ann = try catchUpANN()
            let bytes = ann.index.snapshot()
            try snapshotStore.write(bytes, watermark: ann.watermark)
            ann.savedWatermark = ann.watermark
            return (ann.watermark, bytes.count)
        }
    }

    /// Whether the in-memory index holds changes its stored snapshot lacks.
    var hasUnsavedANNChanges: Bool {
        guard let ann else { return false }
        return ann.savedWatermark != ann.watermark
    }

    // MARK: Searching

    /// The k nearest rows passing the filter and the plan that found them. Flat collections
    /// always scan exactly; HNSW collections walk the graph unless `exact` is set, and with a
    /// filter let `HNSWIndex.plan` choose between scanning the candidates and a filtered walk.
    func plannedNeighbors(
        _ query: [Float], k: Int, filter: SearchFilter, exact: Bool, efSearch: Int? = nil
    ) throws -> (neighbors: [Neighbor], plan: SearchPlan) {
        try validate(vector: query)
        if let efSearch, !(1...100_000).contains(efSearch) {
            throw TroveError.invalidConfiguration("efSearch must be in 1...100000, got \(efSearch)")
        }
        let kind = configuration.index
        guard kind.isApproximate else {
            let index = try catchUp()
            if let ids = try candidates(filter) {
                return (index.search(query, k: k, among: ids), SearchPlan(
                    strategy: .exactScan, index: kind, indexedVectors: index.count, matchingRows: ids.count,
                    reason: "flat index: exact scan over the \(ids.count) rows passing the filter"))
            }
            return (index.search(query, k: k), SearchPlan(
                strategy: .exactScan, index: kind, indexedVectors: index.count, matchingRows: nil,
                reason: "flat index: exact scan over all \(index.count) vectors"))
        }
        let index = try catchUpANN().index
        let total = index.count
        let ids = try candidates(filter)
        // A codes-only index (`keepsFloatVectors: false`) holds no float32 vectors: every exact
        // distance then comes from the table (the truth; the codes only steer the walk).
        let fromTable = kind.readsVectorsFromTable
        func exactScan(among ids: [Int64]?) throws -> [Neighbor] {
            if fromTable { return try tableExactSearch(query, k: k, among: ids) }
            return ids.map { index.search(query, k: k, among: $0) } ?? index.exactSearch(query, k: k)
        }
        if exact {
            return (try exactScan(among: ids), SearchPlan(
                strategy: .exactScan, index: kind, indexedVectors: total, matchingRows: ids?.count,
                reason: "exact requested: scan over " + (fromTable ? "the table's vectors of " : "")
                    + (ids.map { "the \($0.count) rows passing the filter" } ?? "all \(total) vectors")))
        }
        guard let ids else {
            let ef = max(efSearch ?? index.efSearch, k)
            guard fromTable else {
                return (index.search(query, k: k, efSearch: efSearch), SearchPlan(
                    strategy: .graph, index: kind, indexedVectors: total, matchingRows: nil,
                    reason: "no filter: HNSW walk with efSearch \(ef)"))
            }
            var failure: (any Error)?
            let results = index.search(query, k: k, efSearch: efSearch) { id in
                do { return try self.tableVector(id: id) } catch {
                    failure = failure ?? error
                    return nil
                }
            }
            if let failure { throw failure }
            return (results, SearchPlan(
                strategy: .graph, index: kind, indexedVectors: total, matchingRows: nil,
                reason: "no filter: HNSW walk over int8 codes with efSearch \(ef), best candidates re-scored from the table"))
        }
        // The filter's ids are distinct (one per row), so the plan can be made from the array and
        // a Set built only for the walk, which tests membership per visited node.
        let ef = efSearch ?? index.efSearch
        let plan = filterPlan(matching: ids.count, total: total, k: k, efSearch: ef)
        let results: [Neighbor]
        switch plan {
        case .exactScan: results = try exactScan(among: ids)
        case .graphTraversal:
            let allowed = Set(ids)
            if fromTable {
                // The filtered walk ranks by code distances; widen it as the unfiltered walk does
                // and let the table's vectors pick the k.
                let wide = k * index.configuration.rescoreFactor
                let found = index.search(query, k: wide, efSearch: max(ef, wide), where: allowed.contains)
                results = try tableExactSearch(query, k: k, among: found.map(\.id))
            } else {
                results = index.search(query, k: k, efSearch: ef, where: allowed.contains)
            }
        }
        return (results, SearchPlan(plan, index: kind, indexedVectors: total, matchingRows: ids.count))
    }

    /// The filter plan for this collection's HNSW index: ``codesOnlyPlan(matching:total:k:efSearch:)``
    /// when exact scans read the table, else `HNSWIndex.plan(matching:total:k:efSearch:)`.
    func filterPlan(matching: Int, total: Int, k: Int, efSearch: Int) -> HNSWFilterPlan {
        configuration.index.readsVectorsFromTable
            ? Self.codesOnlyPlan(matching: matching, total: total, k: k, efSearch: efSearch)
            : HNSWIndex.plan(matching: matching, total: total, k: k, efSearch: efSearch)
    }

    /// `HNSWIndex.plan(matching:total:k:efSearch:)` for a codes-only index, whose exact scan reads
    /// every matching row's vector from the table: about 16 times the per-row cost of the
    /// in-memory scan (measured on 58,029 × 384: 1.5-3 µs against 0.12-0.18 µs per row;
    /// BENCHMARKS.md, "In the store"). The in-memory rule scans while matching² ≤ 16 · ef · total
    /// and always up to 2,048 rows; dividing the scan's side by 16 gives matching² ≤ ef · total
    /// and always up to 128 rows.
    static func codesOnlyPlan(matching: Int, total: Int, k: Int, efSearch: Int) -> HNSWFilterPlan {
        let ef = Double(max(efSearch, k)), m = Double(matching), n = Double(max(total, 1))
        let percent = (100 * m / n * 10).rounded() / 10
        let walked = Int(ef * n / max(m, 1))
        if matching <= 128 || m * m <= ef * n {
            return .exactScan(
                "\(matching) of \(total) rows match (\(percent)%): reading their vectors from the table beats walking ~\(walked) nodes")
        }
        return .graphTraversal(
            "\(matching) of \(total) rows match (\(percent)%): a filtered walk over int8 codes visits ~\(walked) nodes "
                + "instead of reading \(matching) vectors from the table")
    }

    /// A row's stored vector as the index would take it (``annVector(_:column:)``), or nil.
    func tableVector(id: Int64) throws -> [Float]? {
        let statement = try connection.cachedStatement("SELECT embedding FROM \(schema.table) WHERE id = ?")
        var vector: [Float]?
        try statement.forEachRow([.integer(id)]) { row in vector = annVector(row, column: 0) }
        return vector
    }

    /// The exact k nearest among `ids` (every row when nil), from the table's float32 vectors.
    ///
    /// - Complexity: one statement with an indexed lookup per id, or one pass over the table;
    ///   O(n · dimension).
    func tableExactSearch(_ query: [Float], k: Int, among ids: [Int64]?) throws -> [Neighbor] {
        let metric = configuration.metric
        var top = TopK(k: k)
        if let ids {
            // One statement for all the ids (a lookup each by primary key), not one per id.
            let statement = try connection.cachedStatement(
                "SELECT id, embedding FROM \(schema.table) WHERE id IN (SELECT value FROM json_each(?))")
            try statement.forEachRow([.text(Self.jsonArray(ids))]) { row in
                if let vector = annVector(row, column: 1) {
                    _ = top.insert(id: row.int64(at: 0), distance: metric.distance(query, vector))
                }
            }
        } else {
            let statement = try connection.prepare(
                "SELECT id, embedding FROM \(schema.table) WHERE embedding IS NOT NULL")
            try statement.forEachRow { row in
                if let vector = annVector(row, column: 1) {
                    _ = top.insert(id: row.int64(at: 0), distance: metric.distance(query, vector))
                }
            }
        }
        return top.sortedResults()
    }

    /// The plan a search with this filter would use, without ranking anything.
    func explainSearch(topK: Int, filter: SearchFilter, exact: Bool) throws -> SearchPlan {
        try check(topK: topK)
        return try inSearchScope {
            let kind = configuration.index
            let ids = try candidates(filter)
            guard kind.isApproximate else {
                let count = try catchUp().count
                return SearchPlan(
                    strategy: .exactScan, index: kind, indexedVectors: count, matchingRows: ids?.count,
                    reason: ids.map { "flat index: exact scan over the \($0.count) rows passing the filter" }
                        ?? "flat index: exact scan over all \(count) vectors")
            }
            let index = try catchUpANN().index
            let total = index.count
            if exact {
                return SearchPlan(
                    strategy: .exactScan, index: kind, indexedVectors: total, matchingRows: ids?.count,
                    reason: "exact requested: scan over \(ids.map { "the \($0.count) rows passing the filter" } ?? "all \(total) vectors")")
            }
            guard let ids else {
                return SearchPlan(
                    strategy: .graph, index: kind, indexedVectors: total, matchingRows: nil,
                    reason: "no filter: HNSW walk with efSearch \(max(index.efSearch, topK))")
            }
            let plan = filterPlan(matching: ids.count, total: total, k: topK, efSearch: index.efSearch)
            return SearchPlan(plan, index: kind, indexedVectors: total, matchingRows: ids.count)
        }
    }

    /// Vector search with a chosen exactness, returning the plan next to the results.
    func searchVectorExplained(
        _ query: [Float], topK: Int, filter: SearchFilter, exact: Bool, efSearch: Int? = nil
    ) throws -> ExplainedSearch {
        try check(topK: topK)
        return try inSearchScope {
            let (neighbors, plan) = try plannedNeighbors(query, k: topK, filter: filter, exact: exact, efSearch: efSearch)
            let stored = try self.rows(for: neighbors.map(\.id))
            let results = neighbors.enumerated().compactMap { offset, neighbor -> SearchResult? in
                guard let row = stored[neighbor.id] else { return nil }
                return SearchResult(
                    id: neighbor.id, content: row.content, source: row.source, metadata: row.metadata,
                    score: Double(configuration.metric.score(distance: neighbor.distance)),
                    distance: Double(neighbor.distance), vectorRank: offset + 1)
            }
            return ExplainedSearch(results: results, plan: plan)
        }
    }

    // MARK: Statistics

    func indexStatistics() throws -> IndexStatistics {
        let kind = configuration.index
        guard kind.isApproximate else {
            return IndexStatistics(
                kind: kind, origin: index == nil ? .notLoaded : .table, vectorCount: index?.count ?? 0,
                watermark: watermark, snapshotWatermark: nil, loadSeconds: 0, replayedRows: 0)
        }
        guard let ann else {
            return IndexStatistics(
                kind: kind, origin: .notLoaded, vectorCount: 0, watermark: 0, snapshotWatermark: nil,
                loadSeconds: 0, replayedRows: 0)
        }
        return IndexStatistics(
            kind: kind, origin: ann.origin, vectorCount: ann.index.count, watermark: ann.watermark,
            snapshotWatermark: ann.savedWatermark, loadSeconds: ann.loadSeconds, replayedRows: ann.replayedRows)
    }
}
