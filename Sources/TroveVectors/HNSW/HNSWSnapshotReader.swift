import CTroveKernels

/// Loads an `HNSWIndex` from a snapshot handed over in pieces (the parts a store keeps it in),
/// each piece copied by the caller straight into the index's own memory: the snapshot is never
/// assembled in a buffer of its own, and each piece is checked (checksum, finite vectors) while
/// it is still in the cache. The same checks as `HNSWIndex(snapshot:)`, which loads through the
/// same code; nothing is trusted until ``finish()`` has run every check.
///
/// ```swift
/// let reader = HNSWSnapshotReader(count: totalBytes)
/// for part in parts {
///     try reader.read(count: part.count) { offset, buffer in
///         buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: part[offset..<offset + buffer.count]))
///     }
/// }
/// let index = try reader.finish()
/// ```
/// Snapshots of versions 1-3 (one record per slot) are collected whole, then loaded as before.
package final class HNSWSnapshotReader {
    private let total: Int
    private var header: [UInt8] = []
    private var body: SnapshotBody?

    /// A reader for a snapshot of `count` bytes in all.
    package init(count: Int) {
        total = count
    }

    /// Takes the next `count` bytes of the snapshot: `copy(offset, buffer)` must fill `buffer`
    /// with the bytes from `offset` (relative to this piece) on; it is called in order, with
    /// buffers that together take the whole piece.
    ///
    /// - Throws: `VectorIndexError` as soon as the bytes so far cannot be a valid snapshot (and
    ///   whatever `copy` throws).
    package func read(
        count: Int, from copy: (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) throws -> Void
    )
        throws
    {
        var offset = 0
        if body == nil {
            let n = min(count, HNSWIndex.snapshotHeaderSize - header.count)
            if n > 0 {
                var piece = [UInt8](repeating: 0, count: n)
                try piece.withUnsafeMutableBytes { try copy(0, $0) }
                header += piece
                offset = n
            }
            if header.count == HNSWIndex.snapshotHeaderSize {
                body = try header.withUnsafeBytes { bytes in
                    let parsed = try SnapshotHeader(bytes, total: total)
                    return try SnapshotBody(
                        index: HNSWIndex(snapshotHeader: parsed), header: parsed, headerBytes: bytes
                    )
                }
            }
        }
        guard offset < count else { return }
        guard let body else {
            throw VectorIndexError.corrupt("snapshot longer than its stated size")
        }
        try body.read(count: count - offset) { o, into in try copy(offset + o, into) }
    }

    /// Checks what was read and returns the index.
    /// - Throws: `VectorIndexError` for a truncated, corrupt or unsupported snapshot.
    package func finish() throws -> HNSWIndex {
        guard let body else {
            _ = try header.withUnsafeBytes { try SnapshotHeader($0, total: header.count) }
            throw VectorIndexError.truncated(expected: total, actual: header.count)
        }
        try body.finish()
        return body.index
    }
}

/// The fields of a snapshot header, checked against the snapshot's total size.
struct SnapshotHeader {
    let version: UInt32
    let dimension: Int, m: Int, efConstruction: Int, efSearch: Int, rescoreFactor: Int
    let seed: UInt64
    let metricIndex: Int, quantIndex: Int, flags: UInt8
    let slotCount: Int, liveCount: Int, entry: UInt32, maxLevel: Int
    let bodyLength: UInt64

    /// Parses the first bytes of a snapshot of `total` bytes (`bytes` holds up to the header's
    /// 80; fewer only when the snapshot is shorter).
    init(_ bytes: UnsafeRawBufferPointer, total: Int) throws {
        let headerSize = HNSWIndex.snapshotHeaderSize
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(HNSWIndex.snapshotMagic) else {
            throw VectorIndexError.notASnapshot
        }
        guard total >= headerSize + 8, bytes.count >= headerSize else {
            throw VectorIndexError.truncated(expected: headerSize + 8, actual: total)
        }
        var r = ByteReader(bytes: bytes, offset: 8)
        version = r.read()
        guard (1...HNSWIndex.snapshotVersion).contains(version) else {
            throw VectorIndexError.unsupportedVersion(version)
        }
        guard Int(r.read() as UInt32) == headerSize else {
            throw VectorIndexError.corrupt("header size")
        }
        metricIndex = Int(r.readByte())
        quantIndex = Int(r.readByte())
        flags = r.readByte()
        r.offset += 1
        guard flags & ~1 == 0, version > 1 || flags == 0 else {
            throw VectorIndexError.corrupt("unknown flags \(flags)")
        }
        guard metricIndex < DistanceMetric.allCases.count,
            quantIndex < HNSWQuantization.allCases.count
        else {
            throw VectorIndexError.corrupt("unknown metric or quantization")
        }
        dimension = Int(r.read() as UInt32)
        m = Int(r.read() as UInt32)
        efConstruction = Int(r.read() as UInt32)
        efSearch = Int(r.read() as UInt32)
        rescoreFactor = Int(r.read() as UInt32)
        seed = r.read()
        slotCount = Int(r.read() as UInt32)
        liveCount = Int(r.read() as UInt32)
        entry = r.read()
        maxLevel = Int(r.read() as Int32)
        bodyLength = r.read()
        // A hostile body length must not overflow the sum (found by Fuzz/Targets/SnapshotLoader).
        let (sum, overflow) = bodyLength.addingReportingOverflow(UInt64(headerSize) + 8)
        let expected = overflow ? UInt64.max : sum
        guard expected <= UInt64(Int.max), Int(expected) <= total else {
            throw VectorIndexError.truncated(
                expected: Int(min(expected, UInt64(Int.max))), actual: total)
        }
        guard Int(expected) == total else {
            throw VectorIndexError.corrupt("\(total - Int(expected)) unexpected trailing bytes")
        }
    }
}

