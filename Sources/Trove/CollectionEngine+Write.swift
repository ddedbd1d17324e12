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
        // Metadata is checked by SQLite in bulk first; the row loop below then reports the first
        // bad row in order, exactly as checking each row in turn would.
        let firstBadMetadata = try firstInvalidMetadata(in: rows)
        var seen = Set<Int64>()
        seen.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            if let vector = row.vector { try validate(vector: vector) }
            if let metadata = row.metadata, metadata.utf8.count > configuration.metadataByteLimit || index == firstBadMetadata {
                try validate(metadata: metadata)
            }
            if let id = row.id, !seen.insert(id).inserted, mode == .insert { throw TroveError.duplicateID(id) }
        }
    }

    /// Metadata strings checked per statement by ``firstInvalidMetadata(in:)``.
    static let metadataPerValidation = 100

    /// The index of the first row whose metadata is not a JSON object, by SQLite's own parser
    /// (so the answer agrees with the table's CHECK constraint), or nil. One statement per
    /// ``metadataPerValidation`` rows instead of one per row: per-row checks were about 4% of a
    /// batch insert's time.
    private func firstInvalidMetadata(in rows: [PendingRow]) throws -> Int? {
        let withMetadata = rows.indices.filter { rows[$0].metadata != nil }
        var start = 0
        while start < withMetadata.count {
            let chunk = withMetadata[start..<min(withMetadata.count, start + Self.metadataPerValidation)]
            let values = (0..<chunk.count).map { "(\($0), ?)" }.joined(separator: ", ")
            let statement = try connection.cachedStatement(
                """
                SELECT column1 FROM (VALUES \(values))
                WHERE (CASE WHEN json_valid(column2) THEN json_type(column2) END) IS NOT 'object'
                ORDER BY column1 LIMIT 1
                """)
            statement.reset()
            for (offset, index) in chunk.enumerated() { try statement.bind(rows[index].metadata!, at: offset + 1) }
            if try statement.step() {
                let offset = Int(statement.int64(at: 0))
                statement.reset()
                return chunk[chunk.startIndex + offset]
            }
            statement.reset()
            start += Self.metadataPerValidation
        }
        return nil
    }

    // MARK: Writing

    /// Runs `body` in an IMMEDIATE transaction, then brings the built in-memory indexes up to
    /// what it committed (the one catch-up of ``DerivedIndexSet``) when no search holds them, so
    /// the next search finds them current; otherwise the next search catches up, once for every
    /// commit since (the writer never waits for searches). Prunes the change log when it grows long.
    func write<T>(_ body: () throws -> T) throws -> T {
        let outerTransaction = connection.isInTransaction
        let result = try connection.transaction(.immediate) {
            let result = try body()
            try pruneLogIfNeeded(maxSeq: try logState().maxSeq)
            return result
        }
        // Inside someone else's transaction nothing is committed yet (it may still roll back),
        // so leave it to the log.
        if !outerTransaction {
            state.indexes.catchUpAfterCommit(connection)
            autosaveANNIfNeeded()
        }
        // Also inside someone else's transaction: a merge attempted before it commits finds the
        // write lock taken and tries again after the next quiet period.
        if configuration.lexicalSearch { merger?.noteWrite(fts: schema.fts) }
        return result
    }

    /// Rows per multi-row INSERT statement (5 bindings each: 2,500, below SQLite's 32,766 limit).
    ///
    /// Why multi-row: the FTS5 shipped with SQLite before 3.44 flushes its pending terms to disk
    /// on every statement savepoint, and an INSERT whose triggers write other tables opens one.
    /// One statement per row therefore wrote one FTS5 segment per row (about 4x slower inserts,
    /// measured); one statement per 500 rows writes one segment per 500 rows.
    static let rowsPerStatement = 500

    /// Smallest batch that takes the bulk path (``bulkInsert(_:)``). Smaller batches go through
    /// the triggers: the bulk path changes the schema (drops and recreates two triggers), which
    /// makes this and every other connection re-prepare its statements, a fixed cost that a few
    /// rows do not repay. Collections without lexical search keep the triggers too: the log
    /// trigger alone is cheap (measured: the bulk path saved nothing there).
    static let bulkInsertMinimumRows = 64

    /// Writes a batch all-or-nothing: validated completely first, then one transaction.
    ///
    /// - Returns: the id of each row, in order.
    @discardableResult
    func write(_ rows: [PendingRow], mode: WriteMode) throws -> [Int64] {
        guard !rows.isEmpty else { return [] }
        try validate(rows: rows, mode: mode)
        return try write {
            var rows = rows
            if mode != .update, rows.contains(where: { $0.id == nil }) {
                // Assign ids the way SQLite would (max + 1), under the write lock, so a batch can
                // go through multi-row statements and still report its ids in order.
                let tableMax = try connection.scalar("SELECT max(id) FROM \(schema.table)")?.int64Value ?? 0
                let highest = max(tableMax, rows.compactMap(\.id).max() ?? 0)
                let needed = Int64(rows.count { $0.id == nil })
                // Data, not a bug, can put Int64.max in the table: refuse rather than overflow.
                guard highest <= Int64.max - needed else {
                    throw TroveError.invalidConfiguration(
                        "no free ids above \(highest); insert these rows with explicit ids")
                }
                var next = highest + 1
                for i in rows.indices where rows[i].id == nil {
                    rows[i].id = next
                    next += 1
                }
            }
            if mode == .update {
                try update(rows)
            } else if mode == .insert, configuration.lexicalSearch, rows.count >= Self.bulkInsertMinimumRows {
                try bulkInsert(rows)
            } else {
                try insertChunks(rows, upsert: mode == .upsert)
            }
            return rows.map { $0.id! }
        }
    }

    private func insertChunks(_ rows: [PendingRow], upsert: Bool) throws {
        var start = 0
        while start < rows.count {
            let end = min(rows.count, start + Self.rowsPerStatement)
            try insert(rows[start..<end], upsert: upsert)
            start = end
        }
    }

    /// Inserts new rows (ids already assigned) with the insert triggers out of the way, then
    /// writes the change log and the FTS5 index for the whole batch in one statement each.
    ///
    /// How: inside this write transaction, the two insert triggers are dropped, the rows inserted,
    /// the log and FTS5 rows written in bulk, and the triggers recreated from their own stored
    /// SQL before the transaction (or the caller's savepoint) ends. DDL is transactional: no
    /// other connection or process ever sees the table without its triggers (they read the last
    /// committed state, and the write lock keeps other writers out), a failure anywhere rolls the
    /// drop back with everything else, and raw SQL, from anywhere, always fires the triggers.
    ///
    /// Why: with the triggers, every row ran two trigger programs inside a statement that needs a
    /// statement journal, and FTS5 (before SQLite 3.44) flushed its pending terms as a new segment
    /// at each multi-row statement. Here the table inserts need no statement journal, and the
    /// batch becomes one FTS5 segment written in rowid order (FTS5 also flushes whenever a rowid
    /// goes down). Measured: about 12% fewer instructions per row for the same SQL work
    /// (BENCHMARKS.md, "Batch insert"). The cost: the schema cookie changes with each batch, so
    /// this and other connections re-prepare their statements once after it.
    private func bulkInsert(_ rows: [PendingRow]) throws {
        let names = schema.insertTriggerNames
        let triggers = try connection.query(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN (?, ?) ORDER BY name",
            names.map { .text($0) })
        for trigger in triggers {
            try connection.execute(script: "DROP TRIGGER \"\(trigger.string(at: 0)!)\"")
        }
        try insertOneByOne(rows)
        let ids = SQLValue.text(Self.jsonArray(rows.map { $0.id! }))
        try connection.execute("INSERT INTO \(schema.log)(id, op) SELECT value, 1 FROM json_each(?)", [ids])
        // Only collections with lexical search take this path (see bulkInsertMinimumRows).
        try connection.execute(
            """
            INSERT INTO \(schema.fts)(rowid, content)
            SELECT id, content FROM \(schema.table) WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id
            """, [ids])
        for trigger in triggers { try connection.execute(script: trigger.string(at: 1)!) }
    }

    /// Inserts rows with one single-row statement, stepped once per row. Used when no trigger
    /// fires (the bulk path): then nothing flushes per statement, and after the bulk path's
    /// schema change SQLite re-prepares this short statement instead of a 500-row one (that
    /// re-parse was about 10% of a 1,000-row batch, measured with perf).
    private func insertOneByOne(_ rows: [PendingRow]) throws {
        let statement = try connection.cachedStatement(
            "INSERT INTO \(schema.table)(id, content, source, metadata, embedding) VALUES (?, ?, ?, ?, ?)")
        for row in rows {
            statement.reset()
            try bind(row, to: statement, at: 1)
            do {
                while try statement.step() {}
            } catch let error as SQLiteError where error.extendedCode == .constraintPrimaryKey {
                throw TroveError.duplicateID(row.id!)
            }
        }
    }

    private func insert(_ rows: ArraySlice<PendingRow>, upsert: Bool) throws {
        var sql = "INSERT INTO \(schema.table)(id, content, source, metadata, embedding) VALUES "
        sql += repeatElement("(?, ?, ?, ?, ?)", count: rows.count).joined(separator: ", ")
        if upsert {
            sql += """
                 ON CONFLICT(id) DO UPDATE SET content = excluded.content, source = excluded.source,
                metadata = excluded.metadata, embedding = excluded.embedding, updated_at = \(CollectionSchema.now),
                "_version" = "_version" + 1
                """
        }
        let statement = try connection.cachedStatement(sql)
        var index = 1
        for row in rows {
            try bind(row, to: statement, at: index)
            index += 5
        }
        do {
            while try statement.step() {}
        } catch let error as SQLiteError where error.extendedCode == .constraintPrimaryKey {
            // Ids within the batch were checked to be distinct, and the failed statement was rolled
            // back, so any of its ids still present in the table is the culprit.
            let existing = try connection.scalar(
                "SELECT id FROM \(schema.table) WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id LIMIT 1",
                [.text(Self.jsonArray(rows.map { $0.id! }))])
            throw TroveError.duplicateID(existing?.int64Value ?? rows.first!.id!)
        }
    }

    private func update(_ rows: [PendingRow]) throws {
        let statement = try connection.cachedStatement(
            """
            UPDATE \(schema.table) SET content = ?2, source = ?3, metadata = ?4, embedding = ?5,
                updated_at = \(CollectionSchema.now), "_version" = "_version" + 1 WHERE id = ?1
            """)
        for row in rows {
            statement.reset()
            try bind(row, to: statement, at: 1)
            while try statement.step() {}
            guard connection.changes > 0 else { throw TroveError.rowNotFound(id: row.id!) }
        }
    }

    private func bind(_ row: PendingRow, to statement: Statement, at index: Int) throws {
        try statement.bind(row.id!, at: index)
        try statement.bind(row.content, at: index + 1)
        try statement.bind(row.source, at: index + 2)
        if let metadata = row.metadata { try statement.bind(metadata, at: index + 3) } else { try statement.bindNull(at: index + 3) }
        if let vector = row.vector {
            try vector.withUnsafeBytes { try statement.bind(bytes: $0, at: index + 4) }
        } else {
            try statement.bindNull(at: index + 4)
        }
    }

    /// Deletes one row; returns whether it existed.
    func delete(id: Int64) throws -> Bool {
        try write {
            try connection.execute("DELETE FROM \(schema.table) WHERE id = ?", [.integer(id)])
            return connection.changes > 0
        }
    }

    /// Deletes every row with this source; returns how many.
    func delete(source: String) throws -> Int {
        try write {
            try connection.execute("DELETE FROM \(schema.table) WHERE source = ?", [.text(source)])
            return connection.changes
        }
    }

    /// Deletes every row; returns how many.
    func deleteAll() throws -> Int {
        try write {
            try connection.execute("DELETE FROM \(schema.table)")
            return connection.changes
        }
    }
}
