/// Vectors of one dimension in one contiguous row-major `Float` buffer, with a map between
/// external ids (`Int64` row ids) and internal slots (`UInt32` row positions).
///
/// Appends grow the buffer amortised O(1); an update overwrites its row in place; a removal
/// moves the last row into the freed slot ("swap-remove"), so rows stay dense and a scan never
/// skips holes. Slots are therefore not stable across removals; ids are.
///
/// Memory: `4 × dimension` bytes per row for the floats, plus 8 bytes (slot → id) and a
/// dictionary entry (id → slot, roughly 20-30 bytes) per row. The floats live in one 64-byte
/// aligned allocation; from 4 MB up it is 2 MB aligned and, on Linux, advised for transparent
/// huge pages (see `RowBuffer`). A value type: copies share the buffers until one of them is
/// mutated (copy-on-write).
///
/// ```swift
/// var matrix = VectorMatrix(dimension: 3)
/// matrix.append(id: 10, vector: [1, 2, 3])
/// matrix.append(id: 11, vector: [4, 5, 6])
/// matrix.remove(id: 10)               // row of 11 moves to slot 0
/// matrix.row(forID: 11)               // [4, 5, 6]
/// ```
public struct VectorMatrix: Sendable {
    /// The number of floats per row.
    public let dimension: Int
    // Row-major floats, count × dimension; shared by copies until one mutates (COW). The
    // dominant memory cost: 4 × dimension bytes per row, capacity grown by doubling.
    @usableFromInline var storage: RowBuffer
    // slot -> external id; 8 bytes per row.
    @usableFromInline var slotIDs: [Int64]
    // external id -> slot.
    @usableFromInline var slotsByID: [Int64: UInt32]

    /// Creates an empty matrix.
    /// - Parameter dimension: floats per row, at least 1.
    public init(dimension: Int) {
        precondition(dimension > 0, "dimension must be positive, got \(dimension)")
        self.dimension = dimension
        storage = RowBuffer(minimumCapacity: 0)
        slotIDs = []
        slotsByID = [:]
    }

    /// Creates a matrix of `count` rows written in place: `fill` receives the ids
    /// (`count` × 8 bytes, `Int64`, native byte order) and the row-major floats (`count` ×
    /// `dimension` × 4 bytes), both uninitialised, and returns whether it filled them. For
    /// reading a saved matrix in one pass, without a row-by-row rebuild.
    ///
    /// - Returns: nil when `fill` returns false or two rows have the same id.
    /// - Complexity: O(count) besides `fill`.
    public init?(
        dimension: Int, count: Int,
        filling fill: (_ ids: UnsafeMutableRawBufferPointer, _ rows: UnsafeMutableRawBufferPointer)
            throws -> Bool
    ) rethrows {
        precondition(
            dimension > 0 && count >= 0 && count < Int(UInt32.max),
            "dimension \(dimension), count \(count)")
        self.dimension = dimension
        let floats = count * dimension
        storage = RowBuffer(minimumCapacity: floats)
        var ids = [Int64](repeating: 0, count: count)
        let base = storage.base
        let filled = try ids.withUnsafeMutableBytes { idBytes in
            try fill(
                idBytes,
                UnsafeMutableRawBufferPointer(
                    start: base, count: floats * MemoryLayout<Float>.stride))
        }
        guard filled else { return nil }
        storage.count = floats
        var slots: [Int64: UInt32] = [:]
        slots.reserveCapacity(count)
        for (slot, id) in ids.enumerated() {
            guard slots.updateValue(UInt32(slot), forKey: id) == nil else { return nil }
        }
        slotIDs = ids
        slotsByID = slots
    }

    /// The number of rows.
    @inlinable public var count: Int { slotIDs.count }

    /// Whether there are no rows.
    @inlinable public var isEmpty: Bool { slotIDs.isEmpty }

    /// The external ids, indexed by slot.
    @inlinable public var ids: [Int64] { slotIDs }

    /// The slot holding `id`, if any.
    @inlinable public func slot(of id: Int64) -> UInt32? { slotsByID[id] }

    /// The id in `slot` (`slot < count`).
    @inlinable public func id(at slot: UInt32) -> Int64 { slotIDs[Int(slot)] }

    /// Whether a row with `id` exists.
    @inlinable public func contains(id: Int64) -> Bool { slotsByID[id] != nil }

    /// A copy of the row in `slot`.
    public func row(at slot: UInt32) -> [Float] {
        precondition(Int(slot) < count, "slot \(slot) out of range 0..<\(count)")
        let start = storage.base + Int(slot) * dimension
        return Array(UnsafeBufferPointer(start: start, count: dimension))
    }

    /// A copy of the row of `id`, or nil.
    public func row(forID id: Int64) -> [Float]? {
        slotsByID[id].map { row(at: $0) }
    }

    /// Reserves room for `n` rows.
    /// - Complexity: O(count) when the buffers move.
    public mutating func reserveCapacity(_ n: Int) {
        reserveFloats(n * dimension)
        slotIDs.reserveCapacity(n)
        slotsByID.reserveCapacity(n)
    }

    /// Appends a row for a new id.
    ///
    /// - Parameters:
    ///   - id: an id not yet present (precondition).
    ///   - vector: `dimension` floats (precondition).
    /// - Returns: the new row's slot.
    /// - Complexity: amortised O(dimension).
    @discardableResult
    public mutating func append(id: Int64, vector: [Float]) -> UInt32 {
        vector.withUnsafeBufferPointer { append(id: id, floats: $0) }
    }

