import CTroveKernels
import Foundation

#if _endian(big)
    // Snapshot sections are copied between memory and the snapshot as they are (little-endian).
    #error("HNSW snapshots assume a little-endian host")
#endif

/// Snapshot format, version 4 (all integers little-endian); versions 1-3 are still read:
///
/// ```
/// header (80 bytes)
///   0  magic "TROVHNSW"            8 bytes
///   8  format version              UInt32 (4)
///  12  header size                 UInt32 (80)
///  16  metric, quantization        UInt8 each (DistanceMetric / HNSWQuantization raw order)
///  18  flags                       UInt8: bit 0 = codes only (no float32 vectors); 1 reserved
///  20  dimension, m, efConstruction, efSearch, rescoreFactor   UInt32 each
///  40  seed                        UInt64
///  48  slot count n, live count, entry point (UInt32.max = none)  UInt32 each
///  60  max level                   Int32
///  64  body length                 UInt64
///  72  reserved                    UInt64 (0)
/// body: one section per kind of per-slot data, slots in order (free slots: level 0, zero
/// vector and links)
///   ids             n × Int64
///   states          n × UInt8 (0 live, 1 deleted, 2 free)
///   levels          n × UInt8
///   vectors         n × dimension × Float32; codes only: n × dimension × Int8 codes,
///                   then n × Float32 scales, then n × Float32 squared norms
///   layer-0 lists   n × (1 + 2M) UInt32 (count, neighbours)
///   upper lists     for each non-free slot with level > 0, in slot order: level × (1 + M) UInt32
/// trailer
///   checksum UInt64 over header and body (`snapshotChecksum`)
/// ```
/// Each section is the index's own memory layout, so a load copies the snapshot straight into
/// the index's buffers (`HNSWSnapshotReader`), piece by piece, and checks each piece while it
/// is still in the cache: no intermediate copy of the snapshot.
///
/// Versions 1-3 hold one record per slot instead (state, level, id, then unless free its
/// vector, layer-0 list and upper lists); version 3 with a four-lane checksum, version 2 with a
/// one-lane one, version 1 also without the flags byte. Sizes are checked against the header
/// before anything is allocated; the checksum and then the graph's invariants are checked before
/// the index is trusted.
extension HNSWIndex {
    static let snapshotMagic: [UInt8] = Array("TROVHNSW".utf8)
    static let snapshotVersion: UInt32 = 4
    /// Bytes per non-free slot for its vector in a snapshot.
    var snapshotVectorBytes: Int { storesVectors ? dimension * 4 : dimension + 8 }
    static let snapshotHeaderSize = 80

