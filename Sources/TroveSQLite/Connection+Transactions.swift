import CSQLite

extension Connection {
    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Locks on first read/write.
        case deferred = "DEFERRED"
        /// Takes the write lock at BEGIN, so the transaction cannot fail later with `busy`
        /// because another writer got in first. Best for read-modify-write.
        case immediate = "IMMEDIATE"
        case exclusive = "EXCLUSIVE"
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// Calling it inside another transaction nests as a savepoint.
    ///
    /// ```swift
    /// try connection.transaction {
    ///     try connection.execute("INSERT INTO t(a) VALUES (1)")
    ///     try connection.execute("INSERT INTO t(a) VALUES (2)")
    /// }
    /// ```
    /// - Throws: what `body` throws (after rolling back), or ``SQLiteError`` from BEGIN/COMMIT.
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws
        -> T
    {
        if isInTransaction { return try savepoint(body) }
        // Cached statements: compiling BEGIN and COMMIT for every transaction cost about as much
        // as a small indexed query's own statement.
        try cachedStatement("BEGIN \(kind.rawValue)").execute()
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            try cachedStatement("COMMIT").execute()
        } catch {
            rollbackQuietly()
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back (and released) when it
    /// throws; the enclosing transaction, if any, continues.
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointCounter += 1
        let name = "trove_sp_\(savepointCounter)"
        try execute(script: "SAVEPOINT \(name)")
        do {
            let result = try body()
            try execute(script: "RELEASE \(name)")
            return result
        } catch {
            // ROLLBACK TO keeps the savepoint open; RELEASE then removes it.
            try? execute(script: "ROLLBACK TO \(name); RELEASE \(name)")
            throw error
        }
    }

    private func rollbackQuietly() {
        // A failed COMMIT or a statement error may already have ended the transaction.
        if isInTransaction { try? execute(script: "ROLLBACK") }
    }
}
