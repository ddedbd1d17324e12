import Foundation
import TroveSQLite
import TroveVectors

/// The exact (flat) in-memory index of one vector field: a SIMD scan over every vector, or over
/// the filter's candidates.
///
/// The matrix is saved as a snapshot (``IndexSnapshotStore``, at the layout's
/// ``DocumentLayout/snapshotLocation(for:flat:)``) and read back in one pass on first use,
/// instead of being rebuilt row by row (see ``SavedVectorIndex`` for when it is refused). The
/// snapshot's bytes:
///
/// ```
/// header (32 bytes, little-endian): "TroveMX1", dimension u32, metric u32, count u64, 0 u64
/// ids: count × i64        rows: count × dimension × f32, as the index holds them
/// ```
///
/// (under cosine the rows are L2-normalised), its checksum the ``IndexSnapshotStore/wordSum(_:at:into:)``
/// of all of it.
///
/// Memory: 4 × dimension bytes per document with a vector, plus the id map.
final class FlatVectorIndex: SavedVectorIndex {
    let field: String
    let dimension: Int
    let metric: DistanceMetric
    let snapshot: IndexSnapshotStore.Location
    private(set) var index: FlatIndex?
    var load = SnapshotLoadState()
    private var appliedRows = 0

    /// The writer saves a matrix by itself only from this many vectors up: below it the rows
    /// are read back in a few milliseconds, and small collections keep no second copy.
    static let autosaveMinimumVectors = 10_000
    static let magic = Array("TroveMX1".utf8)
    static let headerBytes = 32

    init(
        field: String, dimension: Int, metric: DistanceMetric, snapshot: IndexSnapshotStore.Location
    ) {
        self.field = field
        self.dimension = dimension
        self.metric = metric
        self.snapshot = snapshot
    }

    var isLoaded: Bool { index != nil }
    var count: Int { index?.count ?? 0 }
    var strategy: String { "exact \(metric) scan (\(dimension)-d)" }
    var autosaves: Bool { count >= Self.autosaveMinimumVectors }

    func reset() {
        load.buildBegins()
        index = FlatIndex(dimension: dimension, metric: metric)
    }

    func unload() {
        index = nil
        load.unloaded()
    }

    func requestRebuild() {
        unload()
        load.ignoresSnapshot = true
    }

    func reserve(rows: Int) { index?.reserveCapacity(rows) }

    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {
        if index == nil { reset() }
        appliedRows += 1
        // Straight from the statement's blob into the matrix (no array per row); a blob of the
        // wrong length or with a non-finite float is no vector.
        let stored = statement?.withBlob(at: firstColumn) { bytes -> Bool in
            guard let bytes, bytes.count == 4 * dimension else { return false }
            return bytes.withMemoryRebound(to: Float.self) { floats in
                guard floats.allSatisfy(\.isFinite) else { return false }
                index!.upsert(id: rid, floats: floats)
                return true
            }
        }
        if stored != true { _ = index!.remove(id: rid) }
    }

    func finishApplying(_ pass: DerivedIndexPass) {
        load.finished(pass, rows: appliedRows)
        appliedRows = 0
    }

