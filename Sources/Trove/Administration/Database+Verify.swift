import Foundation
import TroveSQLite
import TroveVectors

/// What ``Database/verify()`` found: the file's own integrity and, per collection, whether the
/// table (the truth) and everything derived from it (the FTS5 index, the in-memory vector index,
/// the change log) agree.
///
/// ```swift
/// let report = try await database.verify()
/// if !report.isHealthy {
///     print(report.problems.joined(separator: "\n"))
///     let after = try await database.repair()
/// }
/// ```
public struct VerifyReport: Hashable, Sendable, Codable {
    /// `PRAGMA integrity_check` output: `["ok"]` for a sound file.
    public var integrity: [String]
    /// One entry per collection, sorted by name.
    public var collections: [CollectionHealth]

    /// True when the file is sound and every collection's indexes agree with its table.
    public var isHealthy: Bool { integrity == ["ok"] && collections.allSatisfy(\.isHealthy) }

    /// Every problem, each prefixed with its collection's name.
    public var problems: [String] {
        (integrity == ["ok"] ? [] : integrity.map { "file: \($0)" })
            + collections.flatMap { c in c.problems.map { "\(c.name): \($0)" } }
    }
}

/// The state of one collection as ``Database/verify()`` saw it.
public struct CollectionHealth: Hashable, Sendable, Codable {
    /// The collection's name.
    public var name: String
    /// Rows in the table.
    public var rows: Int
    /// Rows with a vector of the collection's dimension.
    public var rowsWithVector: Int
    /// Documents in the FTS5 index, or nil when lexical search is off.
    public var textIndexDocuments: Int?
    /// Vectors in the in-memory vector index after catching up with the change log.
    public var vectorIndexCount: Int
    /// The newest change-log sequence number.
    public var logMaxSeq: Int64
    /// The highest change-log sequence number pruned (or raised by ``Database/repair()``).
    public var logFloor: Int64
    /// What disagrees; empty when healthy.
    public var problems: [String]

    /// True when the table and its derived indexes agree.
    public var isHealthy: Bool { problems.isEmpty }
}

/// What ``Database/repair()`` did and what ``Database/verify()`` says afterwards.
public struct RepairReport: Hashable, Sendable, Codable {
    /// The actions taken, each prefixed with its collection's name.
    public var actions: [String]
    /// The verification before repairing.
    public var before: VerifyReport
    /// The verification after repairing.
    public var after: VerifyReport
}

extension Database {
    /// Checks the file and every collection: `PRAGMA integrity_check`; per collection, FTS5's
    /// `integrity-check` against the table, the FTS5 document count against the row count, and
    /// every vector in the in-memory index against the stored embedding (ids and values exactly);
    /// per document collection, each derived index (full text, vectors, B-trees, R*Tree) against
    /// its table through the index protocol; the links' adjacency index against the link table
    /// (listed as `_trove_edges`).
    ///
    /// Reads only, except that FTS5's check is issued as an `INSERT` command that changes nothing
    /// (skipped on a read-only database).
    ///
    /// - Returns: a report; failures of the checks themselves (a damaged file) are recorded as
    ///   problems rather than thrown.
    /// - Throws: `SQLiteError` only when the file cannot be read at all.
    /// - Complexity: O(file size) for the integrity check, plus O(rows × dimension) per collection.
    public func verify() throws -> VerifyReport {
        let integrity: [String]
        do {
            integrity = try connection.query("PRAGMA integrity_check").compactMap {
                $0.string(at: 0)
            }
        } catch let error as SQLiteError {
            integrity = ["integrity_check failed: \(error.message)"]
        }
        var collections = try collectionNames().map(documentHealth)
        if try EdgeTable.exists(connection) { collections.append(documentHealth(EdgeTable.name)) }
        return VerifyReport(
            integrity: integrity, collections: collections.sorted { $0.name < $1.name })
    }

