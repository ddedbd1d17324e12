import Foundation
import TroveSQLite

// Expiry (time to live) on document collections whose schema has `allowsExpiry: true`.

extension DocumentCollection {
    /// Sets when a document expires, or clears its expiry with `.never`. Its version goes up.
    ///
    /// ```swift
    /// try await sessions.setExpiry(id: 1, .after(.seconds(60)))
    /// try await sessions.setExpiry(id: 1, .never)
    /// ```
    /// - Throws: ``TroveError/documentNotFound(_:)`` when it does not exist or has already
    ///   expired; ``TroveError/expiryDisabled(collection:)``.
    public func setExpiry(id: DocumentID, _ expiry: Expiry) async throws {
        try await writer { try $0.setExpiry(id: id, expiry) }
    }

    /// When a document expires, or nil when it never does.
    ///
    /// - Throws: ``TroveError/documentNotFound(_:)`` when it does not exist or has expired.
    public func expiry(of id: DocumentID) async throws -> Date? {
        try await reader(transaction: false) { try $0.expiry(of: id) }
    }

    /// Deletes every expired document now, in one transaction that also removes their full-text,
    /// B-tree and change-log entries (the in-memory vector indexes drop them at their next
    /// catch-up; they never returned them anyway).
    ///
    /// - Returns: how many were deleted.
    @discardableResult
    public func purgeExpired() async throws -> Int {
        try await writer { try $0.purgeExpired() }
    }
}

extension DocumentReading {
    /// When a document expires, or nil when never.
    ///
    /// - Throws: ``TroveError/documentNotFound(_:)`` when it does not exist or has expired.
    public func expiry(of id: DocumentID) throws -> Date? {
        try _access.store.expiry(of: id, on: _access.connection)
    }
}

extension DocumentWriting {
    /// Sets or clears (`.never`) a document's expiry.
    public func setExpiry(id: DocumentID, _ expiry: Expiry) throws {
        try _access.store.setExpiry(of: id, expiry, on: _access.connection)
    }
    /// Deletes every expired document. - Returns: how many.
    @discardableResult
    public func purgeExpired() throws -> Int {
        try _access.store.purgeExpired(limit: nil, on: _access.connection)
    }
}

extension Database {
    /// Deletes the expired documents of every document collection, at most `batchSize` per
    /// transaction, yielding to other work on this actor between batches.
    ///
    /// ```swift
    /// let purged = try await database.purgeExpired()
    /// ```
    /// - Returns: how many were deleted.
    @discardableResult
    public func purgeExpired(batchSize: Int = 1_000) async throws -> Int {
        precondition(batchSize > 0, "batchSize must be positive")
        var total = 0
        for name in try collectionNames() {
            let store = try anyDocumentStore(name)
            guard store.schema.allowsExpiry else { continue }
            while true {
                let deleted = try writing { try store.purgeExpired(limit: batchSize, on: $0) }
                total += deleted
                if deleted < batchSize { break }
                // Let queued calls (writes, reads on the writer) run between batches.
                await Task.yield()
            }
        }
        return total
    }

    /// Starts purging expired documents in the background every `interval`, in batches of
    /// `batchSize` (each its own short transaction, so writers never wait long). Replaces a purge
    /// started before; stopped by ``stopPurgingExpired()`` or when the database is released.
    ///
    /// Expired documents are invisible to every read whether or not they were purged; purging
    /// only gives their space back.
    ///
    /// ```swift
    /// await database.startPurgingExpired(every: .seconds(60))
    /// ```
    public func startPurgingExpired(every interval: Duration = .seconds(60), batchSize: Int = 1_000)
    {
        expiryPurge?.cancel()
        expiryPurge = Task { [weak self] in
            while !Task.isCancelled {
                do {
                    _ = try await self?.purgeExpired(batchSize: batchSize)
                } catch {
                    // A busy or read-only file: the next round tries again.
                }
                guard self != nil else { return }
                try? await Task.sleep(for: interval)
            }
        }
    }

    /// Stops the background purge, if one runs.
    public func stopPurgingExpired() {
        expiryPurge?.cancel()
        expiryPurge = nil
    }
}
