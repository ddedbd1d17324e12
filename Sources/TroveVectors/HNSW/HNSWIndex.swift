import CTroveKernels
import Foundation

/// An approximate nearest-neighbour index: a Hierarchical Navigable Small World graph
/// (Malkov & Yashunin 2018), in pure Swift plus the run-time dispatched kernels of
/// `CTroveKernels`.
///
/// Each node lives on layer 0 and, with probability falling geometrically (`1/ln M` per layer,
/// from a seeded generator keyed by the id so builds are reproducible), on higher layers; a search
/// descends greedily from the top layer and runs a best-first search with `efSearch` candidates on
/// layer 0. Neighbours are chosen with the paper's heuristic (algorithm 4), as in hnswlib.
///
/// **Deletion** marks the node deleted at once (it stops appearing in results) and repairs the
/// graph in batches: every node that linked to a deleted node is reconnected from the deleted
/// node's own neighbours with the same heuristic, then the slot is freed for reuse. A batch runs
/// once deleted nodes reach 5% of the nodes, or on `repairDeletions()`. An update is a delete and
/// an insert.
///
/// **Synchronisation.** A readers-writer lock guards the index: any number of searches run at
/// once under the read lock; an insert, removal or repair takes the write lock, so a single
/// writer interleaves with readers one operation at a time and a search never sees a half-linked
/// node. `insert(contentsOf:threads:)` holds the write lock for the whole batch and inserts with
/// several threads inside it, each neighbour list then guarded by a striped mutex (as hnswlib's
/// per-node locks).
///
/// **Quantization** (`HNSWConfiguration.quantization`): the walk can read int8 or binary codes
/// instead of float32 vectors; the best `k × rescoreFactor` candidates are re-scored with the
/// float32 vectors.
///
/// ```swift
/// let index = try HNSWIndex(dimension: 384, metric: .cosine)
/// index.insert(contentsOf: rows.map { (id: $0.id, vector: $0.embedding) }, threads: 2)
/// let hits = index.search(query, k: 10)
/// index.remove(id: 42)
/// let bytes = index.snapshot()
/// let restored = try HNSWIndex(snapshot: bytes)
/// ```
// @unchecked Sendable: all mutable state is reached only under `lock` (readers-writer; see
// above) and, inside a parallel build, per-list under `stripes` and `global`; the raw buffers are
// owned by this object and freed in deinit.
public final class HNSWIndex: @unchecked Sendable {
    /// Floats per vector.
    public let dimension: Int
    /// The metric results are ranked by.
    public let metric: DistanceMetric
    /// The parameters the index was built with.
    public let configuration: HNSWConfiguration

    let maxM: Int
    let maxM0: Int
    let levelMultiplier: Double
    let isL2: Bool
    let words: Int  // 64-bit words per binary code
    /// Whether float32 vectors are kept (`HNSWConfiguration.storesFullPrecision`).
    let storesVectors: Bool
    /// Floats per slot in `vectors`: `dimension`, or 0 when only codes are kept.
    let vectorStride: Int

    // --- Storage: raw buffers owned by this object, `capacity` slots each. ---
    var capacity = 0
    var slotCount = 0  // high-water mark of used slots
    var liveCount = 0
    // float32 vectors (normalised under cosine): 4 × dimension bytes per slot, none when
    // `storesVectors` is false.
    var vectors: UnsafeMutablePointer<Float>
    // layer-0 links: (1 + 2M) UInt32 per slot, [count, neighbours...].
    var level0: UnsafeMutablePointer<UInt32>
    // upper-layer links, allocated per node with level > 0: level × (1 + M) UInt32.
    var upper: UnsafeMutablePointer<UnsafeMutablePointer<UInt32>?>
    var levels: UnsafeMutablePointer<UInt8>
    var slotIDs: UnsafeMutablePointer<Int64>
    // 0 live, 1 deleted (awaiting repair, still traversed), 2 free.
    var states: UnsafeMutablePointer<UInt8>
    // int8 mode: dimension bytes + scale per slot; binary mode: words × 8 bytes per slot.
    var codes: UnsafeMutablePointer<Int8>?
    var codeScales: UnsafeMutablePointer<Float>?
    var squaredNorms: UnsafeMutablePointer<Float>?
    var bits: UnsafeMutablePointer<UInt64>?

