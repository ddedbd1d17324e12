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
    /// commit since (the writer never waits for searches). `body` writes through the document
    /// view, whose every write prunes the change log when it grows long.
    func write<T>(_ body: () throws -> T) throws -> T {
        let outerTransaction = connection.isInTransaction
        let result = try connection.transaction(.immediate, body)
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

    /// Writes a batch all-or-nothing: validated completely first (vectors, metadata, ids within
    /// the batch), then one transaction through the document engine's write path for the preset
    /// schema (``DocumentStore/write(rows:mode:on:document:)``: bulk and multi-row statements for
    /// the full-text index, the same statements every document collection uses).
    ///
    /// - Returns: the id of each row, in order.
    @discardableResult
    func write(_ rows: [PendingRow], mode: WriteMode) throws -> [Int64] {
        guard !rows.isEmpty else { return [] }
        try validate(rows: rows, mode: mode)
        let store = try state.documentStore()
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
            let batch = PresetRows(rows: rows)
            do {
                if mode == .update {
                    for (i, row) in rows.enumerated() {
                        try store.update(row: batch.values(i), id: .int(row.id!), ifVersion: nil, on: connection) { Document(id: .int(row.id!)) }
                    }
                } else {
                    try store.write(batch, mode: mode, on: connection) { Document(id: .int(rows[$0].id!)) }
                }
            } catch TroveError.duplicateDocumentID(.int(let id)) {
                throw TroveError.duplicateID(id)
            } catch TroveError.documentNotFound(.int(let id)) {
                throw TroveError.rowNotFound(id: id)
            }
            return rows.map { $0.id! }
        }
    }

    /// Validated rows (ids assigned) in the preset's write columns: id, content, source, metadata
    /// (its JSON text as given), embedding; bound straight from the rows.
    private struct PresetRows: RowSource {
        let rows: [PendingRow]
        var count: Int { rows.count }

        func bind(_ i: Int, to statement: Statement, at first: Int) throws {
            let row = rows[i]
            try statement.bind(row.id!, at: first)
            try statement.bind(row.content, at: first + 1)
            try statement.bind(row.source, at: first + 2)
            if let metadata = row.metadata { try statement.bind(metadata, at: first + 3) } else { try statement.bindNull(at: first + 3) }
            if let vector = row.vector {
                try vector.withUnsafeBytes { try statement.bind(bytes: $0, at: first + 4) }
            } else {
                try statement.bindNull(at: first + 4)
            }
        }

        func values(_ i: Int) -> [SQLValue] {
            let row = rows[i]
            return [
                .integer(row.id!), .text(row.content), .text(row.source), row.metadata.map(SQLValue.text) ?? .null,
                row.vector.map { .blob(VectorBlob.bytes($0)) } ?? .null,
            ]
        }
    }

    /// Deletes one row; returns whether it existed.
    func delete(id: Int64) throws -> Bool {
        let store = try state.documentStore()
        return try write { try store.delete(ids: [.int(id)], on: connection) > 0 }
    }

    /// Deletes every row with this source; returns how many.
    func delete(source: String) throws -> Int {
        let store = try state.documentStore()
        return try write { try store.delete(where: Field("source") == .string(source), on: connection) }
    }

    /// Deletes every row; returns how many.
    func deleteAll() throws -> Int {
        let store = try state.documentStore()
        return try write { try store.delete(where: .all, on: connection) }
    }
}