/// The body of a snapshot being received (the header was read and checked): from version 4
/// each section is copied straight into the index's buffers and checked as it arrives; an
/// earlier version is collected whole and loaded at the end.
final class SnapshotBody {
    let index: HNSWIndex
    private let header: SnapshotHeader
    private let total: Int
    /// Bytes received so far, the header included.
    private var received: Int

    /// Versions 1-3: the whole snapshot.
    private var whole: UnsafeMutableRawBufferPointer?

    private enum Kind {
        case ids, states, levels, floats, codes, scales, norms, level0, upper, trailer
    }
    private var sections: [(kind: Kind, memory: UnsafeMutableRawBufferPointer)] = []
    private var current = 0
    /// Bytes of the current section received.
    private var filled = 0
    /// Floats of the vector section checked to be finite.
    private var checkedFloats = 0
    private var hasher = SnapshotHasher()
    private var upperLists: UnsafeMutableRawBufferPointer?
    private let trailer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 8)

    init(index: HNSWIndex, header: SnapshotHeader, headerBytes: UnsafeRawBufferPointer) throws {
        self.index = index
        self.header = header
        total = HNSWIndex.snapshotHeaderSize + Int(header.bodyLength) + 8
        received = HNSWIndex.snapshotHeaderSize
        guard header.version >= 4 else {
            whole = allocateLargeBuffer(byteCount: total)
            whole!.copyMemory(from: headerBytes)
            return
        }
        hasher.update(headerBytes)
        let n = header.slotCount
        // Before allocating room for n slots: the sections of n slots must fit in the body.
        let perSlot = 10 + index.snapshotVectorBytes + (index.maxM0 + 1) * 4
        guard n <= Int(header.bodyLength) / perSlot, header.liveCount <= n else {
            throw VectorIndexError.corrupt("\(n) slots cannot fit in \(header.bodyLength) bytes")
        }
        // Every slot's vector and lists are written from the sections below.
        index.reserve(max(n, 1), filling: false)
        index.slotCount = n
        func section(_ kind: Kind, _ pointer: UnsafeMutableRawPointer, _ bytesPerSlot: Int) {
            sections.append(
                (kind, UnsafeMutableRawBufferPointer(start: pointer, count: n * bytesPerSlot)))
        }
        section(.ids, index.slotIDs, 8)
        section(.states, index.states, 1)
        section(.levels, index.levels, 1)
        if index.storesVectors {
            section(.floats, index.vectors, index.dimension * 4)
        } else {
            section(.codes, index.codes.unsafelyUnwrapped, index.dimension)
            section(.scales, index.codeScales.unsafelyUnwrapped, 4)
            section(.norms, index.squaredNorms.unsafelyUnwrapped, 4)
        }
        section(.level0, index.level0, (index.maxM0 + 1) * 4)
        try completeFilledSections()
    }

    deinit {
        whole?.deallocate()
        upperLists?.deallocate()
        trailer.deallocate()
    }

    /// Takes the next `count` bytes of the body (see `HNSWSnapshotReader.read(count:from:)`).
    func read(
        count: Int, from copy: (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        guard count <= total - received else {
            throw VectorIndexError.corrupt("snapshot longer than its stated size")
        }
        if let whole {
            try copy(
                0, UnsafeMutableRawBufferPointer(rebasing: whole[received..<(received + count)]))
            received += count
            return
        }
        var done = 0
        while done < count {
            guard current < sections.count else {
                throw VectorIndexError.corrupt("body length mismatch")
            }
            let (kind, memory) = sections[current]
            let n = min(count - done, memory.count - filled)
            let piece = UnsafeMutableRawBufferPointer(rebasing: memory[filled..<(filled + n)])
            try copy(done, piece)
            if kind != .trailer { hasher.update(UnsafeRawBufferPointer(piece)) }
            filled += n
            done += n
            received += n
            if kind == .floats {
                // A non-finite component would trap in encode() and poison distances (found by
                // Fuzz/Targets/SnapshotLoader).
                let complete = filled / 4
                let floats = memory.baseAddress!.assumingMemoryBound(to: Float.self)
                let bad = trove_first_nonfinite(floats + checkedFloats, complete - checkedFloats)
                if bad >= 0 {
                    let i = checkedFloats + bad
                    throw VectorIndexError.corrupt(
                        "slot \(i / index.dimension): component \(i % index.dimension) is not finite"
                    )
                }
                checkedFloats = complete
            }
            try completeFilledSections()
        }
    }

    /// Moves past every full section (empty ones included), checking what each completes.
    private func completeFilledSections() throws {
        while current < sections.count, filled == sections[current].memory.count {
            if sections[current].kind == .levels { try levelsReceived() }
            if sections[current].kind == .upper { upperReceived() }
            current += 1
            filled = 0
        }
    }

    /// States and levels are in: check them, then size the upper lists and the whole body.
    private func levelsReceived() throws {
        let n = header.slotCount
        var upperBytes = 0
        for s in 0..<n {
            let state = index.states[s]
            let level = Int(index.levels[s])
            guard state <= HNSWIndex.stateFree else {
                throw VectorIndexError.corrupt("slot \(s): state \(state)")
            }
            if state == HNSWIndex.stateFree {
                guard level == 0 else {
                    throw VectorIndexError.corrupt("free slot \(s): level \(level)")
                }
                continue
            }
            guard level <= 30 else { throw VectorIndexError.corrupt("slot \(s): level \(level)") }
            upperBytes += level * (index.maxM + 1) * 4
        }
        let perSlot = 10 + index.snapshotVectorBytes + (index.maxM0 + 1) * 4
        guard n * perSlot + upperBytes == Int(header.bodyLength) else {
            throw VectorIndexError.corrupt("body length mismatch")
        }
        let lists = UnsafeMutableRawBufferPointer.allocate(byteCount: upperBytes, alignment: 4)
        upperLists = lists
        sections.append((.upper, lists))
        sections.append((.trailer, trailer))
    }

    /// Gives each node above layer 0 its own lists (freed one by one, as inserts allocate them).
    private func upperReceived() {
        guard let lists = upperLists?.baseAddress else { return }
        var at = 0
        for s in 0..<header.slotCount
        where index.states[s] != HNSWIndex.stateFree && index.levels[s] > 0 {
            let count = Int(index.levels[s]) * (index.maxM + 1)
            let p = UnsafeMutablePointer<UInt32>.allocate(capacity: count)
            p.initialize(from: (lists + at).assumingMemoryBound(to: UInt32.self), count: count)
            index.upper[s] = p
            at += count * 4
        }
    }

    /// Checks the whole snapshot once every byte is in; the index is usable only if this returns.
    func finish() throws {
        guard received == total else {
            throw VectorIndexError.truncated(expected: total, actual: received)
        }
        if let whole {
            // The allocation is rounded up to whole huge pages: the snapshot is its first `total` bytes.
            return try index.loadEarlierVersion(
                UnsafeRawBufferPointer(rebasing: whole[0..<total]), header: header)
        }
        guard current == sections.count else {
            throw VectorIndexError.corrupt("body length mismatch")
        }
        guard UInt64(littleEndian: trailer.loadUnaligned(as: UInt64.self)) == hasher.finish() else {
            throw VectorIndexError.corrupt("checksum mismatch")
        }
        try index.loadSections(header)
    }
}