    var slotsByID: [Int64: UInt32] = [:]
    var freeSlots: [UInt32] = []
    var deletedSlots: [UInt32] = []
    var entryPoint: UInt32 = .max
    var maxLevel = -1
    var defaultEfSearch: Int

    let lock = ReadWriteLock()
    let stripes = MutexStripes()
    let global = MutexStripes(count: 1)
    let visitedPool = VisitedPool()

    static let stateLive: UInt8 = 0, stateDeleted: UInt8 = 1, stateFree: UInt8 = 2
    static let noNode = UInt32.max

    /// Creates an empty index.
    ///
    /// - Parameters:
    ///   - dimension: floats per vector, in `1...65536`.
    ///   - metric: how vectors are compared (cosine: stored normalised, walked with a dot product).
    ///   - configuration: graph parameters (see `HNSWConfiguration` for defaults).
    /// - Throws: `VectorIndexError.invalidConfiguration` for bad parameters.
    public init(dimension: Int, metric: DistanceMetric, configuration: HNSWConfiguration = .init())
        throws
    {
        try configuration.validate()
        guard (1...65_536).contains(dimension) else {
            throw VectorIndexError.invalidConfiguration(
                "dimension must be in 1...65536, got \(dimension)")
        }
        self.dimension = dimension
        self.metric = metric
        self.configuration = configuration
        maxM = configuration.m
        maxM0 = 2 * configuration.m
        levelMultiplier = 1 / log(Double(configuration.m))
        isL2 = metric == .l2
        words = (dimension + 63) / 64
        storesVectors = configuration.storesFullPrecision
        vectorStride = storesVectors ? dimension : 0
        defaultEfSearch = configuration.efSearch
        vectors = .allocate(capacity: 0)
        level0 = .allocate(capacity: 0)
        upper = .allocate(capacity: 0)
        levels = .allocate(capacity: 0)
        slotIDs = .allocate(capacity: 0)
        states = .allocate(capacity: 0)
        reserve(64)
    }

    deinit {
        for s in 0..<slotCount { upper[s]?.deallocate() }
        vectors.deallocate()
        level0.deallocate()
        upper.deallocate()
        levels.deallocate()
        slotIDs.deallocate()
        states.deallocate()
        codes?.deallocate()
        codeScales?.deallocate()
        squaredNorms?.deallocate()
        bits?.deallocate()
    }

    // MARK: - Public state

    /// The number of (live) vectors.
    public var count: Int { lock.read { liveCount } }

    /// Whether `id` is indexed.
    public func contains(id: Int64) -> Bool { lock.read { slotsByID[id] != nil } }

    /// The candidate list size searches use when none is given; at least `k` is always used.
    public var efSearch: Int {
        get { lock.read { defaultEfSearch } }
        set { lock.write { defaultEfSearch = max(1, newValue) } }
    }

    /// The vector of `id` as stored (normalised under cosine), or nil. Without float32 vectors
    /// (`storesFullPrecision == false`) this is the int8 code scaled back, an approximation.
    public func vector(for id: Int64) -> [Float]? {
        lock.read {
            guard let s = slotsByID[id] else { return nil }
            guard storesVectors else {
                let c = codes.unsafelyUnwrapped + Int(s) * dimension
                let scale = codeScales.unsafelyUnwrapped[Int(s)]
                return (0..<dimension).map { Float(c[$0]) * scale }
            }
            return Array(UnsafeBufferPointer(start: vectorPointer(s), count: dimension))
        }
    }

    /// All indexed ids (unordered).
    public var ids: [Int64] { lock.read { Array(slotsByID.keys) } }

    // MARK: - Storage