    /// A self-describing, checksummed copy of the index (graph, vectors, ids, parameters).
    ///
    /// ```swift
    /// let bytes = index.snapshot()
    /// let copy = try HNSWIndex(snapshot: bytes)
    /// ```
    /// - Returns: the snapshot bytes.
    /// - Complexity: O(n · (dimension + M)).
    public func snapshot() -> [UInt8] {
        lock.read {
            let n = slotCount
            var upperBytes = 0
            for s in 0..<n where states[s] != Self.stateFree {
                upperBytes += Int(levels[s]) * (maxM + 1) * 4
            }
            let bodyLength = n * (10 + snapshotVectorBytes + (maxM0 + 1) * 4) + upperBytes
            var header: [UInt8] = []
            header.append(contentsOf: Self.snapshotMagic)
            header.appendLE(Self.snapshotVersion)
            header.appendLE(UInt32(Self.snapshotHeaderSize))
            header.append(UInt8(DistanceMetric.allCases.firstIndex(of: metric)!))
            header.append(
                UInt8(HNSWQuantization.allCases.firstIndex(of: configuration.quantization)!))
            header.append(storesVectors ? 0 : 1)
            header.append(0)
            for v in [
                dimension, configuration.m, configuration.efConstruction, defaultEfSearch,
                configuration.rescoreFactor,
            ] {
                header.appendLE(UInt32(v))
            }
            header.appendLE(configuration.seed)
            header.appendLE(UInt32(slotCount))
            header.appendLE(UInt32(liveCount))
            header.appendLE(entryPoint)
            header.appendLE(Int32(maxLevel))
            header.appendLE(UInt64(bodyLength))
            header.appendLE(UInt64(0))
            let total = Self.snapshotHeaderSize + bodyLength + 8
            return [UInt8](unsafeUninitializedCapacity: total) { out, initialized in
                let base = UnsafeMutableRawPointer(out.baseAddress!)
                var at = 0
                func put(_ source: UnsafeRawPointer, _ count: Int) {
                    (base + at).copyMemory(from: source, byteCount: count)
                    at += count
                }
                /// A section of `per` bytes per slot, free slots written as zeros.
                func putSlots(_ source: UnsafeRawPointer, _ per: Int) {
                    put(source, n * per)
                    for s in 0..<n where states[s] == Self.stateFree {
                        (base + at - (n - s) * per).initializeMemory(
                            as: UInt8.self, repeating: 0, count: per)
                    }
                }
                header.withUnsafeBytes { put($0.baseAddress!, $0.count) }
                put(slotIDs, n * 8)
                put(states, n)
                putSlots(levels, 1)
                if storesVectors {
                    putSlots(vectors, dimension * 4)
                } else {
                    putSlots(codes.unsafelyUnwrapped, dimension)
                    putSlots(codeScales.unsafelyUnwrapped, 4)
                    putSlots(squaredNorms.unsafelyUnwrapped, 4)
                }
                putSlots(level0, (maxM0 + 1) * 4)
                for s in 0..<n where states[s] != Self.stateFree && levels[s] > 0 {
                    put(upper[s]!, Int(levels[s]) * (maxM + 1) * 4)
                }
                let checksum = snapshotChecksum(UnsafeRawBufferPointer(start: base, count: at))
                withUnsafeBytes(of: checksum.littleEndian) { put($0.baseAddress!, 8) }
                initialized = at
            }
        }
    }

    /// A copy of this index whose walk reads `quantization` codes (computed from the float32
    /// vectors), with the same graph: switching modes needs no rebuild.
    ///
    /// ```swift
    /// let compact = try index.converted(to: .int8)
    /// let signs = try index.converted(to: .binary)   // re-scores 32 × k candidates
    /// ```
    /// - Parameters:
    ///   - quantization: what the copy's walk reads.
    ///   - rescoreFactor: how many walk candidates per requested result the copy re-scores with
    ///     float32 vectors, 1...1000. `nil` (the default) takes
    ///     `HNSWConfiguration.defaultRescoreFactor(for: quantization)`, the new quantization's
    ///     default (int8: 4, binary: 32), as `HNSWConfiguration(quantization:)` does; this
    ///     index's own factor is not carried over (a float32 index's 4 would leave a binary walk at
    ///     recall@10 about 0.7 on the defaults' workload, where 32 gives about 0.95).
    /// - Returns: the converted copy; this index is unchanged.
    /// - Throws: `VectorIndexError.invalidConfiguration` for a bad `rescoreFactor`.
    /// - Complexity: O(n · (dimension + M)).
    public func converted(to quantization: HNSWQuantization, rescoreFactor: Int? = nil) throws
        -> HNSWIndex
    {
        guard storesVectors else {
            throw VectorIndexError.invalidConfiguration(
                "an index without float32 vectors cannot be converted")
        }
        var bytes = snapshot()
        bytes[17] = UInt8(HNSWQuantization.allCases.firstIndex(of: quantization)!)
        let factor = UInt32(
            rescoreFactor ?? HNSWConfiguration.defaultRescoreFactor(for: quantization))
        guard (1...1_000).contains(factor) else {
            throw VectorIndexError.invalidConfiguration(
                "rescoreFactor must be in 1...1000, got \(factor)")
        }
        withUnsafeBytes(of: factor.littleEndian) { bytes.replaceSubrange(36..<40, with: $0) }
        let body = bytes[0..<(bytes.count - 8)]
        withUnsafeBytes(of: snapshotChecksum(body).littleEndian) {
            bytes.replaceSubrange((bytes.count - 8)..., with: $0)
        }
        return try HNSWIndex(snapshot: bytes)
    }