    /// Appends a row for a new id from `dimension` floats in memory the caller owns (a
    /// statement's blob, say), without an intermediate array.
    ///
    /// - Returns: the new row's slot.
    /// - Complexity: amortised O(dimension).
    @discardableResult
    public mutating func append(id: Int64, floats vector: UnsafeBufferPointer<Float>) -> UInt32 {
        precondition(vector.count == dimension, "expected \(dimension) floats, got \(vector.count)")
        precondition(slotsByID[id] == nil, "id \(id) is already present")
        precondition(slotIDs.count < Int(UInt32.max), "a VectorMatrix holds at most 2^32-1 rows")
        let slot = UInt32(slotIDs.count)
        let end = storage.count + dimension
        if end > storage.capacity {
            reserveFloats(Swift.max(end, storage.capacity * 2))
        } else {
            makeStorageUnique()
        }
        (storage.base + storage.count).update(from: vector.baseAddress!, count: dimension)
        storage.count = end
        slotIDs.append(id)
        slotsByID[id] = slot
        return slot
    }

    /// Overwrites the row in `slot`.
    /// - Complexity: O(dimension).
    public mutating func update(slot: UInt32, vector: [Float]) {
        vector.withUnsafeBufferPointer { update(slot: slot, floats: $0) }
    }

    /// Overwrites the row in `slot` from `dimension` floats in memory the caller owns.
    /// - Complexity: O(dimension).
    public mutating func update(slot: UInt32, floats vector: UnsafeBufferPointer<Float>) {
        precondition(vector.count == dimension, "expected \(dimension) floats, got \(vector.count)")
        precondition(Int(slot) < count, "slot \(slot) out of range 0..<\(count)")
        makeStorageUnique()
        (storage.base + Int(slot) * dimension).update(from: vector.baseAddress!, count: dimension)
    }

    /// Writes the row of `id`: overwrites it in place when present, appends it otherwise.
    ///
    /// - Returns: the row's slot.
    /// - Complexity: amortised O(dimension).
    @discardableResult
    public mutating func upsert(id: Int64, vector: [Float]) -> UInt32 {
        vector.withUnsafeBufferPointer { upsert(id: id, floats: $0) }
    }

    /// Writes the row of `id` from `dimension` floats in memory the caller owns.
    ///
    /// - Returns: the row's slot.
    /// - Complexity: amortised O(dimension).
    @discardableResult
    public mutating func upsert(id: Int64, floats vector: UnsafeBufferPointer<Float>) -> UInt32 {
        if let slot = slotsByID[id] {
            update(slot: slot, floats: vector)
            return slot
        }
        return append(id: id, floats: vector)
    }

    /// Calls `body` with the floats of the row in `slot`, to change them in place.
    /// - Complexity: O(dimension), plus a copy of the whole matrix when another value shares it.
    public mutating func withMutableRow<R>(
        at slot: UInt32, _ body: (UnsafeMutableBufferPointer<Float>) throws -> R
    )
        rethrows -> R
    {
        precondition(Int(slot) < count, "slot \(slot) out of range 0..<\(count)")
        makeStorageUnique()
        return try body(
            UnsafeMutableBufferPointer(
                start: storage.base + Int(slot) * dimension, count: dimension))
    }

    /// Removes the row of `id` by moving the last row into its slot.
    ///
    /// - Parameter id: the id to remove.
    /// - Returns: nil when `id` was absent; otherwise the freed slot and the id of the row that
    ///   moved into it (nil when the removed row was the last one).
    /// - Complexity: O(dimension).
    @discardableResult
    public mutating func remove(id: Int64) -> (slot: UInt32, movedID: Int64?)? {
        guard let slot = slotsByID.removeValue(forKey: id) else { return nil }
        let last = slotIDs.count - 1
        var moved: Int64?
        makeStorageUnique()
        if Int(slot) != last {
            let movedID = slotIDs[last]
            let from = last * dimension
            let to = Int(slot) * dimension
            (storage.base + to).update(from: storage.base + from, count: dimension)
            slotIDs[Int(slot)] = movedID
            slotsByID[movedID] = slot
            moved = movedID
        }
        slotIDs.removeLast()
        storage.count -= dimension
        return (slot, moved)
    }

    /// Removes every row, keeping the capacity.
    public mutating func removeAll() {
        if isKnownUniquelyReferenced(&storage) {
            storage.count = 0
        } else {
            storage = RowBuffer(minimumCapacity: storage.capacity)
        }
        slotIDs.removeAll(keepingCapacity: true)
        slotsByID.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the row-major floats (`count × dimension`).
    @inlinable
    public func withUnsafeRows<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) {
            try body(UnsafeBufferPointer(start: storage.base, count: storage.count))
        }
    }

    // Copies the floats into a private buffer when another matrix value shares them.
    private mutating func makeStorageUnique() {
        if !isKnownUniquelyReferenced(&storage) {
            storage = storage.copy(minimumCapacity: storage.capacity)
        }
    }

    // Moves the floats into a buffer of at least `floats` capacity (also makes it unique).
    private mutating func reserveFloats(_ floats: Int) {
        if floats > storage.capacity {
            storage = storage.copy(minimumCapacity: floats)
        } else {
            makeStorageUnique()
        }
    }
}