    /// Grows every buffer to hold `n` slots (exclusive access required).
    /// Grows every per-slot buffer to at least `n` slots. New slots are free and zero, except
    /// that with `filling` false the vectors, layer-0 lists and int8 codes of slots
    /// `capacity..<n` are left unwritten: for a caller that writes each of them next (loading a
    /// snapshot), so the memory is written once instead of twice.
    func reserve(_ n: Int, filling: Bool = true) {
        guard n > capacity else { return }
        let newCapacity = max(n, capacity * 3 / 2)
        // Large buffers (vectors, layer-0 links) come 2 MB aligned and advised for huge pages.
        func grow<T>(_ p: UnsafeMutablePointer<T>, _ per: Int, fill: T, unwritten: Bool = false)
            -> UnsafeMutablePointer<T>
        {
            let q = allocateLargeBuffer(byteCount: newCapacity * per * MemoryLayout<T>.stride)
                .baseAddress!
                .bindMemory(to: T.self, capacity: newCapacity * per)
            q.moveInitialize(from: p, count: capacity * per)
            let filled = unwritten && !filling ? n : capacity
            (q + filled * per).initialize(repeating: fill, count: (newCapacity - filled) * per)
            p.deallocate()
            return q
        }
        vectors = grow(vectors, vectorStride, fill: 0, unwritten: true)
        level0 = grow(level0, maxM0 + 1, fill: 0, unwritten: true)
        upper = grow(upper, 1, fill: nil)
        levels = grow(levels, 1, fill: 0)
        slotIDs = grow(slotIDs, 1, fill: 0)
        states = grow(states, 1, fill: Self.stateFree)
        switch configuration.quantization {
        case .none: break
        case .int8:
            codes = grow(codes ?? .allocate(capacity: 0), dimension, fill: 0, unwritten: true)
            codeScales = grow(codeScales ?? .allocate(capacity: 0), 1, fill: 0)
            squaredNorms = grow(squaredNorms ?? .allocate(capacity: 0), 1, fill: 0)
        case .binary:
            bits = grow(bits ?? .allocate(capacity: 0), words, fill: 0)
        }
        capacity = newCapacity
    }

    /// The float32 vector of slot `s`; only when `storesVectors`.
    @inline(__always) func vectorPointer(_ s: UInt32) -> UnsafeMutablePointer<Float> {
        vectors + Int(s) &* vectorStride
    }

    /// The neighbour list of `s` on `level`: element 0 is the count.
    @inline(__always) func links(_ s: UInt32, _ level: Int) -> UnsafeMutablePointer<UInt32> {
        level == 0
            ? level0 + Int(s) &* (maxM0 + 1)
            : upper[Int(s)].unsafelyUnwrapped + (level - 1) &* (maxM + 1)
    }

    @inline(__always) func capacity(atLevel level: Int) -> Int { level == 0 ? maxM0 : maxM }

    /// The ranking distance between a float query and a stored vector: squared L2, or -dot.
    @inline(__always) func floatDistance(_ q: UnsafePointer<Float>, _ s: UInt32) -> Float {
        isL2
            ? NativeKernels.l2Squared(q, vectorPointer(s), count: dimension)
            : -NativeKernels.dot(q, vectorPointer(s), count: dimension)
    }

    /// The ranking distance between two stored slots: float32 vectors when kept, else the int8
    /// codes (graph construction and repair in codes-only mode).
    @inline(__always) func slotDistance(_ a: UInt32, _ b: UInt32) -> Float {
        if storesVectors { return floatDistance(vectorPointer(a), b) }
        let n = dimension
        let dot =
            codeScales.unsafelyUnwrapped[Int(a)] * codeScales.unsafelyUnwrapped[Int(b)]
            * Float(
                NativeKernels.dotInt8(
                    codes.unsafelyUnwrapped + Int(a) &* n, codes.unsafelyUnwrapped + Int(b) &* n,
                    count: n))
        return isL2
            ? squaredNorms.unsafelyUnwrapped[Int(a)] + squaredNorms.unsafelyUnwrapped[Int(b)] - 2
                * dot : -dot
    }

    /// Ranking distance → the metric's distance.
    @inline(__always) func publicDistance(_ d: Float) -> Float {
        switch metric {
        case .cosine: return 1 + d
        case .dot: return d
        case .l2: return max(0, d).squareRoot()
        }
    }

    /// The level of a new node: ⌊-ln(U) · mL⌋ with U drawn from a generator seeded by
    /// (seed, id), so the graph does not depend on thread scheduling.
    func randomLevel(for id: Int64) -> Int {
        var z = configuration.seed ^ (UInt64(bitPattern: id) &* 0x9E37_79B9_7F4A_7C15)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        let u = (Double(z >> 11) + 1) / Double(1 << 53)  // in (0, 1]
        return min(Int(-log(u) * levelMultiplier), 30)
    }

