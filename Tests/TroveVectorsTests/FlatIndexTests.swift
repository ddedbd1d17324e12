import Testing
import TroveTestSupport

@testable import TroveVectors

@Suite("FlatIndex")
struct FlatIndexTests {
    static func makeData(
        dimension: Int, count: Int, metric: DistanceMetric, seed: UInt64
    ) -> (FlatIndex, ExactOracle, SeededGenerator) {
        var rng = SeededGenerator(seed: seed)
        var index = FlatIndex(dimension: dimension, metric: metric)
        var oracle = ExactOracle(metric: metric)
        for i in 0..<count {
            // Ids deliberately not equal to slots.
            let id = Int64(i * 7 + 3)
            let v = rng.vector(dimension: dimension)
            index.upsert(id: id, vector: v)
            oracle.upsert(id: id, vector: v)
        }
        return (index, oracle, rng)
    }

    @Test(
        "Equals the brute-force oracle", arguments: DistanceMetric.allCases, [1, 3, 8, 17, 64, 100])
    func matchesOracle(metric: DistanceMetric, dimension: Int) {
        var (index, oracle, rng) = Self.makeData(
            dimension: dimension, count: 600, metric: metric, seed: 1)
        for k in [1, 10, 37] {
            let q = rng.vector(dimension: dimension)
            let got = index.search(q, k: k)
            let expected = oracle.search(q, k: k)
            #expect(oracle.mismatch(got, expected: expected, query: q) == nil)
        }
        // Ties: duplicate vectors must come back by ascending id.
        let v = rng.vector(dimension: dimension)
        for id: Int64 in [9_000_003, 9_000_001, 9_000_002] {
            index.upsert(id: id, vector: v)
            oracle.upsert(id: id, vector: v)
        }
        let hits = index.search(v, k: index.count)
        let duplicates = hits.filter { $0.id >= 9_000_001 }
        #expect(duplicates.map(\.id) == [9_000_001, 9_000_002, 9_000_003])
        #expect(Set(duplicates.map(\.distance)).count == 1)
        for i in hits.indices.dropFirst() {
            #expect((hits[i - 1].distance, hits[i - 1].id) < (hits[i].distance, hits[i].id))
        }
    }