extension HNSWIndex {
    /// The rest of a version 4 load, once every section was received and the checksum matched:
    /// the id map, free and deleted slots, codes, then the graph's invariants.
    func loadSections(_ header: SnapshotHeader) throws {
        let n = header.slotCount
        slotsByID.reserveCapacity(header.liveCount)
        var live = 0
        for s in 0..<n {
            switch states[s] {
            case Self.stateFree:
                freeSlots.append(UInt32(s))
                // Codes computed from the vectors: none for a free slot, whose memory is unwritten.
                if storesVectors {
                    codes.map { ($0 + s * dimension).update(repeating: 0, count: dimension) }
                }
                continue
            case Self.stateLive:
                guard slotsByID.updateValue(UInt32(s), forKey: slotIDs[s]) == nil else {
                    throw VectorIndexError.corrupt("id \(slotIDs[s]) appears twice")
                }
                live += 1
            default:
                deletedSlots.append(UInt32(s))
            }
            if storesVectors {
                encode(UInt32(s), from: vectorPointer(UInt32(s)))
            } else {
                let scale = codeScales.unsafelyUnwrapped[s]
                let norm = squaredNorms.unsafelyUnwrapped[s]
                guard scale.isFinite, scale > 0, norm.isFinite, norm >= 0 else {
                    throw VectorIndexError.corrupt("slot \(s): bad code scale or norm")
                }
            }
        }
        guard live == header.liveCount else {
            throw VectorIndexError.corrupt("live count \(header.liveCount) but \(live) live slots")
        }
        liveCount = live
        entryPoint = header.entry
        maxLevel = header.maxLevel
        // Before any search can follow a link: counts and ranges first, then the graph's shape.
        if let first = invariantViolations(limit: 1, idMapFromSlots: true).first {
            throw VectorIndexError.corrupt(first)
        }
    }
}
