import Trove

extension VectorStore {
    /// The row with this id, vector included, or nil.
    public func fetch(id: Int) async throws -> VectorEntry? {
        try await translatingErrors {
            try await collection.fetch(id: .int(Int64(id))).flatMap(StoreSchema.entry)
        }
    }

    /// Whether a row has this id.
    public func contains(id: Int) async throws -> Bool {
        try await translatingErrors {
            try await collection.count(where: Field.id == .int(Int64(id))) > 0
        }
    }

    /// The number of rows.
    public func count() async throws -> Int {
        try await translatingErrors { try await collection.count() }
    }

    /// The number of rows with this source.
    public func count(source: String) async throws -> Int {
        try await translatingErrors {
            try await collection.count(where: StoreSchema.filter(source: source))
        }
    }
}