    @Test(
        "The multi-run scan of larger indexes equals the oracle",
        arguments: DistanceMetric.allCases, [(1_203, 19), (1_030, 70), (1_024, 8)])
    func largeScanMatchesOracle(metric: DistanceMetric, shape: (count: Int, dimension: Int)) {
        // Sizes past 4 runs × 256 rows: runs of 300 rows (a full and a partial block each) with
        // 3 rows left over, runs of 257 with 2 left over, and exactly 4 runs of one block.
        var (index, oracle, rng) = Self.makeData(
            dimension: shape.dimension, count: shape.count, metric: metric, seed: 11)
        for k in [1, 10, 100] {
            let q = rng.vector(dimension: shape.dimension)
            #expect(
                oracle.mismatch(index.search(q, k: k), expected: oracle.search(q, k: k), query: q)
                    == nil)
        }
        // The nearest row to a stored vector is that row, wherever it sits (last rows included).
        for id in [
            index.matrix.ids[0], index.matrix.ids[shape.count / 4],
            index.matrix.ids[shape.count - 1],
        ] {
            let v = index.vector(for: id)!
            let hit = index.search(v, k: 1)
            let expected = oracle.search(v, k: 1)
            #expect(oracle.mismatch(hit, expected: expected, query: v) == nil)
        }
        let all = index.search(rng.vector(dimension: shape.dimension), k: shape.count)
        #expect(Set(all.map(\.id)).count == shape.count)
    }

    @Test("k = 0, k > count, empty index")
    func edgeCounts() {
        let (index, oracle, _) = Self.makeData(dimension: 5, count: 20, metric: .l2, seed: 2)
        let q: [Float] = [0.1, 0.2, 0.3, 0.4, 0.5]
        #expect(index.search(q, k: 0).isEmpty)
        #expect(index.search(q, k: -3).isEmpty)
        let all = index.search(q, k: 100)
        #expect(all.count == 20)
        #expect(oracle.mismatch(all, expected: oracle.search(q, k: 100), query: q) == nil)
        #expect(FlatIndex(dimension: 5, metric: .dot).search(q, k: 10).isEmpty)
        let huge = index.search(q, k: 10_000)
        #expect(huge.count == 20 && huge == all)
        #expect(index.search(q, k: 5, among: []).isEmpty)
    }

    @Test(
        "Filtered search returns exactly k at every selectivity",
        arguments: DistanceMetric.allCases, [0.01, 0.1, 0.5])
    func filtered(metric: DistanceMetric, selectivity: Double) {
        var (index, oracle, rng) = Self.makeData(
            dimension: 19, count: 3_000, metric: metric, seed: 3)
        let allowed = Set(
            index.matrix.ids.filter { _ in Double.random(in: 0..<1, using: &rng) < selectivity })
        let k = 10
        #expect(allowed.count >= k)
        let q = rng.vector(dimension: 19)
        let expected = oracle.search(q, k: k, where: allowed.contains)
        let viaWhere = index.search(q, k: k, where: allowed.contains)
        // Duplicates and unknown ids among the candidates must be harmless.
        let viaAmong = index.search(
            q, k: k, among: Array(allowed) + Array(allowed.prefix(5)) + [-1, -2])
        #expect(viaWhere.count == k && viaAmong.count == k)
        #expect(viaWhere.allSatisfy { allowed.contains($0.id) })
        #expect(oracle.mismatch(viaWhere, expected: expected, query: q) == nil)
        #expect(oracle.mismatch(viaAmong, expected: expected, query: q) == nil)
    }

    @Test(
        "Append, update, remove and swap keep the index equal to the oracle",
        arguments: DistanceMetric.allCases)
    func mutations(metric: DistanceMetric) {
        var (index, oracle, rng) = Self.makeData(dimension: 13, count: 300, metric: metric, seed: 4)
        var ids = Array(oracle.vectors.keys).sorted()
        for step in 0..<400 {
            switch step % 4 {
            case 0, 1:  // remove a random id (often from the middle: swap-remove)
                let id = ids.remove(at: Int.random(in: 0..<ids.count, using: &rng))
                let removed = index.remove(id: id)
                let removedAgain = index.remove(id: id)
                oracle.remove(id: id)
                #expect(removed && !removedAgain)
            case 2:  // update in place
                let id = ids[Int.random(in: 0..<ids.count, using: &rng)]
                let v = rng.vector(dimension: 13)
                index.upsert(id: id, vector: v)
                oracle.upsert(id: id, vector: v)
            default:  // append a new id
                let id = Int64(100_000 + step)
                let v = rng.vector(dimension: 13)
                index.upsert(id: id, vector: v)
                oracle.upsert(id: id, vector: v)
                ids.append(id)
            }
        }
        #expect(index.count == oracle.count)
        for id in ids {
            #expect(index.contains(id: id))
            let stored = index.vector(for: id)!
            let raw = oracle.vectors[id]!
            if metric == .cosine {
                var n = raw
                DistanceKernels.normalize(&n)
                #expect(zip(stored, n).allSatisfy { abs($0 - $1) < 1e-6 })
            } else {
                #expect(stored == raw)
            }
        }
        // The slot map must be a bijection after all the swaps.
        for (slot, id) in index.matrix.ids.enumerated() {
            #expect(index.matrix.slot(of: id) == UInt32(slot))
        }
        for _ in 0..<5 {
            let q = rng.vector(dimension: 13)
            #expect(
                oracle.mismatch(index.search(q, k: 15), expected: oracle.search(q, k: 15), query: q)
                    == nil)
        }
        index.removeAll()
        #expect(index.count == 0 && index.search([Float](repeating: 1, count: 13), k: 3).isEmpty)
    }

    @Test("Cosine: zero vectors have distance 1, copies are independent")
    func cosineZeroAndCopyOnWrite() {
        var index = FlatIndex(dimension: 4, metric: .cosine)
        index.upsert(id: 1, vector: [0, 0, 0, 0])
        index.upsert(id: 2, vector: [1, 0, 0, 0])
        let copy = index
        index.remove(id: 2)
        let hits = copy.search([1, 1, 0, 0], k: 2)
        #expect(hits.map(\.id) == [2, 1])
        #expect(abs(hits[1].distance - 1) < 1e-6)
        #expect(copy.count == 2 && index.count == 1)
        #expect(abs(index.search([0, 0, 0, 0], k: 1)[0].distance - 1) < 1e-6)
    }
}

