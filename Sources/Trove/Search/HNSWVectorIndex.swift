import Foundation
import TroveSQLite
import TroveVectors

/// An HNSW graph (Malkov & Yashunin 2018) over one vector field, approximate; a filtered search
/// plans its own strategy (an exact scan of few candidates, a filter-aware walk for many).
///
/// The graph is saved as a snapshot (``IndexSnapshotStore``, at the layout's
/// ``DocumentLayout/snapshotLocation(for:flat:)``) with the change-log seq it reflects. On first use
/// the index loads that snapshot and its ``DerivedIndexSet`` replays the log after the seq; it is
/// built from the table instead when there is no snapshot, it fails a check, its parameters
/// differ from the field's, or its seq is below the pruned log floor (or above the log's newest
/// seq: the log was recreated).
///
/// Memory: the float32 vectors (or int8 codes plus float32 for re-scoring, or in codes-only
/// mode the int8 codes alone) and about 2·M links per node on layer 0.
///
/// Codes-only (`.hnsw(quantization: .int8, keepsFloatVectors: false)`): the codes steer the walk
/// and every exact distance (re-scoring the walk's best, exact scans of few candidates) reads the
/// field's vector from the table, as codes-only search collections do.
///
/// Mutable state is read under the owning set's lock (shared) and changed under it (exclusive).
final class HNSWVectorIndex: SavedVectorIndex {
    let field: String
    let dimension: Int
    let metric: DistanceMetric
    let configuration: HNSWConfiguration
    /// Where the snapshot of this field is saved.
    let snapshot: IndexSnapshotStore.Location
    private(set) var index: HNSWIndex?
    var load = SnapshotLoadState()
    /// Upserts of the current pass, inserted together (on all cores) when it finishes.
    private var pending: [(id: Int64, vector: [Float])] = []
    private var pendingRows = 0