    /// Writes the quantized codes of slot `s` from its float vector `v` (as stored: normalised
    /// under cosine).
    func encode(_ s: UInt32, from v: UnsafePointer<Float>) {
        switch configuration.quantization {
        case .none: return
        case .int8:
            var maxAbs: Float = 0
            var norm: Float = 0
            for i in 0..<dimension {
                maxAbs = max(maxAbs, abs(v[i]))
                norm += v[i] * v[i]
            }
            // Clamped: for subnormal vectors maxAbs / 127 underflows to 0 and v / 0 traps in the
            // Int conversion (found by Fuzz/Targets/SnapshotLoader).
            let scale = maxAbs > 0 ? max(maxAbs / 127, .leastNonzeroMagnitude) : 1
            let c = codes.unsafelyUnwrapped + Int(s) * dimension
            for i in 0..<dimension { c[i] = Int8(clamping: Int((v[i] / scale).rounded())) }
            codeScales.unsafelyUnwrapped[Int(s)] = scale
            squaredNorms.unsafelyUnwrapped[Int(s)] = norm
        case .binary:
            let b = bits.unsafelyUnwrapped + Int(s) * words
            for w in 0..<words { b[w] = 0 }
            for i in 0..<dimension where v[i] > 0 { b[i >> 6] |= 1 << UInt64(i & 63) }
        }
    }

    /// Takes a slot for a new node (exclusive access required) and writes its vector, level and
    /// empty links.
    func allocateSlot(id: Int64, vector: [Float]) -> UInt32 {
        let s: UInt32
        if let free = freeSlots.popLast() {
            s = free
        } else {
            if slotCount == capacity { reserve(capacity * 2) }
            precondition(slotCount < Int(UInt32.max), "an HNSWIndex holds at most 2^32-1 nodes")
            s = UInt32(slotCount)
            slotCount += 1
        }
        // Codes-only mode: the vector passes through a scratch buffer to be encoded.
        let v =
            storesVectors
            ? vectorPointer(s) : UnsafeMutablePointer<Float>.allocate(capacity: dimension)
        defer { if !storesVectors { v.deallocate() } }
        vector.withUnsafeBufferPointer { v.update(from: $0.baseAddress!, count: dimension) }
        if metric == .cosine {
            let norm = NativeKernels.dot(v, v, count: dimension).squareRoot()
            if norm > 0 && norm.isFinite { for i in 0..<dimension { v[i] /= norm } }
        }
        encode(s, from: v)
        let level = randomLevel(for: id)
        levels[Int(s)] = UInt8(level)
        level0[Int(s) * (maxM0 + 1)] = 0
        upper[Int(s)]?.deallocate()
        upper[Int(s)] = nil
        if level > 0 {
            let p = UnsafeMutablePointer<UInt32>.allocate(capacity: level * (maxM + 1))
            p.initialize(repeating: 0, count: level * (maxM + 1))
            upper[Int(s)] = p
        }
        slotIDs[Int(s)] = id
        states[Int(s)] = Self.stateLive
        slotsByID[id] = s
        liveCount += 1
        return s
    }

    /// The bytes the index holds, split by purpose.
    public var memoryUsage: HNSWMemoryUsage {
        lock.read {
            var upperBytes = 0
            for s in 0..<slotCount where states[s] != Self.stateFree {
                upperBytes += Int(levels[s]) * (maxM + 1) * 4
            }
            let n = max(1, liveCount)
            let graph =
                slotCount * ((maxM0 + 1) * 4 + 8 + 8 + 2) + upperBytes + slotsByID.count * 24
            let full = slotCount * vectorStride * 4
            let walked: Int
            switch configuration.quantization {
            case .none: walked = full
            case .int8: walked = slotCount * (dimension + 8)
            case .binary: walked = slotCount * words * 8
            }
            return HNSWMemoryUsage(
                vectors: n, graphBytes: graph,
                walkedVectorBytes: configuration.quantization == .none ? full : walked,
                fullPrecisionBytes: configuration.quantization == .none ? 0 : full)
        }
    }
}