    /// Restores an index from `snapshot()` bytes: an array, `Data`, or a raw buffer the caller
    /// owns. To load a snapshot stored in pieces without assembling it first, see
    /// `HNSWSnapshotReader`.
    ///
    /// ```swift
    /// let index = try HNSWIndex(snapshot: storedBytes)
    /// ```
    /// - Parameter snapshot: bytes written by `snapshot()`.
    /// - Throws: `VectorIndexError.notASnapshot`, `.unsupportedVersion`, `.truncated` or
    ///   `.corrupt` (checksum, impossible sizes or a broken graph); nothing is trusted until every
    ///   check has passed.
    /// - Complexity: O(size of the snapshot).
    public convenience init(snapshot contiguous: some ContiguousBytes) throws {
        let header = try contiguous.withUnsafeBytes { bytes in
            try SnapshotHeader(
                UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.snapshotHeaderSize)),
                total: bytes.count)
        }
        try self.init(snapshotHeader: header)
        try contiguous.withUnsafeBytes { bytes in
            guard header.version >= 4 else { return try loadEarlierVersion(bytes, header: header) }
            let body = try SnapshotBody(
                index: self, header: header,
                headerBytes: UnsafeRawBufferPointer(rebasing: bytes.prefix(Self.snapshotHeaderSize))
            )
            let start = Self.snapshotHeaderSize
            try body.read(count: bytes.count - start) { offset, into in
                into.copyMemory(
                    from: UnsafeRawBufferPointer(
                        rebasing: bytes[(start + offset)..<(start + offset + into.count)]))
            }
            try body.finish()
        }
    }

    /// An empty index with the parameters of a checked snapshot header.
    convenience init(snapshotHeader header: SnapshotHeader) throws {
        var configuration = HNSWConfiguration(
            m: header.m, efConstruction: header.efConstruction, efSearch: header.efSearch,
            seed: header.seed,
            quantization: HNSWQuantization.allCases[header.quantIndex],
            rescoreFactor: header.rescoreFactor)
        configuration.storesFullPrecision = header.flags & 1 == 0
        do {
            try self.init(
                dimension: header.dimension, metric: DistanceMetric.allCases[header.metricIndex],
                configuration: configuration)
        } catch {
            throw VectorIndexError.corrupt("bad parameters: \(error)")
        }
    }

    /// Loads a whole snapshot of version 1-3 (one record per slot): its checksum, then its slots.
    func loadEarlierVersion(_ bytes: UnsafeRawBufferPointer, header: SnapshotHeader) throws {
        let stored = ByteReader(bytes: bytes, offset: bytes.count - 8).peekUInt64()
        guard
            stored
                == snapshotChecksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 8)]))
        else {
            throw VectorIndexError.corrupt("checksum mismatch")
        }
        try loadBody(
            bytes, slotCount: header.slotCount, liveCount: header.liveCount, entry: header.entry,
            maxLevel: header.maxLevel,
            bodyLength: header.bodyLength)
    }

    /// Reads the slots of a snapshot whose header and checksum were checked, then checks the graph.
    private func loadBody(
        _ bytes: UnsafeRawBufferPointer, slotCount: Int, liveCount: Int, entry: UInt32,
        maxLevel: Int,
        bodyLength: UInt64
    ) throws {
        var r = ByteReader(bytes: bytes, offset: Self.snapshotHeaderSize)
        // Every slot takes at least 10 bytes: check before allocating room for slotCount.
        guard slotCount <= Int(bodyLength) / 10, liveCount <= slotCount else {
            throw VectorIndexError.corrupt("\(slotCount) slots cannot fit in \(bodyLength) bytes")
        }
        // Each slot's vector, lists and codes are written below, free ones included.
        reserve(max(slotCount, 1), filling: false)
        slotsByID.reserveCapacity(liveCount)
        self.slotCount = slotCount
        let bodyEnd = bytes.count - 8
        var live = 0
        for s in 0..<slotCount {
            guard r.offset + 10 <= bodyEnd else {
                throw VectorIndexError.corrupt("body ends at slot \(s)")
            }
            let state = r.readByte()
            let level = Int(r.readByte())
            let id: Int64 = r.read()
            states[s] = state
            levels[s] = UInt8(level)
            slotIDs[s] = id
            switch state {
            case Self.stateFree:
                freeSlots.append(UInt32(s))
                vectorPointer(UInt32(s)).update(repeating: 0, count: vectorStride)
                links(UInt32(s), 0).update(repeating: 0, count: maxM0 + 1)
                codes.map { ($0 + s * dimension).update(repeating: 0, count: dimension) }
                continue
            case Self.stateLive:
                guard slotsByID.updateValue(UInt32(s), forKey: id) == nil else {
                    throw VectorIndexError.corrupt("id \(id) appears twice")
                }
                live += 1
            case Self.stateDeleted:
                deletedSlots.append(UInt32(s))
            default:
                throw VectorIndexError.corrupt("slot \(s): state \(state)")
            }
            guard level <= 30 else { throw VectorIndexError.corrupt("slot \(s): level \(level)") }
            let need = snapshotVectorBytes + (maxM0 + 1) * 4 + level * (maxM + 1) * 4
            guard r.offset + need <= bodyEnd else {
                throw VectorIndexError.corrupt("body ends inside slot \(s)")
            }
            if storesVectors {
                r.copy(
                    into: UnsafeMutableRawPointer(vectorPointer(UInt32(s))), count: dimension * 4)
                // A non-finite component would trap in encode() and poison distances (found by
                // Fuzz/Targets/SnapshotLoader).
                for i in 0..<dimension where !vectorPointer(UInt32(s))[i].isFinite {
                    throw VectorIndexError.corrupt("slot \(s): component \(i) is not finite")
                }
            } else {
                r.copy(
                    into: UnsafeMutableRawPointer(codes.unsafelyUnwrapped + s * dimension),
                    count: dimension)
                let scale = Float(bitPattern: r.read())
                let norm = Float(bitPattern: r.read())
                guard scale.isFinite, scale > 0, norm.isFinite, norm >= 0 else {
                    throw VectorIndexError.corrupt("slot \(s): bad code scale or norm")
                }
                codeScales.unsafelyUnwrapped[s] = scale
                squaredNorms.unsafelyUnwrapped[s] = norm
            }
            r.copy(into: UnsafeMutableRawPointer(links(UInt32(s), 0)), count: (maxM0 + 1) * 4)
            if level > 0 {
                let p = UnsafeMutablePointer<UInt32>.allocate(capacity: level * (maxM + 1))
                upper[s] = p
                r.copy(into: UnsafeMutableRawPointer(p), count: level * (maxM + 1) * 4)
            }
            if storesVectors { encode(UInt32(s), from: vectorPointer(UInt32(s))) }
        }
        guard r.offset == bodyEnd else { throw VectorIndexError.corrupt("body length mismatch") }
        guard live == liveCount else {
            throw VectorIndexError.corrupt("live count \(liveCount) but \(live) live slots")
        }
        self.liveCount = liveCount
        entryPoint = entry
        self.maxLevel = maxLevel
        // Before any search can follow a link: counts and ranges first, then the graph's shape.
        let problems = invariantViolations(limit: 1)
        if let first = problems.first { throw VectorIndexError.corrupt(first) }
    }
}

