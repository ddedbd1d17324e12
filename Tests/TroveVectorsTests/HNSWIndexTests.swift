import CTroveKernels
import Foundation
import Testing
import TroveTestSupport

@testable import TroveVectors

/// Small seeded data sets so the suite stays fast in debug builds.
struct HNSWFixture {
    var index: HNSWIndex
    var oracle: ExactOracle
    var rng: SeededGenerator
    let dimension: Int

    /// Built once and shared by the read-only tests (cosine, default parameters).
    static let sharedCosine = try! HNSWFixture(count: 2_000)

    init(
        count: Int = 2_000, dimension: Int = 32, metric: DistanceMetric = .cosine,
        configuration: HNSWConfiguration = .init(), threads: Int = 2, seed: UInt64 = 7
    ) throws {
        self.dimension = dimension
        rng = SeededGenerator(seed: seed)
        index = try HNSWIndex(dimension: dimension, metric: metric, configuration: configuration)
        oracle = ExactOracle(metric: metric)
        var items: [(id: Int64, vector: [Float])] = []
        for i in 0..<count {
            let v = rng.vector(dimension: dimension)
            items.append((Int64(i * 3 + 1), v))
            oracle.upsert(id: Int64(i * 3 + 1), vector: v)
        }
        index.insert(contentsOf: items, threads: threads)
    }

    /// Mean recall@k over `queries` random queries (optionally filtered).
    mutating func recall(
        queries: Int = 50, k: Int = 10, efSearch: Int? = nil,
        search: ((HNSWIndex, [Float], Int) -> [Neighbor])? = nil,
        filter: (Int64) -> Bool = { _ in true }
    ) -> (recall: Double, shortAnswers: Int) {
        var total = 0.0
        var short = 0
        for _ in 0..<queries {
            let q = rng.vector(dimension: dimension)
            let expected = oracle.search(q, k: k, where: filter)
            let got = search?(index, q, k) ?? index.search(q, k: k, efSearch: efSearch)
            if got.count != expected.count { short += 1 }
            if !got.allSatisfy({ filter($0.id) }) { short += 1 }
            total += ExactOracle.recall(got, expected)
        }
        return (total / Double(queries), short)
    }
}

