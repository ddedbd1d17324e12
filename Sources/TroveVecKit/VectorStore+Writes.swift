import Trove
import TroveSQLite

extension VectorStore {
    // MARK: Insert

    /// Inserts one row.
    ///
    /// - Throws: ``SQLiteError/dimensionMismatch(expected:got:)``,
    ///   ``SQLiteError/metadataTooLarge(limit:got:)`` (nothing written), or
    ///   ``SQLiteError/stepFailed(code:message:)`` with code 19 when the id exists.
    public func insert(_ entry: VectorEntry) async throws {
        try await insertBatch([entry])
    }

    /// Inserts one row from its parts.
    public func insert(
        id: Int, content: String, source: String, metadata: String? = nil, vector: [Float]
    ) async throws {
        try await insert(
            VectorEntry(
                id: id, content: content, source: source, metadata: metadata, vector: vector))
    }

    /// Inserts one row from a `[Double]` embedding.
    @_disfavoredOverload
    public func insert(
        id: Int, content: String, source: String, metadata: String? = nil, vector: [Double]
    ) async throws {
        try await insert(
            VectorEntry(
                id: id, content: content, source: source, metadata: metadata, vector: vector))
    }

    /// Inserts one row with the next free id (one above the largest, 1 in an empty store) and
    /// returns it.
    @discardableResult
    public func insert(content: String, source: String, metadata: String? = nil, vector: [Float])
        async throws -> Int
    {
        let probe = VectorEntry(
            id: 0, content: content, source: source, metadata: metadata, vector: vector)
        try validate([probe])
        return try await translatingErrors {
            // Trove picks the id inside the write transaction that inserts (as SQLite would: one
            // above the largest), so two inserts never pick the same one.
            var document = StoreSchema.document(probe)
            document.id = .unassigned
            guard case .int(let id) = try await collection.insert(document) else {
                preconditionFailure("a vector store has integer ids")
            }
            return Int(id)
        }
    }

    /// Inserts one row from a `[Double]` embedding with the next free id, and returns it.
    @_disfavoredOverload @discardableResult
    public func insert(content: String, source: String, metadata: String? = nil, vector: [Double])
        async throws -> Int
    {
        try await insert(
            content: content, source: source, metadata: metadata, vector: vector.map(Float.init))
    }

    /// Inserts rows all or nothing, in one transaction: every entry is checked before the first
    /// is written, and a failure (such as an id that exists) leaves the store as it was.
    ///
    /// - Complexity: one transaction for the batch (much faster than one insert per row).
    public func insertBatch(_ entries: [VectorEntry]) async throws {
        guard !entries.isEmpty else { return }
        try validate(entries)
        try await translatingErrors {
            try await collection.insert(entries.map(StoreSchema.document))
        }
    }

    // MARK: Replace and delete

    /// Replaces a row: content, source, metadata and vector (nil metadata clears it).
    ///
    /// - Throws: ``SQLiteError/rowNotFound(id:)`` when the id is missing; nothing is written.
    public func update(_ entry: VectorEntry) async throws {
        try validate([entry])
        try await translatingErrors { _ = try await collection.update(StoreSchema.document(entry)) }
    }

    /// Inserts a row, or replaces the row with its id, in one transaction.
    public func upsert(_ entry: VectorEntry) async throws {
        try validate([entry])
        try await translatingErrors { try await collection.upsert([StoreSchema.document(entry)]) }
    }

    /// Deletes a row; a missing id is not an error.
    ///
    /// - Returns: whether the row existed.
    @discardableResult
    public func delete(id: Int) async throws -> Bool {
        try await translatingErrors { try await collection.delete(id: .int(Int64(id))) }
    }

    /// Deletes every row with this source (the unit of re-ingesting one document).
    ///
    /// - Returns: how many rows were deleted.
    @discardableResult
    public func delete(source: String) async throws -> Int {
        try await translatingErrors {
            try await collection.delete(where: StoreSchema.filter(source: source))
        }
    }

    /// Deletes every row.
    ///
    /// - Returns: how many rows were deleted.
    @discardableResult
    public func deleteAll() async throws -> Int {
        try await translatingErrors { try await collection.delete(where: .all) }
    }

    /// Checks what SQLiteVecKit checks before writing, in its order: each vector's length, then
    /// each metadata's size.
    func validate(_ entries: [VectorEntry]) throws(SQLiteError) {
        for entry in entries {
            guard entry.vector.count == dimension else {
                throw .dimensionMismatch(expected: dimension, got: entry.vector.count)
            }
            if let bytes = entry.metadata?.utf8.count, bytes > metadataByteLimit {
                throw .metadataTooLarge(limit: metadataByteLimit, got: bytes)
            }
        }
    }
}
