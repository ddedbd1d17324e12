import Foundation
import TroveSQLite

// Setting, reading and purging expiry. Which rows a read sees (expired ones left out) is decided
// in DocumentStore+Candidates.swift.

extension DocumentStore {
    // MARK: Reading and setting expiry

    func requireExpiry() throws {
        guard schema.allowsExpiry else { throw TroveError.expiryDisabled(collection: name) }
    }

    /// The stored expiry second for `expiry`, or nil for never; throws when the collection does
    /// not allow expiry and one is asked for.
    func expirySecond(_ expiry: Expiry) throws -> Int64? {
        if expiry == .never { return nil }
        try requireExpiry()
        return try expiry.second(now: clock.now)
    }

    /// When a visible document expires (nil: never).
    ///
    /// - Throws: ``TroveError/documentNotFound(_:)`` when it does not exist or has expired.
    func expiry(of id: DocumentID, on connection: Connection) throws -> Date? {
        try requireExpiry()
        var sql = SQLFragment(
            sql: "SELECT \(DocumentLayout.expiresColumn) FROM \(layout.table) WHERE \"id\" = ")
        sql.bind(id.sqlValue)
        sql.append(" AND ")
        sql.append(visibility()!)
        let rows = try connection.cachedStatement(sql.sql).rows(sql.bindings)
        guard let row = rows.first else { throw TroveError.documentNotFound(id) }
        return row[0].int64Value.map { Date(timeIntervalSince1970: Double($0)) }
    }

    /// Sets (or, with `.never`, clears) a visible document's expiry. Its version goes up.
    ///
    /// - Throws: ``TroveError/documentNotFound(_:)`` when it does not exist or has expired.
    func setExpiry(of id: DocumentID, _ expiry: Expiry, on connection: Connection) throws {
        try requireExpiry()
        guard id.kind == schema.id else {
            throw TroveError.typeMismatch(
                field: "id", expected: "\(schema.id) id", value: id.description)
        }
        let second = try expiry.second(now: clock.now)
        var sql = SQLFragment(sql: "UPDATE \(layout.table) SET \(DocumentLayout.expiresColumn) = ")
        sql.bind(second.map(SQLValue.integer) ?? .null)
        sql.append(", \"_version\" = \"_version\" + 1 WHERE \"id\" = ")
        sql.bind(id.sqlValue)
        sql.append(" AND ")
        sql.append(visibility()!)
        try connection.cachedStatement(sql.sql).execute(sql.bindings)
        guard connection.changes > 0 else { throw TroveError.documentNotFound(id) }
        try pruneLogIfNeeded(on: connection)
    }

    /// Whether a stored row with this id has expired (it is then invisible, waiting for a purge).
    func isExpired(_ id: DocumentID, on connection: Connection) throws -> Bool {
        guard schema.allowsExpiry else { return false }
        return try connection.cachedStatement(
            "SELECT 1 FROM \(layout.table) WHERE \"id\" = ? AND \(DocumentLayout.expiresColumn) <= ?"
        ).rows([id.sqlValue, .real(clock.now.timeIntervalSince1970)]).first != nil
    }

    /// Removes an expired row with this id so a new document can take the id.
    func removeExpired(_ id: DocumentID, on connection: Connection) throws {
        guard schema.allowsExpiry else { return }
        try connection.cachedStatement(
            "DELETE FROM \(layout.table) WHERE \"id\" = ? AND \(DocumentLayout.expiresColumn) <= ?"
        ).execute([id.sqlValue, .real(clock.now.timeIntervalSince1970)])
    }

    // MARK: Purge

    /// Deletes up to `limit` expired documents (all of them when nil), oldest expiry first.
    /// Runs inside the caller's write transaction; the delete triggers remove their full-text
    /// entries and log them, and SQLite removes their B-tree entries, in that same transaction.
    ///
    /// - Returns: how many were deleted.
    func purgeExpired(limit: Int?, on connection: Connection) throws -> Int {
        guard schema.allowsExpiry else { return 0 }
        let expires = DocumentLayout.expiresColumn
        var sql = SQLFragment(
            sql:
                "DELETE FROM \(layout.table) WHERE \(layout.rid) IN (SELECT \(layout.rid) FROM \(layout.table) WHERE \(expires) <= "
        )
        sql.bind(.real(clock.now.timeIntervalSince1970))
        sql.append(" ORDER BY \(expires)")
        if let limit {
            sql.append(" LIMIT ")
            sql.bind(.integer(Int64(max(0, limit))))
        }
        sql.append(")")
        try connection.prepare(sql.sql).execute(sql.bindings)
        let deleted = connection.changes
        try pruneLogIfNeeded(on: connection)
        return deleted
    }
}