@Suite("HNSWIndex")
struct HNSWIndexTests {
    @Test("Recall@10 >= 0.95 at default parameters", arguments: DistanceMetric.allCases)
    func recallAtDefaults(metric: DistanceMetric) throws {
        var f = metric == .cosine ? HNSWFixture.sharedCosine : try HNSWFixture(metric: metric)
        #expect(f.index.checkInvariants() == [])
        #expect(f.index.count == 2_000)
        let (recall, short) = f.recall()
        #expect(recall >= 0.95, "recall \(recall)")
        #expect(short == 0)
        // Reported distances are the metric's true distances.
        let q = f.rng.vector(dimension: 32)
        for hit in f.index.search(q, k: 5) {
            #expect(
                abs(Double(hit.distance) - f.oracle.distance(q, f.oracle.vectors[hit.id]!)) < 1e-4)
        }
    }

    @Test("A one-thread build is reproducible from the seed")
    func reproducible() throws {
        let a = try HNSWFixture(count: 400, threads: 1)
        let b = try HNSWFixture(count: 400, threads: 1)
        #expect(a.index.snapshot() == b.index.snapshot())
        let c = try HNSWFixture(count: 400, configuration: HNSWConfiguration(seed: 5), threads: 1)
        #expect(a.index.snapshot() != c.index.snapshot())
    }

    @Test("Single inserts and the parallel build give equally good graphs")
    func sequentialInserts() throws {
        var f = try HNSWFixture(count: 0)
        for i in 0..<1_000 {
            let v = f.rng.vector(dimension: 32)
            f.index.insert(id: Int64(i), vector: v)
            f.oracle.upsert(id: Int64(i), vector: v)
        }
        #expect(f.index.checkInvariants() == [])
        #expect(f.recall().recall >= 0.95)
    }

    @Test("Recall stays >= 0.95 after deleting 30% and inserting new vectors; slots are reused")
    func deleteAndInsert() throws {
        var f = try HNSWFixture()
        let ids = f.oracle.vectors.keys.sorted()
        var removed = 0
        for id in ids where f.rng.next() % 10 < 3 {
            #expect(f.index.remove(id: id))
            f.oracle.remove(id: id)
            removed += 1
        }
        #expect(!f.index.remove(id: -5))
        f.index.repairDeletions()
        #expect(f.index.pendingDeletions == 0)
        #expect(f.index.checkInvariants() == [])
        #expect(f.index.count == 2_000 - removed)
        let afterDelete = f.recall()
        #expect(afterDelete.recall >= 0.95, "recall after deletes \(afterDelete.recall)")
        #expect(afterDelete.shortAnswers == 0)
        let slotsBefore = f.index.slotCount
        for i in 0..<removed {
            let v = f.rng.vector(dimension: 32)
            f.index.insert(id: Int64(1_000_000 + i), vector: v)
            f.oracle.upsert(id: Int64(1_000_000 + i), vector: v)
        }
        #expect(f.index.slotCount == slotsBefore, "freed slots are reused")
        #expect(f.index.checkInvariants() == [])
        let afterInsert = f.recall()
        #expect(afterInsert.recall >= 0.95, "recall after re-inserts \(afterInsert.recall)")
        for id in ids.prefix(50) {
            #expect(f.index.contains(id: id) == (f.oracle.vectors[id] != nil))
        }
    }

    @Test("Update replaces the vector")
    func update() throws {
        var f = try HNSWFixture(count: 500)
        let target = f.rng.vector(dimension: 32)
        f.index.insert(id: 1, vector: target)
        f.oracle.upsert(id: 1, vector: target)
        #expect(f.index.count == 500)
        #expect(f.index.search(target, k: 1).first?.id == 1)
        f.index.repairDeletions()
        #expect(f.index.checkInvariants() == [])
        #expect(f.recall().recall >= 0.95)
    }

    @Test("Removing everything, then searching and inserting again")
    func removeEverything() throws {
        let f = try HNSWFixture(count: 200)
        for id in f.oracle.vectors.keys { f.index.remove(id: id) }
        #expect(f.index.count == 0)
        #expect(f.index.search([Float](repeating: 0.5, count: 32), k: 5).isEmpty)
        #expect(f.index.checkInvariants() == [])
        f.index.insert(id: 9, vector: [Float](repeating: 1, count: 32))
        #expect(f.index.search([Float](repeating: 1, count: 32), k: 5).map(\.id) == [9])
        f.index.removeAll()
        #expect(f.index.count == 0 && f.index.checkInvariants() == [])
    }

    @Test("k = 0, k > count, empty index")
    func edgeCounts() throws {
        let empty = try HNSWIndex(dimension: 4, metric: .l2)
        #expect(empty.search([1, 2, 3, 4], k: 3).isEmpty)
        let f = try HNSWFixture(count: 30)
        #expect(f.index.search([Float](repeating: 0.1, count: 32), k: 0).isEmpty)
        #expect(f.index.search([Float](repeating: 0.1, count: 32), k: 100).count == 30)
    }

    @Test(
        "Filtered search returns exactly k matching results with recall >= 0.95",
        arguments: [0.001, 0.01, 0.1, 0.5])
    func filtered(selectivity: Double) throws {
        var f = HNSWFixture.sharedCosine
        var allowed = Set<Int64>()
        for id in f.oracle.vectors.keys where Double(f.rng.next() % 1_000_000) / 1e6 < selectivity {
            allowed.insert(id)
        }
        while allowed.count < 10 {
            allowed.insert(f.oracle.vectors.keys.randomElement(using: &f.rng)!)
        }
        let (recall, short) = f.recall(
            search: { index, q, k in
                index.search(q, k: k, candidates: allowed).results
            }, filter: allowed.contains)
        #expect(short == 0)
        #expect(recall >= 0.95, "recall \(recall) at selectivity \(selectivity)")
        // The filter-aware walk on its own (the plan would scan at low selectivity).
        let (walkRecall, walkShort) = f.recall(
            search: { index, q, k in
                index.search(q, k: k, where: allowed.contains)
            }, filter: allowed.contains)
        #expect(walkShort == 0)
        #expect(walkRecall >= 0.95, "walk recall \(walkRecall) at selectivity \(selectivity)")
    }

    @Test("The planner scans few matches and walks many")
    func planner() {
        if case .graphTraversal = HNSWIndex.plan(
            matching: 500, total: 1_000_000, k: 10, efSearch: 64)
        {
            Issue.record("500 matches should be scanned")
        }
        if case .exactScan = HNSWIndex.plan(
            matching: 500_000, total: 1_000_000, k: 10, efSearch: 64)
        {
            Issue.record("half the rows should be walked")
        }
    }

    @Test(
        "Quantized walks with float32 re-scoring keep recall",
        arguments: [HNSWQuantization.int8, .binary])
    func quantized(mode: HNSWQuantization) throws {
        let config = HNSWConfiguration(quantization: mode, rescoreFactor: mode == .binary ? 20 : 4)
        var f = try HNSWFixture(dimension: 48, configuration: config)
        #expect(f.index.checkInvariants() == [])
        // Sign bits of a 48-d vector rank coarsely: the binary walk needs a longer candidate list.
        let (recall, short) = f.recall(efSearch: mode == .binary ? 400 : nil)
        #expect(short == 0)
        #expect(recall >= 0.95, "\(mode) recall \(recall)")
        let usage = f.index.memoryUsage
        #expect(usage.walkedVectorBytes < f.index.slotCount * 48 * 4 / 3)
        #expect(usage.fullPrecisionBytes == f.index.slotCount * 48 * 4)
        // Round trip keeps the codes (they are rebuilt from the float32 vectors).
        let copy = try HNSWIndex(snapshot: f.index.snapshot())
        let q = f.rng.vector(dimension: 48)
        #expect(copy.search(q, k: 10) == f.index.search(q, k: 10))
    }

    @Test(
        "Codes-only int8: no float32 copy, recall >= 0.95 re-scored from the caller's vectors",
        arguments: [DistanceMetric.cosine, .l2])
    func codesOnly(metric: DistanceMetric) throws {
        var config = HNSWConfiguration(quantization: .int8)
        config.storesFullPrecision = false
        var f = try HNSWFixture(dimension: 48, metric: metric, configuration: config)
        #expect(f.index.checkInvariants() == [])
        let usage = f.index.memoryUsage
        #expect(usage.fullPrecisionBytes == 0)
        // Vector bytes: int8 codes + scale + norm against float32 (at 48-d the links dominate the
        // total; the 384-d benchmark reports the whole index).
        let full = try HNSWFixture(count: 200, dimension: 48, metric: metric).index.memoryUsage
        let codeBytes = Double(usage.walkedVectorBytes) / Double(usage.vectors)
        let floatBytes = Double(full.walkedVectorBytes) / Double(full.vectors)
        #expect(codeBytes <= 0.35 * floatBytes, "\(codeBytes) vs \(floatBytes) bytes per vector")
        let oracle = f.oracle
        let source: (Int64) -> [Float]? = { oracle.vectors[$0] }
        let rescored = f.recall(search: { index, q, k in
            index.search(q, k: k, rescoringWith: source)
        })
        #expect(rescored.shortAnswers == 0)
        #expect(rescored.recall >= 0.95, "re-scored recall \(rescored.recall)")
        // Re-scored distances are the float32 ones.
        let q = f.rng.vector(dimension: 48)
        for hit in f.index.search(q, k: 5, rescoringWith: source) {
            #expect(
                abs(Double(hit.distance) - f.oracle.distance(q, f.oracle.vectors[hit.id]!)) < 1e-3)
        }
        // Deletes, repair and re-inserts work from the codes alone.
        let ids = f.oracle.vectors.keys.sorted()
        for id in ids where f.rng.next() % 10 < 3 {
            f.index.remove(id: id)
            f.oracle.remove(id: id)
        }
        f.index.repairDeletions()
        for i in 0..<300 {
            let v = f.rng.vector(dimension: 48)
            f.index.insert(id: Int64(500_000 + i), vector: v)
            f.oracle.upsert(id: Int64(500_000 + i), vector: v)
        }
        #expect(f.index.checkInvariants() == [])
        let oracleAfter = f.oracle
        let after = f.recall { index, q, k in
            index.search(q, k: k, rescoringWith: { oracleAfter.vectors[$0] })
        }
        #expect(after.recall >= 0.95, "recall after deletes and inserts \(after.recall)")
        // Snapshots keep the codes (format version 2, codes-only flag) and nothing else.
        let bytes = f.index.snapshot()
        let copy = try HNSWIndex(snapshot: bytes)
        #expect(copy.snapshot() == bytes && copy.configuration.storesFullPrecision == false)
        let q2 = f.rng.vector(dimension: 48)
        let source2: (Int64) -> [Float]? = { oracleAfter.vectors[$0] }
        #expect(
            copy.search(q2, k: 10, rescoringWith: source2)
                == f.index.search(q2, k: 10, rescoringWith: source2))
        #expect(throws: VectorIndexError.self) { try f.index.converted(to: .binary) }
    }

    @Test(
        "A snapshot with a valid checksum but a broken graph is refused; free slots round trip",
        arguments: ["duplicate", "self-loop", "out of range", "count"])
    func brokenGraph(damage: String) throws {
        var f = try HNSWFixture(count: 300)
        // Free slots too: removed, then repaired away.
        for id in [Int64(4), 10, 301] { #expect(f.index.remove(id: id)) }
        f.index.repairDeletions()
        let bytes = f.index.snapshot()
        let copy = try HNSWIndex(snapshot: bytes)
        #expect(copy.checkInvariants() == [] && copy.snapshot() == bytes)
        let q = f.rng.vector(dimension: 32)
        #expect(copy.search(q, k: 10) == f.index.search(q, k: 10))
        // Slot 0's layer-0 list: after the 80-byte header, the ids, states and levels (10 bytes a
        // slot) and the vectors (32 floats a slot).
        var broken = bytes
        let slots = Int(bytes[48..<52].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
        let list = 80 + slots * (10 + 32 * 4)
        func put(_ value: UInt32, at offset: Int) {
            withUnsafeBytes(of: value.littleEndian) {
                broken.replaceSubrange(offset..<offset + 4, with: $0)
            }
        }
        let first = broken[list + 4..<list + 8].withUnsafeBytes {
            $0.loadUnaligned(as: UInt32.self)
        }
        #expect(broken[list..<list + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } >= 2)
        switch damage {
        case "duplicate": put(first, at: list + 8)
        case "self-loop": put(0, at: list + 4)
        case "out of range": put(1_000_000, at: list + 4)
        default: put(33, at: list)
        }
        let body = broken[0..<(broken.count - 8)]
        broken.replaceSubrange(
            (broken.count - 8)...,
            with: withUnsafeBytes(of: snapshotChecksum(body).littleEndian, Array.init))
        #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: broken) }
        #expect(throws: VectorIndexError.self) {
            try broken.withUnsafeBytes { try HNSWIndex(snapshot: $0) }
        }
    }

    @Test(
        "Snapshots of versions 1-3 (one record per slot) are still read, whole or in pieces",
        arguments: [(UInt32(3), HNSWQuantization.none), (3, .int8), (2, .none), (1, .none)])
    func earlierVersions(version: UInt32, quantization: HNSWQuantization) throws {
        var f = try HNSWFixture(count: 300, configuration: .init(quantization: quantization))
        for id in [Int64(4), 10] { #expect(f.index.remove(id: id)) }
        f.index.repairDeletions()
        #expect(f.index.remove(id: 13))  // a pending tombstone too
        let current = f.index.snapshot()
        #expect(current[8..<12] == [4, 0, 0, 0])
        var bytes = Self.earlierLayout(current, version: version)
        let q = f.rng.vector(dimension: 32)
        for copy in [try HNSWIndex(snapshot: bytes), try Self.readInPieces(bytes, rng: &f.rng)] {
            #expect(copy.checkInvariants() == [] && copy.count == f.index.count)
            #expect(copy.search(q, k: 10) == f.index.search(q, k: 10))
            #expect(copy.snapshot() == current)
        }
        // The checksum follows the stated version: relabelled only, the bytes are refused.
        bytes[8] = version == 3 ? 2 : 3
        #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: bytes) }
    }

    @Test("A version 3 snapshot larger than a huge page (its buffer rounded up) loads in pieces")
    func largeEarlierVersion() throws {
        var f = try HNSWFixture(
            count: 300, dimension: 4_096, configuration: .init(m: 4, efConstruction: 16))
        let bytes = Self.earlierLayout(f.index.snapshot(), version: 3)
        #expect(bytes.count > 4 << 20)
        let copy = try Self.readInPieces(bytes, rng: &f.rng, largest: 70_000)
        let q = f.rng.vector(dimension: 4_096)
        #expect(copy.search(q, k: 10) == f.index.search(q, k: 10))
    }

    @Test("Version 1 snapshots with the codes-only flag are refused")
    func versionOneFlags() throws {
        let f = try HNSWFixture(count: 50)
        var bytes = Self.earlierLayout(f.index.snapshot(), version: 1)
        bytes[18] = 1
        let flagged = bytes[0..<(bytes.count - 8)]
        bytes.replaceSubrange(
            (bytes.count - 8)...,
            with: withUnsafeBytes(of: snapshotChecksum(flagged).littleEndian, Array.init))
        #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: bytes) }
    }

    @Test(
        "A snapshot read in pieces of any size loads as the whole does; damage in a piece is refused",
        arguments: [HNSWQuantization.none, .int8, .binary])
    func readInPieces(quantization: HNSWQuantization) throws {
        var f = try HNSWFixture(count: 400, configuration: .init(quantization: quantization))
        for id in [Int64(7), 22] { #expect(f.index.remove(id: id)) }
        let bytes = f.index.snapshot()
        let whole = try HNSWIndex(snapshot: bytes)
        let pieces = try Self.readInPieces(bytes, rng: &f.rng)
        #expect(pieces.snapshot() == bytes && whole.snapshot() == bytes)
        #expect(pieces.checkInvariants() == [])
        let q = f.rng.vector(dimension: 32)
        #expect(pieces.search(q, k: 10) == f.index.search(q, k: 10))
        for _ in 0..<20 {
            var flipped = bytes
            let i = Int(f.rng.next() % UInt64(bytes.count))
            flipped[i] ^= UInt8(1 << (f.rng.next() % 8))
            #expect(throws: VectorIndexError.self) { try Self.readInPieces(flipped, rng: &f.rng) }
        }
        #expect(throws: VectorIndexError.self) {
            try Self.readInPieces(Array(bytes.dropLast(9)), rng: &f.rng)
        }
        #expect(throws: VectorIndexError.self) {
            try Self.readInPieces(Array(bytes.prefix(50)), rng: &f.rng)
        }
        // More bytes than the reader was told of.
        let reader = HNSWSnapshotReader(count: bytes.count - 1)
        #expect(throws: VectorIndexError.self) {
            try bytes.withUnsafeBytes { all in
                try reader.read(count: all.count) { offset, into in
                    into.copyMemory(
                        from: UnsafeRawBufferPointer(rebasing: all[offset..<offset + into.count]))
                }
            }
        }
    }

    @Test("A non-finite vector component is refused wherever the pieces are cut")
    func nonFiniteInPieces() throws {
        var f = try HNSWFixture(count: 100)
        var bytes = f.index.snapshot()
        // Slot 57's component 5: after the header, ids, states and levels, 57 vectors of 32 floats.
        let at = 80 + 100 * 10 + (57 * 32 + 5) * 4
        withUnsafeBytes(of: Float.nan.bitPattern.littleEndian) {
            bytes.replaceSubrange(at..<at + 4, with: $0)
        }
        let body = bytes[0..<(bytes.count - 8)]
        bytes.replaceSubrange(
            (bytes.count - 8)...,
            with: withUnsafeBytes(of: snapshotChecksum(body).littleEndian, Array.init))
        #expect(throws: VectorIndexError.corrupt("slot 57: component 5 is not finite")) {
            try HNSWIndex(snapshot: bytes)
        }
        #expect(throws: VectorIndexError.corrupt("slot 57: component 5 is not finite")) {
            try Self.readInPieces(bytes, rng: &f.rng)
        }
    }

    @Test(
        "The version 4 checksum: the AVX2 and portable kernels and the stated rounds agree, in any pieces"
    )
    func checksumVersionFour() {
        var rng = SeededGenerator(seed: 44)
        // The keys as the kernel's comment states them: splitmix64 from "TROVHNSW".
        var state: UInt64 = 0x5452_4F56_4853_4E57
        let keys: [UInt64] = (0..<32).map { _ in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        let blocks = 9
        let bytes = (0..<(blocks * 1024)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var expected: [UInt64] = (1...8).map { 0x9E37_79B1_85EB_CA87 &* UInt64($0) }
        for b in 0..<blocks {
            for s in 0..<16 {
                for j in 0..<8 {
                    let at = b * 1024 + s * 64 + j * 8
                    let w = bytes[at..<(at + 8)].withUnsafeBytes {
                        UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self))
                    }
                    let k = w ^ keys[s + j]
                    expected[j] = expected[j] &+ (k & 0xFFFF_FFFF) &* (k >> 32) &+ w
                }
            }
            for j in 0..<8 {
                var x = expected[j]
                x ^= x >> 47
                x ^= keys[24 + j]
                expected[j] = x &* 0x9E37_79B1
            }
        }
        for kernel in [trove_checksum_blocks, trove_checksum_blocks_portable] {
            var lanes: [UInt64] = (1...8).map { 0x9E37_79B1_85EB_CA87 &* UInt64($0) }
            bytes.withUnsafeBytes { b in
                lanes.withUnsafeMutableBufferPointer {
                    kernel($0.baseAddress, b.baseAddress, blocks)
                }
            }
            #expect(lanes == expected)
        }
        // Pieces of any size, a partial last block: the same as in one go.
        let tail = Array(bytes.dropLast(100))
        var whole = SnapshotHasher()
        var pieces = SnapshotHasher()
        tail.withUnsafeBytes { all in
            whole.update(all)
            var at = 0
            while at < all.count {
                let n = min(all.count - at, 1 + Int(rng.next() % 2_500))
                pieces.update(UnsafeRawBufferPointer(rebasing: all[at..<(at + n)]))
                at += n
            }
        }
        #expect(whole.finish() == pieces.finish())
        var shorter = SnapshotHasher()
        tail.dropLast().withUnsafeBytes { shorter.update($0) }
        #expect(shorter.finish() != whole.finish())
    }

    /// Hands `bytes` to an `HNSWSnapshotReader` in pieces of random sizes (1 byte to `largest`).
    static func readInPieces(_ bytes: [UInt8], rng: inout SeededGenerator, largest: UInt64 = 3_000)
        throws -> HNSWIndex
    {
        let reader = HNSWSnapshotReader(count: bytes.count)
        var at = 0
        try bytes.withUnsafeBytes { all in
            while at < all.count {
                let count = min(
                    all.count - at, 1 + Int(rng.next() % (rng.next() % 2 == 0 ? 7 : largest)))
                let start = at
                try reader.read(count: count) { offset, into in
                    #expect(offset + into.count <= count)
                    into.copyMemory(
                        from: UnsafeRawBufferPointer(
                            rebasing: all[(start + offset)..<(start + offset + into.count)]))
                }
                at += count
            }
        }
        return try reader.finish()
    }

    /// A version 4 snapshot rewritten in the layout of `version` (1-3: one record per slot:
    /// state, level, id, then unless free the vector, layer-0 list and upper lists) with that
    /// version's checksum, as those versions wrote it.
    static func earlierLayout(_ bytes: [UInt8], version: UInt32) -> [UInt8] {
        func u32(_ at: Int) -> Int {
            Int(bytes[at..<at + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) })
        }
        let dimension = u32(20)
        let m = u32(24)
        let n = u32(48)
        let codesOnly = bytes[18] & 1 == 1
        let vectorBytes = codesOnly ? dimension + 8 : dimension * 4
        let states = 80 + 8 * n
        let levels = states + n
        let vectors = levels + n
        let lists = vectors + n * vectorBytes
        var upper = lists + n * (2 * m + 1) * 4
        var body: [UInt8] = []
        func take(_ from: Int, _ count: Int) {
            body.append(contentsOf: bytes[from..<(from + count)])
        }
        for s in 0..<n {
            take(states + s, 1)
            take(levels + s, 1)
            take(80 + 8 * s, 8)
            guard bytes[states + s] != 2 else { continue }
            if codesOnly {
                let scales = vectors + n * dimension
                let norms = scales + 4 * n
                take(vectors + s * dimension, dimension)
                take(scales + 4 * s, 4)
                take(norms + 4 * s, 4)
            } else {
                take(vectors + s * vectorBytes, vectorBytes)
            }
            take(lists + s * (2 * m + 1) * 4, (2 * m + 1) * 4)
            let upperBytes = Int(bytes[levels + s]) * (m + 1) * 4
            take(upper, upperBytes)
            upper += upperBytes
        }
        var out = Array(bytes[0..<80])
        withUnsafeBytes(of: version.littleEndian) { out.replaceSubrange(8..<12, with: $0) }
        withUnsafeBytes(of: UInt64(body.count).littleEndian) {
            out.replaceSubrange(64..<72, with: $0)
        }
        out += body
        out += withUnsafeBytes(of: snapshotChecksum(out[...]).littleEndian, Array.init)
        return out
    }

    @Test("Concurrent searches while a single writer inserts and deletes")
    func concurrentReaders() async throws {
        var f = try HNSWFixture(count: 600)
        let index = f.index
        let queries = (0..<40).map { _ in f.rng.vector(dimension: 32) }
        let newVectors = (0..<300).map { _ in f.rng.vector(dimension: 32) }
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                for (i, v) in newVectors.enumerated() {
                    index.insert(id: Int64(2_000_000 + i), vector: v)
                    if i % 3 == 0 { index.remove(id: Int64(i * 3 + 1)) }
                }
                return 0
            }
            for r in 0..<3 {
                group.addTask {
                    var answered = 0
                    for q in queries {
                        let hits = index.search(q, k: 10)
                        if hits.count == 10 && Set(hits.map(\.id)).count == 10 { answered += 1 }
                        _ = index.search(q, k: 5, efSearch: 20 + r)
                    }
                    return answered
                }
            }
            var answered = 0
            for try await n in group { answered += n }
            #expect(answered == 120)
        }
        #expect(index.checkInvariants() == [])
        #expect(index.count == 600 + 300 - 100)
    }

    @Test("Snapshot round trip gives the same index")
    func roundTrip() throws {
        var f = try HNSWFixture(count: 800, metric: .l2)
        for id in f.oracle.vectors.keys.sorted().prefix(40) {  // pending tombstones too
            f.index.remove(id: id)
            f.oracle.remove(id: id)
        }
        let bytes = f.index.snapshot()
        let copy = try HNSWIndex(snapshot: bytes)
        #expect(copy.snapshot() == bytes)
        #expect(
            copy.count == f.index.count && copy.metric == .l2
                && copy.configuration == f.index.configuration)
        #expect(copy.checkInvariants() == [])
        for _ in 0..<10 {
            let q = f.rng.vector(dimension: 32)
            #expect(copy.search(q, k: 10) == f.index.search(q, k: 10))
        }
        // Switching the walk to int8 keeps the graph and the answers' quality.
        let compact = try copy.converted(to: .int8)
        #expect(compact.configuration.quantization == .int8 && compact.count == copy.count)
        #expect(compact.checkInvariants() == [])
        let q = f.rng.vector(dimension: 32)
        #expect(ExactOracle.recall(compact.search(q, k: 10), f.oracle.search(q, k: 10)) >= 0.8)
        #expect(throws: VectorIndexError.self) { try copy.converted(to: .binary, rescoreFactor: 0) }
    }

    @Test("Corrupt or truncated snapshots throw")
    func corruption() throws {
        var f = try HNSWFixture(count: 300)
        let bytes = f.index.snapshot()
        #expect(throws: VectorIndexError.notASnapshot) {
            try HNSWIndex(snapshot: Array(bytes.dropFirst()))
        }
        #expect(throws: VectorIndexError.self) {
            try HNSWIndex(snapshot: Array(bytes.prefix(bytes.count / 2)))
        }
        #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: Array(bytes.prefix(40))) }
        #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: []) }
        var version = bytes
        version[8] = 9
        #expect(throws: VectorIndexError.unsupportedVersion(9)) { try HNSWIndex(snapshot: version) }
        for _ in 0..<20 {
            var flipped = bytes
            let i = Int(f.rng.next() % UInt64(bytes.count))
            flipped[i] ^= UInt8(1 << (f.rng.next() % 8))
            #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: flipped) }
        }
        // A huge slot count in an otherwise consistent header must not allocate.
        var huge = bytes
        huge.replaceSubrange(48..<52, with: [0xFF, 0xFF, 0xFF, 0x7F])
        let body = huge[0..<(huge.count - 8)]
        huge.replaceSubrange(
            (huge.count - 8)...,
            with: withUnsafeBytes(of: snapshotChecksum(body).littleEndian, Array.init))
        #expect(throws: VectorIndexError.self) { try HNSWIndex(snapshot: huge) }
    }

    @Test("Bad configurations throw")
    func configuration() {
        #expect(throws: VectorIndexError.self) {
            try HNSWIndex(dimension: 8, metric: .l2, configuration: .init(m: 1))
        }
        #expect(throws: VectorIndexError.self) {
            try HNSWIndex(dimension: 8, metric: .l2, configuration: .init(efConstruction: 0))
        }
        #expect(throws: VectorIndexError.self) { try HNSWIndex(dimension: 0, metric: .l2) }
        // A configuration encoded before `storesFullPrecision` existed still decodes.
        let old =
            #"{"m":8,"efConstruction":50,"efSearch":20,"seed":3,"quantization":"int8","rescoreFactor":4}"#
        let decoded = try? JSONDecoder().decode(HNSWConfiguration.self, from: Data(old.utf8))
        #expect(
            decoded
                == HNSWConfiguration(
                    m: 8, efConstruction: 50, efSearch: 20, seed: 3, quantization: .int8))
        var codesOnly = HNSWConfiguration(quantization: .int8)
        codesOnly.storesFullPrecision = false
        let roundTrip = try? JSONDecoder().decode(
            HNSWConfiguration.self, from: JSONEncoder().encode(codesOnly))
        #expect(roundTrip == codesOnly)
        var binaryCodesOnly = HNSWConfiguration(quantization: .binary)
        binaryCodesOnly.storesFullPrecision = false
        #expect(throws: VectorIndexError.self) {
            try HNSWIndex(dimension: 8, metric: .l2, configuration: binaryCodesOnly)
        }
    }
}
