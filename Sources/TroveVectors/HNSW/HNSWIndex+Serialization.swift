import Foundation

/// Snapshot format, version 3 (all integers little-endian); versions 1 and 2 are still read:
/// version 2 has the same layout and a one-lane checksum, version 1 also lacks the flags byte
/// (always 0 there):
///
/// ```
/// header (80 bytes)
///   0  magic "TROVHNSW"            8 bytes
///   8  format version              UInt32 (2)
///  12  header size                 UInt32 (80)
///  16  metric, quantization        UInt8 each (DistanceMetric / HNSWQuantization raw order)
///  18  flags                       UInt8: bit 0 = codes only (no float32 vectors); 1 reserved
///  20  dimension, m, efConstruction, efSearch, rescoreFactor   UInt32 each
///  40  seed                        UInt64
///  48  slot count, live count, entry point (UInt32.max = none)  UInt32 each
///  60  max level                   Int32
///  64  body length                 UInt64
///  72  reserved                    UInt64 (0)
/// body, per slot
///   state UInt8 (0 live, 1 deleted, 2 free), level UInt8, id Int64,
///   then unless free: vector (dimension × Float32; codes only: dimension × Int8 code,
///   Float32 scale, Float32 squared norm), layer-0 list (1 + 2M UInt32),
///   level × upper lists (1 + M UInt32)
/// trailer
///   checksum UInt64 over header and body (`snapshotChecksum`: four lanes from version 3)
/// ```
/// Sizes are checked against the header before anything is allocated; the checksum and then
/// the graph's invariants are checked before the index is trusted.
extension HNSWIndex {
    static let snapshotMagic: [UInt8] = Array("TROVHNSW".utf8)
    static let snapshotVersion: UInt32 = 3
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
            var out: [UInt8] = []
            var bodyLength = 0
            for s in 0..<slotCount {
                bodyLength += 10
                if states[s] != Self.state_free {
                    bodyLength += snapshotVectorBytes + (maxM0 + 1) * 4 + Int(levels[s]) * (maxM + 1) * 4
                }
            }
            out.reserveCapacity(Self.snapshotHeaderSize + bodyLength + 8)
            out.append(contentsOf: Self.snapshotMagic)
            out.appendLE(Self.snapshotVersion)
            out.appendLE(UInt32(Self.snapshotHeaderSize))
            out.append(UInt8(DistanceMetric.allCases.firstIndex(of: metric)!))
            out.append(UInt8(HNSWQuantization.allCases.firstIndex(of: configuration.quantization)!))
            out.append(storesVectors ? 0 : 1)
            out.append(0)
            for v in [dimension, configuration.m, configuration.efConstruction, defaultEfSearch, configuration.rescoreFactor] {
                out.appendLE(UInt32(v))
            }
            out.appendLE(configuration.seed)
            out.appendLE(UInt32(slotCount))
            out.appendLE(UInt32(liveCount))
            out.appendLE(entryPoint)
            out.appendLE(Int32(maxLevel))
            out.appendLE(UInt64(bodyLength))
            out.appendLE(UInt64(0))
            for s in 0..<slotCount {
                out.append(states[s])
                out.append(states[s] == Self.state_free ? 0 : levels[s])
                out.appendLE(slotIDs[s])
                guard states[s] != Self.state_free else { continue }
                if storesVectors {
                    out.append(contentsOf: UnsafeRawBufferPointer(start: vectorPointer(UInt32(s)), count: dimension * 4))
                } else {
                    out.append(contentsOf: UnsafeRawBufferPointer(start: codes.unsafelyUnwrapped + s * dimension, count: dimension))
                    out.appendLE(codeScales.unsafelyUnwrapped[s].bitPattern)
                    out.appendLE(squaredNorms.unsafelyUnwrapped[s].bitPattern)
                }
                out.append(contentsOf: UnsafeRawBufferPointer(start: links(UInt32(s), 0), count: (maxM0 + 1) * 4))
                if levels[s] > 0 {
                    out.append(contentsOf: UnsafeRawBufferPointer(
                        start: upper[s]!, count: Int(levels[s]) * (maxM + 1) * 4))
                }
            }
            out.appendLE(snapshotChecksum(out[...]))
            return out
        }
    }

    /// A copy of this index whose walk reads `quantization` codes (computed from the float32
    /// vectors), with the same graph: switching modes needs no rebuild.
    ///
    /// ```swift
    /// let compact = try index.converted(to: .int8)
    /// ```
    /// - Throws: `VectorIndexError.invalidConfiguration` for a bad `rescoreFactor`.
    /// - Complexity: O(n · (dimension + M)).
    public func converted(to quantization: HNSWQuantization, rescoreFactor: Int? = nil) throws -> HNSWIndex {
        guard storesVectors else {
            throw VectorIndexError.invalidConfiguration("an index without float32 vectors cannot be converted")
        }
        var bytes = snapshot()
        bytes[17] = UInt8(HNSWQuantization.allCases.firstIndex(of: quantization)!)
        let factor = UInt32(rescoreFactor ?? configuration.rescoreFactor)
        guard (1...1_000).contains(factor) else {
            throw VectorIndexError.invalidConfiguration("rescoreFactor must be in 1...1000, got \(factor)")
        }
        withUnsafeBytes(of: factor.littleEndian) { bytes.replaceSubrange(36..<40, with: $0) }
        let body = bytes[0..<(bytes.count - 8)]
        withUnsafeBytes(of: snapshotChecksum(body).littleEndian) { bytes.replaceSubrange((bytes.count - 8)..., with: $0) }
        return try HNSWIndex(snapshot: bytes)
    }

    /// Restores an index from `snapshot()` bytes: an array, `Data`, or a raw buffer the caller
    /// owns (a snapshot read into memory of its own, without an array's copy).
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
            let headerSize = Self.snapshotHeaderSize
            guard bytes.count >= 8, bytes.prefix(8).elementsEqual(Self.snapshotMagic) else { throw VectorIndexError.notASnapshot }
            guard bytes.count >= headerSize + 8 else {
                throw VectorIndexError.truncated(expected: headerSize + 8, actual: bytes.count)
            }
            var r = ByteReader(bytes: bytes, offset: 8)
            let version: UInt32 = r.read()
            guard (1...Self.snapshotVersion).contains(version) else { throw VectorIndexError.unsupportedVersion(version) }
            guard Int(r.read() as UInt32) == headerSize else { throw VectorIndexError.corrupt("header size") }
            let metricIndex = Int(r.readByte()), quantIndex = Int(r.readByte())
            let flags = r.readByte()
            r.offset += 1
            guard flags & ~1 == 0, version > 1 || flags == 0 else { throw VectorIndexError.corrupt("unknown flags \(flags)") }
            guard metricIndex < DistanceMetric.allCases.count, quantIndex < HNSWQuantization.allCases.count else {
                throw VectorIndexError.corrupt("unknown metric or quantization")
            }
            let dimension = Int(r.read() as UInt32), m = Int(r.read() as UInt32)
            let efConstruction = Int(r.read() as UInt32), efSearch = Int(r.read() as UInt32)
            let rescoreFactor = Int(r.read() as UInt32)
            let seed: UInt64 = r.read()
            let slotCount = Int(r.read() as UInt32), liveCount = Int(r.read() as UInt32)
            let entry: UInt32 = r.read()
            let maxLevel = Int(r.read() as Int32)
            let bodyLength: UInt64 = r.read()
            r.offset = headerSize
            // A hostile body length must not overflow the sum (found by Fuzz/Targets/SnapshotLoader).
            let (sum, overflow) = bodyLength.addingReportingOverflow(UInt64(headerSize) + 8)
            let expected = overflow ? UInt64.max : sum
            guard expected <= UInt64(Int.max), Int(expected) <= bytes.count else {
                throw VectorIndexError.truncated(expected: Int(min(expected, UInt64(Int.max))), actual: bytes.count)
            }
            guard Int(expected) == bytes.count else {
                throw VectorIndexError.corrupt("\(bytes.count - Int(expected)) unexpected trailing bytes")
            }
            let stored = ByteReader(bytes: bytes, offset: bytes.count - 8).peekUInt64()
            guard stored == snapshotChecksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count - 8)])) else {
                throw VectorIndexError.corrupt("checksum mismatch")
            }
            return (dimension: dimension, m: m, efConstruction: efConstruction, efSearch: efSearch, rescoreFactor: rescoreFactor,
                    seed: seed, metricIndex: metricIndex, quantIndex: quantIndex, flags: flags, slotCount: slotCount,
                    liveCount: liveCount, entry: entry, maxLevel: maxLevel, bodyLength: bodyLength)
        }
        var configuration = HNSWConfiguration(
            m: header.m, efConstruction: header.efConstruction, efSearch: header.efSearch, seed: header.seed,
            quantization: HNSWQuantization.allCases[header.quantIndex], rescoreFactor: header.rescoreFactor)
        configuration.storesFullPrecision = header.flags & 1 == 0
        do {
            try self.init(dimension: header.dimension, metric: DistanceMetric.allCases[header.metricIndex], configuration: configuration)
        } catch {
            throw VectorIndexError.corrupt("bad parameters: \(error)")
        }
        try contiguous.withUnsafeBytes { bytes in
            try loadBody(
                bytes, slotCount: header.slotCount, liveCount: header.liveCount, entry: header.entry, maxLevel: header.maxLevel,
                bodyLength: header.bodyLength)
        }
    }

    /// Reads the slots of a snapshot whose header and checksum were checked, then checks the graph.
    private func loadBody(
        _ bytes: UnsafeRawBufferPointer, slotCount: Int, liveCount: Int, entry: UInt32, maxLevel: Int, bodyLength: UInt64
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
            guard r.offset + 10 <= bodyEnd else { throw VectorIndexError.corrupt("body ends at slot \(s)") }
            let state = r.readByte(), level = Int(r.readByte())
            let id: Int64 = r.read()
            states[s] = state
            levels[s] = UInt8(level)
            slotIDs[s] = id
            switch state {
            case Self.state_free:
                freeSlots.append(UInt32(s))
                vectorPointer(UInt32(s)).update(repeating: 0, count: vectorStride)
                links(UInt32(s), 0).update(repeating: 0, count: maxM0 + 1)
                codes.map { ($0 + s * dimension).update(repeating: 0, count: dimension) }
                continue
            case Self.state_live:
                guard slotsByID.updateValue(UInt32(s), forKey: id) == nil else {
                    throw VectorIndexError.corrupt("id \(id) appears twice")
                }
                live += 1
            case Self.state_deleted:
                deletedSlots.append(UInt32(s))
            default:
                throw VectorIndexError.corrupt("slot \(s): state \(state)")
            }
            guard level <= 30 else { throw VectorIndexError.corrupt("slot \(s): level \(level)") }
            let need = snapshotVectorBytes + (maxM0 + 1) * 4 + level * (maxM + 1) * 4
            guard r.offset + need <= bodyEnd else { throw VectorIndexError.corrupt("body ends inside slot \(s)") }
            if storesVectors {
                r.copy(into: UnsafeMutableRawPointer(vectorPointer(UInt32(s))), count: dimension * 4)
                // A non-finite component would trap in encode() and poison distances (found by
                // Fuzz/Targets/SnapshotLoader).
                for i in 0..<dimension where !vectorPointer(UInt32(s))[i].isFinite {
                    throw VectorIndexError.corrupt("slot \(s): component \(i) is not finite")
                }
            } else {
                r.copy(into: UnsafeMutableRawPointer(codes.unsafelyUnwrapped + s * dimension), count: dimension)
                let scale = Float(bitPattern: r.read()), norm = Float(bitPattern: r.read())
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
        guard live == liveCount else { throw VectorIndexError.corrupt("live count \(liveCount) but \(live) live slots") }
        self.liveCount = liveCount
        entryPoint = entry
        self.maxLevel = maxLevel
        // Before any search can follow a link: counts and ranges first, then the graph's shape.
        let problems = invariantViolations(limit: 1)
        if let first = problems.first { throw VectorIndexError.corrupt(first) }
    }
}

