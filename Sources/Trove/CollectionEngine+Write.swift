import Foundation
import TroveSQLite
import TroveVectors

/// How a batch treats ids that already exist.
enum WriteMode {
    /// Fail with duplicateID.
    case insert
    /// Replace the row.
    case upsert
    /// Fail with rowNotFound when the id is missing.
    case update
}

/// A row to write when the id may be assigned by SQLite.
struct PendingRow {
    var id: Int64?
    var content: String
    var source: String
    var metadata: String?
    var vector: [Float]?
}

extension CollectionEngine {
    // MARK: Validation (always before the first write)

    func validate(vector: [Float]) throws {
        guard vector.count == configuration.dimension else {
            throw TroveError.dimensionMismatch(expected: configuration.dimension, actual: vector.count)
        }
        if let bad = vector.firstIndex(where: { !$0.isFinite }) {
            throw TroveError.invalidVector(reason: "component \(bad) is \(vector[bad]); every component must be finite")
        }
        if configuration.metric == .cosine, vector.allSatisfy({ $0 == 0 }) {
            throw TroveError.invalidVector(
                reason: "every component is zero; a zero vector has no direction, so cosine similarity is undefined")
        }
    }

    func validate(metadata: String?) throws {
        guard let metadata else { return }
        let size = metadata.utf8.count
        guard size <= configuration.metadataByteLimit else {
            throw TroveError.metadataTooLarge(limit: configuration.metadataByteLimit, actual: size)
        }
        // SQLite's own JSON parser decides, so validation agrees exactly with the CHECK constraint.
        let type = try connection.scalar(
            "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) ELSE NULL END", [.text(metadata)])
        guard let type = type?.stringValue else { throw TroveError.invalidMetadata(reason: "the text is not valid JSON") }
        guard type == "object" else { throw TroveError.invalidMetadata(reason: "got a JSON \(type)") }
    }

    func validate(rows: [PendingRow], mode: WriteMode) throws {
        var seen = Set<Int64>()
        seen.reserveCapacity(rows.count)
        for row in rows {
            if let vector = row.vector { try validate(vector: vector) }
            try validate(metadata: row.metadata)
            if let id = row.id, !seen.insert(id).inserted, mode == .insert { throw TroveError.duplicateID(id) }
        }
    }

    // MARK: Writing

    /// Runs `body` in an IMMEDIATE transaction, then applies the index changes it recorded if
    /// the index was current. Prunes the change log when it grows long.
    func write<T>(_ body: (inout [IndexChange]) throws -> T) throws -> T {
        let outerTransaction = connection.isInTransaction
        var changes: [IndexChange] = []
        var before: Int64 = 0
        var after: Int64 = 0
        let result = try connection.transaction(.immediate) {
            before = try logState().maxSeq
            let result = try body(&changes)
            after = try logState().maxSeq
            try pruneLogIfNeeded(maxSeq: after)
            return result
        }
        // Inside someone else's transaction nothing is committed yet (it may still roll back),
        // so leave it to the log.
        if !outerTransaction { applyCommitted(changes, before: before, after: after) }
        return result
    }

    /// Writes a batch all-or-nothing: validated completely first, then one transaction.
    ///
    /// - Returns: the id of each row, in order.
    @discardableResult
    func write(_ rows: [PendingRow], mode: WriteMode) throws -> [Int64] {
        guard !rows.isEmpty else { return [] }
        try validate(rows: rows, mode: mode)
        let t = schema.table
        let sql: String
        switch mode {
        case .insert:
            sql = "INSERT INTO \(t)(id, content, source, metadata, embedding) VALUES (?, ?, ?, ?, ?)"
        case .upsert:
            sql = """
                INSERT INTO \(t)(id, content, source, metadata, embedding) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(id) DO UPDATE SET content = excluded.content, source = excluded.source,
                    metadata = excluded.metadata, embedding = excluded.embedding,
                    updated_at = \(CollectionSchema.now)
                """
        case .update:
            sql = """
                UPDATE \(t) SET content = ?2, source = ?3, metadata = ?4, embedding = ?5,
                    updated_at = \(CollectionSchema.now) WHERE id = ?1
                """
        }
        return try write { changes in
            let statement = try connection.cachedStatement(sql)
            var ids: [Int64] = []
            ids.reserveCapacity(rows.count)
            for row in rows {
                statement.reset()
                if let id = row.id { try statement.bind(id, at: 1) } else { try statement.bindNull(at: 1) }
                try statement.bind(row.content, at: 2)
                try statement.bind(row.source, at: 3)
                if let metadata = row.metadata { try statement.bind(metadata, at: 4) } else { try statement.bindNull(at: 4) }
                if let vector = row.vector {
                    try vector.withUnsafeBytes { try statement.bind(bytes: $0, at: 5) }
                } else {
                    try statement.bindNull(at: 5)
                }
                do {
                    while try statement.step() {}
                } catch let error as SQLiteError where error.extendedCode == .constraintPrimaryKey {
                    throw TroveError.duplicateID(row.id ?? -1)
                }
                let id: Int64
                if mode == .update {
                    id = row.id!
                    guard connection.changes > 0 else { throw TroveError.rowNotFound(id: id) }
                } else {
                    id = row.id ?? connection.lastInsertRowID
                }
                ids.append(id)
                if let vector = row.vector { changes.append(.upsert(id, vector)) } else { changes.append(.remove(id)) }
            }
            return ids
        }
    }

    /// Deletes one row; returns whether it existed.
    func delete(id: Int64) throws -> Bool {
        try write { changes in
            try connection.execute("DELETE FROM \(schema.table) WHERE id = ?", [.integer(id)])
            let deleted = connection.changes > 0
            if deleted { changes.append(.remove(id)) }
            return deleted
        }
    }

    /// Deletes every row with this source; returns how many.
    func delete(source: String) throws -> Int {
        try write { changes in
            let rows = try connection.query("DELETE FROM \(schema.table) WHERE source = ? RETURNING id", [.text(source)])
            for row in rows { changes.append(.remove(row.int64(at: 0)!)) }
            return rows.count
        }
    }

    /// Deletes every row; returns how many.
    func deleteAll() throws -> Int {
        try write { changes in
            try connection.execute("DELETE FROM \(schema.table)")
            changes.append(.removeAll)
            return connection.changes
        }
    }
}