/// The checksum of a snapshot's header and body, by the version its header states (not
/// cryptographic). Versions 1 and 2 run one chain of 64-bit multiply-rotate rounds (as in
/// xxHash64) through every 8-byte word, version 3 four chains in turn, merged at the end (any
/// change of a single word changes them). From version 4 (``SnapshotHasher``) the words go to
/// eight lanes of 32 × 32-bit products, as XXH3's long-input loop, several lanes per vector
/// instruction: the rounds of a chain wait on each other, and even four chains took a seventh of
/// loading a graph.
func snapshotChecksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.withUnsafeBytes { snapshotChecksum($0) }
}

func snapshotChecksum(_ raw: UnsafeRawBufferPointer) -> UInt64 {
    let n = raw.count
    let version =
        n >= 12 ? UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) : 0
    if version >= 4 {
        var hasher = SnapshotHasher()
        hasher.update(raw)
        return hasher.finish()
    }
    var h: UInt64 = 0x27D4_EB2F_1656_67C5 ^ UInt64(n)
    var i = 0
    if version >= 3 {
        var lanes = (h, h &+ checksumP1, h &+ checksumP2, h ^ checksumP1)
        while i + 32 <= n {
            lanes.0 = checksumRound(lanes.0, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            lanes.1 = checksumRound(
                lanes.1, raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self))
            lanes.2 = checksumRound(
                lanes.2, raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self))
            lanes.3 = checksumRound(
                lanes.3, raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self))
            i += 32
        }
        h = checksumRound(
            checksumRound(checksumRound(checksumRound(h, lanes.0), lanes.1), lanes.2), lanes.3)
    }
    while i + 8 <= n {
        h = checksumRound(h, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        i += 8
    }
    while i < n {
        h ^= UInt64(raw[i]) &* checksumP1
        h = (h << 11 | h >> 53) &* checksumP2
        i += 1
    }
    return checksumAvalanche(h)
}