@Suite("VectorMatrix")
struct VectorMatrixTests {
    @Test("Swap-remove moves the last row into the freed slot")
    func swapRemove() {
        var m = VectorMatrix(dimension: 2)
        m.append(id: 10, vector: [1, 1])
        m.append(id: 20, vector: [2, 2])
        m.append(id: 30, vector: [3, 3])
        let removed = m.remove(id: 10)
        #expect(removed?.slot == 0 && removed?.movedID == 30)
        #expect(m.slot(of: 30) == 0 && m.row(forID: 30) == [3, 3] && m.id(at: 0) == 30)
        let last = m.remove(id: 20)
        #expect(last?.slot == 1 && last?.movedID == nil)
        #expect(m.remove(id: 20) == nil)
        #expect(m.count == 1 && m.ids == [30])
        m.upsert(id: 30, vector: [4, 5])
        #expect(m.row(at: 0) == [4, 5] && m.count == 1)
    }

    @Test("A buffer past the huge-page threshold keeps rows, and copies stay independent")
    func largeBufferCopyOnWrite() {
        // 3,000 rows of 384 floats = 4.6 MB: the 2 MB aligned, huge-page advised allocation.
        let dimension = 384
        let rows = 3_000
        var rng = SeededGenerator(seed: 77)
        var m = VectorMatrix(dimension: dimension)
        var expected: [[Float]] = []
        for i in 0..<rows {
            let v = rng.vector(dimension: dimension)
            expected.append(v)
            m.append(id: Int64(i), vector: v)
        }
        #expect(m.storage.capacity * 4 >= RowBuffer.hugePageThreshold)
        #expect(Int(bitPattern: m.storage.base) % RowBuffer.hugePageSize == 0)
        for i in stride(from: 0, to: rows, by: 97) {
            #expect(m.row(forID: Int64(i)) == expected[i])
        }
        let copy = m
        m.remove(id: 0)
        m.update(slot: 1, vector: [Float](repeating: 2, count: dimension))
        #expect(
            copy.count == rows && copy.row(forID: 0) == expected[0]
                && copy.row(at: 1) == expected[1])
        #expect(m.row(forID: 0) == nil && m.row(forID: Int64(rows - 1)) == expected[rows - 1])
        var cleared = copy
        cleared.removeAll()
        #expect(
            cleared.isEmpty && copy.count == rows
                && copy.row(at: UInt32(rows - 1)) == expected[rows - 1])
        cleared.append(id: 5, vector: expected[5])
        #expect(cleared.row(at: 0) == expected[5])
    }

    /// Fills a matrix in place as a snapshot load does, `chunk` bytes at a time.
    static func filled(ids: [Int64], floats: [Float], dimension: Int, chunk: Int) -> VectorMatrix? {
        VectorMatrix(dimension: dimension, count: ids.count) { idBytes, rows in
            ids.withUnsafeBytes { idBytes.copyMemory(from: $0) }
            floats.withUnsafeBytes { source in
                var offset = 0
                while offset < source.count {
                    let n = min(chunk, source.count - offset)
                    UnsafeMutableRawBufferPointer(rebasing: rows[offset..<offset + n])
                        .copyMemory(
                            from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + n]))
                    offset += n
                }
            }
            return true
        }
    }

    // 12 MB of rows (above the huge-page threshold) and a tiny matrix, written in snapshot-sized
    // parts: every byte written must come back.
    @Test(
        "A matrix filled in place holds exactly what was written",
        arguments: [(count: 6_000, dimension: 512), (count: 5, dimension: 3)])
    func fillingKeepsEveryByte(shape: (count: Int, dimension: Int)) throws {
        var rng = SeededGenerator(seed: 27)
        let ids = (0..<shape.count).map { Int64($0 * 5 + 1) }
        let floats = (0..<shape.count * shape.dimension).map { _ in
            Float.random(in: -1...1, using: &rng)
        }
        let matrix = try #require(
            Self.filled(ids: ids, floats: floats, dimension: shape.dimension, chunk: 3_904))
        #expect(matrix.count == shape.count)
        #expect(matrix.ids == ids)
        for slot in 0..<shape.count {
            let expected = Array(floats[slot * shape.dimension..<(slot + 1) * shape.dimension])
            guard matrix.row(forID: ids[slot]) == expected else {
                Issue.record("row \(slot) differs from what was written")
                return
            }
        }
    }

    @Test("A fill that fails or repeats an id gives no matrix")
    func refusedFill() {
        #expect(VectorMatrix(dimension: 4, count: 3) { _, _ in false } == nil)
        #expect(
            Self.filled(
                ids: [1, 2, 1], floats: Array(repeating: 0.5, count: 12), dimension: 4, chunk: 16)
                == nil)
    }
}