    func loadSaved(_ connection: Connection, maxSeq: Int64, floor: Int64) throws -> Int64? {
        guard load.loadBegins() else { return nil }
        let rowBytes = 8 + 4 * dimension
        var problem: String?
        var streamed = IndexSnapshotStore.Streamed.none
        var sum: UInt64 = 0
        let header = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Self.headerBytes, alignment: 8)
        defer { header.deallocate() }
        var count = 0
        let store = IndexSnapshotStore(connection: connection, location: snapshot)
        // The size first (before anything is allocated), then the rows, copied part by part
        // straight into the matrix's ids and floats.
        let recorded = try recordedCount(store, rowBytes: rowBytes, problem: &problem)
        if let problem {
            load.rebuildReason = problem
            return nil
        }
        let matrix = try VectorMatrix(dimension: dimension, count: recorded) { ids, rows in
            count = ids.count / 8
            let destinations = [header, ids, rows]
            var target = 0
            var offset = 0
            var position = 0
            streamed = try store.stream(
                begin: { total in
                    total == Int64(Self.headerBytes + count * rowBytes)
                        ? nil : "snapshot size \(total) changed while reading"
                },
                append: { partBytes, copy in
                    var taken = 0
                    while taken < partBytes, target < destinations.count {
                        let destination = destinations[target]
                        let n = min(partBytes - taken, destination.count - offset)
                        let piece = UnsafeMutableRawBufferPointer(
                            rebasing: destination[offset..<offset + n])
                        try copy(taken, piece)
                        IndexSnapshotStore.wordSum(
                            UnsafeRawBufferPointer(piece), at: position, into: &sum)
                        position += n
                        taken += n
                        offset += n
                        if offset == destination.count {
                            target += 1
                            offset = 0
                        }
                    }
                })
            guard case .read(_, let checksum) = streamed else { return false }
            if Int64(bitPattern: sum) != checksum {
                problem = "snapshot checksum differs from the recorded one"
            } else {
                problem = headerProblem(Array(header), count: count)
            }
            return problem == nil
        }
        switch streamed {
        case .none:
            load.rebuildReason = SnapshotLoadState.noSnapshot
        case .unusable(let why):
            load.rebuildReason = why
        case .read(let saved, _):
            if let problem {
                load.rebuildReason = problem
            } else if let matrix {
                if let refused = SnapshotLoadState.watermarkProblem(
                    saved: saved, maxSeq: maxSeq, floor: floor)
                {
                    load.rebuildReason = refused
                } else {
                    index = FlatIndex(prepared: matrix, metric: metric)
                    load.loadedSnapshot(watermark: saved)
                    return saved
                }
            } else {
                load.rebuildReason = "snapshot holds an id twice"
            }
        }
        return nil
    }

    /// The number of rows the stored snapshot's recorded size implies (0, with `problem` set,
    /// when there is none or it cannot hold this field's rows).
    private func recordedCount(_ store: IndexSnapshotStore, rowBytes: Int, problem: inout String?)
        throws -> Int
    {
        let total = try store.recordedTotal()
        guard total >= Self.headerBytes, (total - Self.headerBytes) % rowBytes == 0 else {
            if total != 0 {
                problem = "snapshot size \(total) is not that of a \(dimension)-d matrix"
            }
            return 0
        }
        return (total - Self.headerBytes) / rowBytes
    }

    /// Why the header read from a snapshot does not describe this field's matrix of `count` rows.
    private func headerProblem(_ header: [UInt8], count: Int) -> String? {
        let found = Self.parseHeader(header)
        guard found.magic == Self.magic else { return "snapshot is not a vector matrix" }
        guard found.dimension == dimension else {
            return "snapshot holds \(found.dimension)-d vectors, the field \(dimension)-d"
        }
        guard found.metric == Self.code(metric) else {
            return "snapshot was saved for another metric than \(metric)"
        }
        guard found.count == count else {
            return "snapshot header counts \(found.count) rows, its size \(count)"
        }
        return nil
    }

    static func parseHeader(_ header: [UInt8]) -> (
        magic: [UInt8], dimension: Int, metric: UInt32, count: Int
    ) {
        func integer(_ at: Int, _ bytes: Int) -> UInt64 {
            (0..<bytes).reduce(0) { $0 | UInt64(header[at + $1]) << (8 * UInt64($1)) }
        }
        return (
            Array(header[0..<8]), Int(integer(8, 4)), UInt32(integer(12, 4)), Int(integer(16, 8))
        )
    }

    static func code(_ metric: DistanceMetric) -> UInt32 {
        switch metric {
        case .cosine: 1
        case .dot: 2
        case .l2: 3
        }
    }

    /// Writes the matrix as the snapshot at `watermark` (see the type's documentation).
    func save(to store: IndexSnapshotStore, watermark: Int64) throws {
        guard let index else { return }
        var header = Self.magic
        func put(_ value: UInt64, _ bytes: Int) {
            for i in 0..<bytes {
                header.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))))
            }
        }
        put(UInt64(dimension), 4)
        put(UInt64(Self.code(metric)), 4)
        put(UInt64(index.count), 8)
        put(0, 8)
        let matrix = index.matrix
        let ids = matrix.ids
        try header.withUnsafeBytes { head in
            try ids.withUnsafeBytes { idBytes in
                try matrix.withUnsafeRows { rows in
                    let segments = [head, idBytes, UnsafeRawBufferPointer(rows)]
                    var sum: UInt64 = 0
                    var position = 0
                    for segment in segments {
                        IndexSnapshotStore.wordSum(segment, at: position, into: &sum)
                        position += segment.count
                    }
                    try store.write(
                        segments, checksum: Int64(bitPattern: sum), watermark: watermark)
                }
            }
        }
    }

    func plan(k: Int, matching: Int?, options: VectorSearchOptions) -> String {
        "exact scan: " + (matching.map { "the \($0) candidates" } ?? "all \(count) vectors")
            + " (\(metric), \(dimension)-d)"
    }

    /// Always exact: `options` change nothing here.
    func search(
        _ query: [Float], k: Int, among candidates: [Int64]?, options: VectorSearchOptions,
        table: TableVectors
    )
        -> [Neighbor]
    {
        guard let index else { return [] }
        if let candidates { return index.search(query, k: k, among: candidates) }
        return index.search(query, k: k)
    }

    /// Every stored vector against the one in memory, bit for bit: missing, stale, and vectors
    /// without a row. The index stores vectors as it prepares them (normalised under cosine), so
    /// each stored one goes through the same preparation first. Nothing when not loaded.
    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard let index else { return [] }
        var missing = 0
        var stale = 0
        var stored = 0
        var expected = FlatIndex(dimension: dimension, metric: metric)
        let statement = try connection.prepare(
            "SELECT \(layout.rid), \"\(field)\" FROM \(layout.table) WHERE \"\(field)\" IS NOT NULL"
        )
        try statement.forEachRow { row in
            guard let vector = vector(from: row, column: 1) else { return }
            stored += 1
            expected.upsert(id: 0, vector: vector)
            switch index.vector(for: row.int64(at: 0)) {
            case nil: missing += 1
            case let indexed? where indexed != expected.vector(for: 0): stale += 1
            default: break
            }
        }
        let extra = index.count - (stored - missing)
        guard missing > 0 || stale > 0 || extra > 0 else { return [] }
        return [
            "\(name): vector index disagrees with the table: \(missing) vectors missing, \(stale) stale, \(extra) without a row"
        ]
    }
}