private let checksumP1: UInt64 = 0x9E37_79B1_85EB_CA87
private let checksumP2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

@inline(__always) private func checksumRound(_ h: UInt64, _ w: UInt64) -> UInt64 {
    let mixed = h ^ ((w &* checksumP2) << 31 | (w &* checksumP2) >> 33) &* checksumP1
    return (mixed << 27 | mixed >> 37) &* checksumP1 &+ 0x85EB_CA77_C2B2_AE63
}

@inline(__always) private func checksumAvalanche(_ value: UInt64) -> UInt64 {
    var h = value
    h ^= h >> 33
    h = h &* checksumP2
    h ^= h >> 29
    return h
}

/// The checksum of snapshot version 4, fed in pieces of any size: 1 KB blocks go to
/// `trove_checksum_blocks` (eight lanes, scrambled after each block); the last partial block is
/// padded with zeros, and the lanes, then the length, are merged with the rounds of the earlier
/// versions. A change of any byte changes a lane's sum unless a 32 × 32-bit product cancels it
/// exactly, as in XXH3: not guaranteed as in versions 1-3, but as unlikely as a 64-bit collision.
struct SnapshotHasher {
    private var lanes: [UInt64] = (1...8).map { checksumP1 &* UInt64($0) }
    /// Bytes of an unfinished block.
    private var carry: [UInt8] = []
    private var count = 0
    static let blockBytes = 1024

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard var p = bytes.baseAddress, !bytes.isEmpty else { return }
        count += bytes.count
        var left = bytes.count
        if !carry.isEmpty {
            let take = min(Self.blockBytes - carry.count, left)
            carry.append(contentsOf: UnsafeRawBufferPointer(start: p, count: take))
            p += take
            left -= take
            guard carry.count == Self.blockBytes else { return }
            carry.withUnsafeBytes { block in
                lanes.withUnsafeMutableBufferPointer {
                    trove_checksum_blocks($0.baseAddress, block.baseAddress, 1)
                }
            }
            carry.removeAll(keepingCapacity: true)
        }
        let blocks = left / Self.blockBytes
        if blocks > 0 {
            let start = p
            lanes.withUnsafeMutableBufferPointer {
                trove_checksum_blocks($0.baseAddress, start, blocks)
            }
        }
        carry.append(
            contentsOf: UnsafeRawBufferPointer(
                start: p + blocks * Self.blockBytes, count: left - blocks * Self.blockBytes))
    }

    func finish() -> UInt64 {
        var lanes = lanes
        if !carry.isEmpty {
            let block = carry + [UInt8](repeating: 0, count: Self.blockBytes - carry.count)
            block.withUnsafeBytes { b in
                lanes.withUnsafeMutableBufferPointer {
                    trove_checksum_blocks($0.baseAddress, b.baseAddress, 1)
                }
            }
        }
        var h: UInt64 = 0x27D4_EB2F_1656_67C5
        for lane in lanes { h = checksumRound(h, lane) }
        return checksumAvalanche(checksumRound(h, UInt64(count)))
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ v: T) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }
}

/// Sequential little-endian reads; callers check bounds first.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    mutating func read<T: FixedWidthInteger>() -> T {
        let v = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
        return T(littleEndian: v)
    }

    mutating func readByte() -> UInt8 {
        defer { offset += 1 }
        return bytes[offset]
    }

    func peekUInt64() -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func copy(into destination: UnsafeMutableRawPointer, count: Int) {
        destination.copyMemory(from: bytes.baseAddress! + offset, byteCount: count)
        offset += count
    }
}