/// The checksum of a snapshot's header and body, by the version its header states: 64-bit
/// checksums of 8-byte words (multiply-rotate rounds as in xxHash64; not cryptographic): any
/// change of a single word changes it, and mixed changes almost surely do. Versions 1 and 2 run
/// one chain of rounds through every word; from version 3 words go to four chains in turn,
/// merged at the end: the rounds of one chain wait on each other, four chains keep a core busy
/// (about a fifth of loading a graph was spent waiting in the single chain).
func snapshotChecksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
    bytes.withUnsafeBytes { snapshotChecksum($0) }
}

func snapshotChecksum(_ raw: UnsafeRawBufferPointer) -> UInt64 {
    let p1: UInt64 = 0x9E37_79B1_85EB_CA87, p2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    @inline(__always) func round(_ h: UInt64, _ w: UInt64) -> UInt64 {
        let mixed = h ^ ((w &* p2) << 31 | (w &* p2) >> 33) &* p1
        return (mixed << 27 | mixed >> 37) &* p1 &+ 0x85EB_CA77_C2B2_AE63
    }
    let n = raw.count
    let version = n >= 12 ? UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) : 0
    var h: UInt64 = 0x27D4_EB2F_1656_67C5 ^ UInt64(n)
    var i = 0
    if version >= 3 {
        var lanes = (h, h &+ p1, h &+ p2, h ^ p1)
        while i + 32 <= n {
            lanes.0 = round(lanes.0, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            lanes.1 = round(lanes.1, raw.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self))
            lanes.2 = round(lanes.2, raw.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self))
            lanes.3 = round(lanes.3, raw.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self))
            i += 32
        }
        h = round(round(round(round(h, lanes.0), lanes.1), lanes.2), lanes.3)
    }
    while i + 8 <= n {
        h = round(h, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        i += 8
    }
    while i < n {
        h ^= UInt64(raw[i]) &* p1
        h = (h << 11 | h >> 53) &* p2
        i += 1
    }
    h ^= h >> 33
    h = h &* p2
    h ^= h >> 29
    return h
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