    /// A collection (or the link table) as verify sees it: its rows, its change log and what its
    /// derived indexes report through the index protocol (each loaded and caught up first).
    private func documentHealth(_ name: String) -> CollectionHealth {
        var health = CollectionHealth(
            name: name, rows: 0, rowsWithVector: 0, textIndexDocuments: nil, vectorIndexCount: 0,
            logMaxSeq: 0, logFloor: 0, problems: [])
        do {
            let store = name == EdgeTable.name ? nil : try anyDocumentStore(name)
            let layout = store?.layout ?? EdgeTable.layout
            let graph = documentStores.graph
            health = try connection.transaction(connection.isReadOnly ? .deferred : .immediate) {
                var health = health
                health.rows = Int(
                    try connection.scalar("SELECT count(*) FROM \(layout.table)")?.int64Value ?? 0)
                (health.logMaxSeq, health.logFloor) = try layout.changeLog.state(connection)
                if health.logFloor > health.logMaxSeq {
                    health.problems.append(
                        "change-log floor \(health.logFloor) is above its newest entry \(health.logMaxSeq); every query reloads the in-memory indexes"
                    )
                }
                health.problems +=
                    try store?.indexes.verify(connection) ?? graph.indexes.verify(connection)
                guard let store else { return health }
                if let fullText = store.schema.fullText {
                    let documents = Int(
                        try connection.scalar("SELECT count(*) FROM \"\(layout.ftsName)_docsize\"")?
                            .int64Value ?? 0)
                    health.textIndexDocuments = documents
                    if documents != health.rows, fullText.fields.count > 0 {
                        health.problems.append(
                            "text index holds \(documents) documents, the table \(health.rows) rows"
                        )
                    }
                }
                for field in store.schema.fields {
                    guard case .vector(let dimension, _) = field.type else { continue }
                    health.rowsWithVector += Int(
                        try connection.scalar(
                            "SELECT count(*) FROM \(layout.table) WHERE \"\(field.name)\" IS NOT NULL AND length(\"\(field.name)\") = ?",
                            [.integer(Int64(4 * dimension))])?.int64Value ?? 0)
                    health.vectorIndexCount += store.indexes.lock.read {
                        store.indexes.vectors[field.name]?.count ?? 0
                    }
                }
                return health
            }
        } catch {
            health.problems = ["cannot be checked: \(error)"]
        }
        return health
    }

    /// Rebuilds everything derived from the tables: each search collection's FTS5 index (FTS5
    /// `rebuild`), its in-memory vector index (reloaded from the table), and the change-log floor,
    /// raised so that every other connection and process reloads its vector index on its next
    /// query; each unhealthy document collection's derived indexes, through the index protocol;
    /// the adjacency index of the links when it disagrees with the link table.
    ///
    /// The tables themselves are never changed. A file whose tables are damaged (integrity_check
    /// fails) needs a backup or `sqlite3 .recover`; the report says so.
    ///
    /// ```swift
    /// let result = try await database.repair()
    /// assert(result.after.isHealthy)
    /// ```
    /// - Returns: the actions taken and the verification before and after.
    /// - Throws: `SQLiteError` when the file is read-only or a rebuild fails (each collection is
    ///   rebuilt in its own transaction, so a failure leaves it as it was).
    /// - Complexity: O(rows × (text length + dimension)).
    public func repair() throws -> RepairReport {
        guard !connection.isReadOnly else {
            throw SQLiteError(
                extendedCode: .readOnly,
                message: "repair needs a writable database; this one is open read-only")
        }
        let before = try verify()
        var actions: [String] = []
        for name in try collectionNames()
        where before.collections.contains(where: { $0.name == name && !$0.isHealthy }) {
            let store = try anyDocumentStore(name)
            try connection.transaction(.immediate) {
                try store.indexes.repair(connection)
                // Every other connection's and process's watermark is now below the floor, so
                // each rebuilds its in-memory indexes from the table on its next query.
                try store.layout.changeLog.raiseFloorPastNewest(
                    connection, rowColumn: store.layout.logRid)
            }
            actions.append(
                "\(name): rebuilt its derived indexes from the table; every connection reloads its in-memory indexes"
            )
        }
        if before.collections.contains(where: { $0.name == EdgeTable.name && !$0.isHealthy }) {
            documentStores.graph.indexes.invalidate()
            actions.append("\(EdgeTable.name): the adjacency index is rebuilt from the link table")
        }
        let after = try verify()
        if after.integrity != ["ok"] {
            actions.append(
                "file: integrity_check still fails; the tables themselves are damaged — restore a backup or use sqlite3 .recover"
            )
        }
        return RepairReport(actions: actions, before: before, after: after)
    }
}