    init(
        field: String, dimension: Int, metric: DistanceMetric, configuration: HNSWConfiguration,
        snapshot: IndexSnapshotStore.Location
    ) {
        self.field = field
        self.dimension = dimension
        self.metric = metric
        self.configuration = configuration
        self.snapshot = snapshot
    }

    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }
    var strategy: String {
        configuration.storesFullPrecision
            ? "HNSW walk (M \(configuration.m), efSearch \(configuration.efSearch), \(configuration.quantization)); exact scan when the filter leaves few candidates"
            : "HNSW walk over int8 codes only (M \(configuration.m), efSearch \(configuration.efSearch)), best candidates re-scored from the table; exact scan of the table's vectors when the filter leaves few candidates"
    }

    /// Saved after writes once the log runs ``DocumentStore/snapshotAutosaveChanges`` past it.
    var autosaves: Bool { true }

    func reset() {
        load.buildBegins()
        // The configuration was validated with the schema, so this cannot fail.
        index = try! HNSWIndex(dimension: dimension, metric: metric, configuration: configuration)
    }

    /// Forgets the graph, so the next catch-up that needs it loads or builds it again.
    func unload() {
        index = nil
        load.unloaded()
        pending.removeAll()
        pendingRows = 0
    }

    func requestRebuild() {
        unload()
        load.ignoresSnapshot = true
    }

    func save(to store: IndexSnapshotStore, watermark: Int64) throws {
        guard let bytes = index?.snapshot() else { return }
        try store.write(bytes, watermark: watermark)
    }

    func reserve(rows: Int) { pending.reserveCapacity(rows) }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        pendingRows += 1
        // Under cosine an all-zero vector (raw SQL can store one) has no direction: no vector.
        if let vector = vector(from: statement, column: firstColumn),
            metric != .cosine || vector.contains(where: { $0 != 0 })
        {
            pending.append((rid, vector))
        } else {
            index!.remove(id: rid)
        }
    }

    func finishApplying(_ pass: DerivedIndexPass) {
        if pending.count == 1 {
            index?.insert(id: pending[0].id, vector: pending[0].vector)
        } else if !pending.isEmpty {
            index?.insert(contentsOf: pending)
        }
        pending.removeAll()
        load.finished(pass, rows: pendingRows)
        pendingRows = 0
    }

    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64? {
        guard load.loadBegins() else { return nil }
        // The parts go straight into the graph's memory (`HNSWSnapshotReader`); the first
        // problem it finds stops the copying, the store's own checks go on.
        var reader: HNSWSnapshotReader?
        var rejection: VectorIndexError?
        let streamed = try IndexSnapshotStore(connection: connection, location: snapshot).stream(
            begin: { total in
                reader = HNSWSnapshotReader(count: Int(total))
                return nil
            },
            append: { count, copy in
                guard rejection == nil else { return }
                do { try reader!.read(count: count, from: copy) } catch let error
                    as VectorIndexError
                {
                    rejection = error
                }
            })
        switch streamed {
        case .none:
            load.rebuildReason = SnapshotLoadState.noSnapshot
        case .unusable(let why):
            load.rebuildReason = why
        case .read(let saved, _):
            if let problem = SnapshotLoadState.watermarkProblem(
                saved: saved, maxSeq: maxSeq, floor: floor)
            {
                load.rebuildReason = problem
            } else {
                do {
                    if let rejection { throw rejection }
                    let loaded = try reader!.finish()
                    if let mismatch = parameterMismatch(loaded) {
                        load.rebuildReason = mismatch
                    } else {
                        loaded.efSearch = configuration.efSearch
                        index = loaded
                        load.loadedSnapshot(watermark: saved)
                        return saved
                    }
                } catch {
                    load.rebuildReason = "snapshot rejected: \(error)"
                }
            }
        }
        return nil
    }

    private func parameterMismatch(_ index: HNSWIndex) -> String? {
        let found = index.configuration
        guard
            index.dimension != dimension || index.metric != metric || found.m != configuration.m
                || found.efConstruction != configuration.efConstruction
                || found.quantization != configuration.quantization
                || found.storesFullPrecision != configuration.storesFullPrecision
        else { return nil }
        return
            "snapshot parameters (\(index.dimension)-d \(index.metric), m \(found.m), efConstruction "
            + "\(found.efConstruction), \(found.quantization)\(found.storesFullPrecision ? "" : ", codes only")) differ from the field's"
    }

    func plan(k: Int, matching: Int?, options: VectorSearchOptions) -> String {
        let efSearch = options.efSearch ?? configuration.efSearch
        let scanned = matching.map { "the \($0) candidates" } ?? "all \(count) vectors"
        if options.exact {
            return "exact scan (requested): " + scanned
                + (configuration.storesFullPrecision ? "" : ", vectors read from the table")
        }
        guard let matching else {
            return
                "HNSW graph walk (M \(configuration.m), efSearch \(efSearch), \(configuration.quantization))"
                + (configuration.storesFullPrecision
                    ? "" : " over int8 codes, the best re-scored from the table")
        }
        let plan =
            configuration.storesFullPrecision
            ? HNSWIndex.plan(matching: matching, total: count, k: k, efSearch: efSearch)
            : Self.codesOnlyPlan(matching: matching, total: count, k: k, efSearch: efSearch)
        return plan.description
    }

    func search(
        _ query: [Float], k: Int, among candidates: [Int64]?, options: VectorSearchOptions,
        table: TableVectors
    )
        throws
        -> [Neighbor]
    {
        guard let index else { return [] }
        let efSearch = options.efSearch ?? index.efSearch
        guard !options.exact else {
            // The true neighbours: the index's own float32 vectors, or the table's in codes-only mode.
            guard configuration.storesFullPrecision else {
                return try table.exactSearch(query, k: k, among: candidates)
            }
            return candidates.map { index.search(query, k: k, among: $0) }
                ?? index.exactSearch(query, k: k)
        }
        guard !configuration.storesFullPrecision else {
            guard let candidates else { return index.search(query, k: k, efSearch: efSearch) }
            return index.search(query, k: k, candidates: Set(candidates), efSearch: efSearch)
                .results
        }
        guard let candidates else {
            var failure: (any Error)?
            let hits = index.search(query, k: k, efSearch: efSearch) { rid in
                do { return try table.vector(rid: rid) } catch {
                    failure = failure ?? error
                    return nil
                }
            }
            if let failure { throw failure }
            return hits
        }
        switch Self.codesOnlyPlan(
            matching: candidates.count, total: index.count, k: k, efSearch: efSearch)
        {
        case .exactScan:
            return try table.exactSearch(query, k: k, among: candidates)
        case .graphTraversal:
            // The filtered walk ranks by code distances; widen it and let the table's vectors pick the k.
            let allowed = Set(candidates)
            let wide = k * configuration.rescoreFactor
            let found = index.search(
                query, k: wide, efSearch: max(efSearch, wide), where: allowed.contains)
            return try table.exactSearch(query, k: k, among: found.map(\.id))
        }
    }

    /// `HNSWIndex.plan(matching:total:k:efSearch:)` for a codes-only index, whose exact scan reads
    /// every matching row's vector from the table: about 16 times the per-row cost of the
    /// in-memory scan (BENCHMARKS.md, "In the store"). The in-memory rule scans while
    /// matching² ≤ 16 · ef · total and always up to 2,048 rows; dividing the scan's side by 16
    /// gives matching² ≤ ef · total and always up to 128 rows.
    static func codesOnlyPlan(matching: Int, total: Int, k: Int, efSearch: Int) -> HNSWFilterPlan {
        let ef = Double(max(efSearch, k))
        let m = Double(matching)
        let n = Double(max(total, 1))
        let percent = (100 * m / n * 10).rounded() / 10
        let walked = Int(ef * n / max(m, 1))
        if matching <= 128 || m * m <= ef * n {
            return .exactScan(
                "\(matching) of \(total) rows match (\(percent)%): reading their vectors from the table beats walking ~\(walked) nodes"
            )
        }
        return .graphTraversal(
            "\(matching) of \(total) rows match (\(percent)%): a filtered walk over int8 codes visits ~\(walked) nodes "
                + "instead of reading \(matching) vectors from the table")
    }
}