/// What an `HNSWIndex` keeps in memory.
///
/// ```swift
/// let usage = index.memoryUsage
/// print(usage.bytesPerVector, usage.walkedBytesPerVector)
/// ```
public struct HNSWMemoryUsage: Sendable, Hashable {
    /// Live vectors.
    public var vectors: Int
    /// Links, levels, ids, states and the id map.
    public var graphBytes: Int
    /// The vectors the graph walk reads (float32, int8 codes + scales, or bits).
    public var walkedVectorBytes: Int
    /// The float32 copies kept for re-scoring in quantized modes (0 without quantization).
    public var fullPrecisionBytes: Int

    /// All bytes per live vector.
    public var bytesPerVector: Double {
        Double(graphBytes + walkedVectorBytes + fullPrecisionBytes) / Double(max(1, vectors))
    }

    /// Bytes per live vector of what the walk touches (graph + walked vectors), i.e. without the
    /// float32 re-scoring copies (which a store can read from elsewhere).
    public var walkedBytesPerVector: Double {
        Double(graphBytes + walkedVectorBytes) / Double(max(1, vectors))
    }
}

/// Per-search visited marks, pooled so concurrent searches do not allocate.
final class VisitedList {
    var marks: UnsafeMutablePointer<UInt16>
    var size: Int
    var generation: UInt16 = 0

    init(size: Int) {
        self.size = size
        marks = .allocate(capacity: size)
        marks.initialize(repeating: 0, count: size)
    }

    deinit { marks.deallocate() }

    /// Starts a new search over `n` slots.
    func reset(for n: Int) {
        if n > size {
            marks.deallocate()
            size = max(n, size * 2)
            marks = .allocate(capacity: size)
            marks.initialize(repeating: 0, count: size)
            generation = 0
        }
        generation &+= 1
        if generation == 0 {
            marks.update(repeating: 0, count: size)
            generation = 1
        }
    }

    /// Marks `s`; returns whether it was already marked.
    @inline(__always) func testAndSet(_ s: UInt32) -> Bool {
        if marks[Int(s)] == generation { return true }
        marks[Int(s)] = generation
        return false
    }
}

// @unchecked Sendable: the list array is only touched under `mutex`; a VisitedList is used by
// one thread between take and give.
final class VisitedPool: @unchecked Sendable {
    private var lists: [VisitedList] = []
    private let mutex = MutexStripes(count: 1)

    func take(size: Int) -> VisitedList {
        let list = mutex.withLock(0) { lists.popLast() } ?? VisitedList(size: size)
        list.reset(for: size)
        return list
    }

    func give(_ list: VisitedList) { mutex.withLock(0) { lists.append(list) } }
}

/// (distance, slot) packed into a UInt64 that sorts like the pair: the float's bits are mapped
/// to an unsigned order, the slot breaks ties.
@inline(__always) func packCandidate(_ d: Float, _ s: UInt32) -> UInt64 {
    let b = d.bitPattern
    let key = b & 0x8000_0000 != 0 ? ~b : b | 0x8000_0000
    return UInt64(key) << 32 | UInt64(s)
}

@inline(__always) func unpackDistance(_ p: UInt64) -> Float {
    let key = UInt32(truncatingIfNeeded: p >> 32)
    return Float(bitPattern: key & 0x8000_0000 != 0 ? key & 0x7FFF_FFFF : ~key)
}

@inline(__always) func unpackSlot(_ p: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: p) }

/// A binary heap of packed candidates; `isMax` picks the order.
struct CandidateHeap {
    var items: [UInt64] = []
    let isMax: Bool

    init(isMax: Bool, capacity: Int) {
        self.isMax = isMax
        items.reserveCapacity(capacity)
    }

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }
    var top: UInt64 { items[0] }

    @inline(__always) func before(_ a: UInt64, _ b: UInt64) -> Bool { isMax ? a > b : a < b }

    mutating func push(_ x: UInt64) {
        items.append(x)
        var c = items.count - 1
        while c > 0 {
            let p = (c - 1) >> 1
            guard before(x, items[p]) else { break }
            items[c] = items[p]
            c = p
        }
        items[c] = x
    }

    @discardableResult
    mutating func pop() -> UInt64 {
        let result = items[0]
        let last = items.removeLast()
        let n = items.count
        if n > 0 {
            var p = 0
            while true {
                var c = 2 * p + 1
                if c >= n { break }
                if c + 1 < n && before(items[c + 1], items[c]) { c += 1 }
                guard before(items[c], last) else { break }
                items[p] = items[c]
                p = c
            }
            items[p] = last
        }
        return result
    }
}
