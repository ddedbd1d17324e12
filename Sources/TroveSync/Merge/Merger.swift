import Foundation
import Trove
import TroveSQLite

/// Applies remote change sets to this device: field-level last-writer-wins by the stamp
/// (cl, hlc, device), then writes the winners into the collection's table with plain SQL, so
/// every trigger-kept index (FTS5, R*Tree, B-trees) follows at once and every in-memory index
/// (BM25, flat and HNSW vectors, adjacency) follows through the change log. Vectors arrive as
/// data: nothing is re-embedded.
///
/// The merge state is `_trove_sync_records` (each record's causal length: the highest wins) and
/// `_trove_sync_fields` (each field's value with the highest stamp): a join semilattice, so
/// applying change sets in any order, any number of times, reaches the same state.
struct Merger {
    let connection: Connection
    let captured: [String: CapturedTable]
    let localSchemaVersion: Int
    /// Where rows new to this device go in batches (the collection's batch insert path); nil:
    /// one statement per row.
    var rowWriter: SyncRowWriter? = nil

    /// Rows new to this device, collected while a collection's records are merged and inserted
    /// together at the end.
    struct NewRows {
        let columns: [String]
        var rows: [[SQLValue]] = []
    }

    /// Why `set` cannot be applied here yet, or nil when it can.
    ///
    /// - Throws: ``SyncError/embeddingModelMismatch(collection:field:local:remote:)`` when its
    ///   vectors come from another embedding model.
    func check(_ set: ChangeSet) throws -> QueuedChangeSet.Reason? {
        if set.schemaVersion > localSchemaVersion {
            return .newerSchema(changeSet: set.schemaVersion, local: localSchemaVersion)
        }
        for collection in set.collections {
            guard let table = captured[collection.name] else {
                return .unknownCollection(collection.name)
            }
            let columns = Set(table.columns)
            for record in collection.records {
                for field in record.fields where !columns.contains(field.name) {
                    return .unknownField(collection: collection.name, field: field.name)
                }
            }
            for (field, local) in table.vectorFields {
                let remote = collection.manifests[field] ?? ""
                let localKey = manifestKey(local)
                if remote != localKey,
                    collection.records.contains(where: { $0.fields.contains { $0.name == field } })
                {
                    throw SyncError.embeddingModelMismatch(
                        collection: collection.name, field: field,
                        local: local.map(\.modelID) ?? "no named model",
                        remote: remote.isEmpty
                            ? "no named model" : String(remote.prefix { $0 != "|" }))
                }
            }
        }
        return nil
    }

    /// Applies `set`, sealed by `device`. Call inside a write transaction, after ``check(_:)``.
    func apply(_ set: ChangeSet, from device: String) throws {
        try connection.execute("UPDATE \(SyncTables.device) SET applying = 1")
        // Collections come in name order, so a reference (a `.reference` field, a `@Model`'s
        // to-one relationship) may arrive before the record it names, in this change set or a
        // later one of the batch: foreign keys are checked when the transaction commits (the
        // pragma ends with it).
        try connection.execute(script: "PRAGMA defer_foreign_keys = ON")
        for collection in set.collections {
            guard let table = captured[collection.name] else { continue }
            let materializer = Materializer(connection: connection, table: table)
            var batch: NewRows? = nil
            // A table with unique values takes rows one by one: each is checked against the rows
            // before it (``Materializer/admit(id:values:rowExists:)``).
            if let rowWriter, !table.isLinks, materializer.uniqueKeys.isEmpty {
                batch = NewRows(columns: try rowWriter.insertColumns(collection.name))
            }
            // Records this device has never seen (a first sync brings nothing else) merge in
            // bulk: every field wins and nothing can conflict.
            let fresh = batch == nil ? [] : try unseen(collection.records, of: table)
            for record in collection.records where !fresh.contains(record.id) {
                try apply(
                    record, of: table, from: device, materializer: materializer, batch: &batch)
            }
            if !fresh.isEmpty {
                try insertUnseen(
                    collection.records.filter { fresh.contains($0.id) }, of: table, from: device,
                    materializer: materializer,
                    batch: &batch)
            }
            if let rowWriter, let batch, !batch.rows.isEmpty {
                try rowWriter.insert(collection.name, rows: batch.rows)
            }
        }
        // The clock moves past everything seen, so a later local edit is stamped after it.
        try connection.execute(
            "UPDATE \(SyncTables.device) SET applying = 0, hlc = max(hlc, ?)",
            [.integer(set.maxHLC)])
    }

    private func apply(
        _ record: ChangeSet.Record, of table: CapturedTable, from device: String,
        materializer: Materializer,
        batch: inout NewRows?
    ) throws {
        let name = SQLValue.text(table.collection)
        let readRecord = try connection.cachedStatement(
            "SELECT cl FROM \(SyncTables.records) WHERE collection = ? AND id = ?")
        let localCL = try readRecord.rows([name, record.id]).first?.int64(at: 0)
        let newCL = max(localCL ?? 0, record.cl)
        let lifeChanged = localCL.map { record.cl > $0 } ?? true
        if lifeChanged {
            try connection.cachedStatement(
                """
                INSERT INTO \(SyncTables.records)(collection, id, cl) VALUES (?, ?, ?)
                ON CONFLICT(collection, id) DO UPDATE SET cl = excluded.cl
                """
            ).execute([name, record.id, .integer(newCL)])
        }
        var won: [(String, SQLValue)] = []
        if localCL == nil {
            // A record new here (the common case of a first sync): every field wins and nothing
            // can conflict, so the fields are written without reading them first.
            try insertNew(
                record, of: table, from: device, materializer: materializer, batch: &batch)
            return
        }
        let readField = try connection.cachedStatement(
            "SELECT cl, hlc, device, value FROM \(SyncTables.fields) WHERE collection = ? AND id = ? AND field = ?"
        )
        let writeField = try connection.cachedStatement(
            """
            INSERT INTO \(SyncTables.fields)(collection, id, field, cl, hlc, device, value, pending) VALUES (?, ?, ?, ?, ?, ?, ?, 0)
            ON CONFLICT(collection, id, field) DO UPDATE SET cl = excluded.cl, hlc = excluded.hlc, device = excluded.device,
                value = excluded.value, base_hlc = NULL, base_device = NULL, pending = 0
            """)
        for field in record.fields {
            let local = try readField.rows([name, record.id, .text(field.name)]).first
            if let local {
                let localStamp = Stamp(
                    cl: local.int64(at: 0) ?? 0, hlc: local.int64(at: 1) ?? 0,
                    device: local.string(at: 2) ?? "")
                let remoteStamp = Stamp(cl: field.cl, hlc: field.hlc, device: device)
                guard localStamp < remoteStamp else { continue }
                // A concurrent value (same life, another device, not the one the sender edited
                // over, and different) is overwritten: keep it as a conflict.
                let localValue = local[3]
                if localStamp.cl == field.cl, localStamp.device != device,
                    localValue != field.value,
                    field.baseHLC != localStamp.hlc || field.baseDevice != localStamp.device
                {
                    try connection.cachedStatement(
                        """
                        INSERT INTO \(SyncTables.conflicts)(collection, record, field, value, device, hlc, winner_device, winner_hlc)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                        """
                    ).execute([
                        name, record.id, .text(field.name), localValue, .text(localStamp.device),
                        .integer(localStamp.hlc),
                        .text(device), .integer(field.hlc),
                    ])
                }
            }
            try writeField.execute([
                name, record.id, .text(field.name), .integer(field.cl), .integer(field.hlc),
                .text(device), field.value,
            ])
            if field.cl == newCL { won.append((field.name, field.value)) }
        }
        try materializer.materialize(id: record.id, cl: newCL, lifeChanged: lifeChanged, won: won)
    }
}

extension Merger {
    /// The ids among `records` that this device has no life of (text ids only; others take the
    /// general path).
    fileprivate func unseen(_ records: [ChangeSet.Record], of table: CapturedTable) throws -> Set<
        SQLValue
    > {
        let ids = records.compactMap(\.id.stringValue)
        guard ids.count == records.count, !ids.isEmpty else { return [] }
        let list = String(decoding: try JSONSerialization.data(withJSONObject: ids), as: UTF8.self)
        let known = try connection.cachedStatement(
            "SELECT id FROM \(SyncTables.records) WHERE collection = ? AND id IN (SELECT value FROM json_each(?))"
        ).rows([.text(table.collection), .text(list)]).map { $0[0] }
        return Set(ids.map(SQLValue.text)).subtracting(known)
    }

    /// Merges records this device has never seen: their lives and fields in multi-row
    /// statements, their rows into `batch` (or one by one when incomplete or already there).
    fileprivate func insertUnseen(
        _ records: [ChangeSet.Record], of table: CapturedTable, from device: String,
        materializer: Materializer,
        batch: inout NewRows?
    ) throws {
        let name = SQLValue.text(table.collection)
        try insertRows(
            head: "INSERT INTO \(SyncTables.records)(collection, id, cl) VALUES ",
            tail: " ON CONFLICT(collection, id) DO UPDATE SET cl = max(cl, excluded.cl)",
            width: 3, rows: records.map { [name, $0.id, .integer($0.cl)] })
        try insertRows(
            head:
                "INSERT INTO \(SyncTables.fields)(collection, id, field, cl, hlc, device, value) VALUES ",
            tail: """
                 ON CONFLICT(collection, id, field) DO UPDATE SET cl = excluded.cl, hlc = excluded.hlc,
                    device = excluded.device, value = excluded.value, base_hlc = NULL, base_device = NULL, pending = 0
                WHERE (excluded.cl, excluded.hlc, excluded.device) > (cl, hlc, device)
                """,
            width: 7,
            rows: records.flatMap { record in
                record.fields.map {
                    [
                        name, record.id, .text($0.name), .integer($0.cl), .integer($0.hlc),
                        .text(device), $0.value,
                    ]
                }
            })
        let ids = records.compactMap(\.id.stringValue)
        let list = String(decoding: try JSONSerialization.data(withJSONObject: ids), as: UTF8.self)
        let existing = Set(
            try connection.cachedStatement(
                "SELECT \"id\" FROM \(table.table) WHERE \"id\" IN (SELECT value FROM json_each(?))"
            ).rows([.text(list)]).map { $0[0] })
        for record in records {
            let current = record.fields.filter { $0.cl == record.cl }.map { ($0.name, $0.value) }
            if record.cl % 2 == 1, let columns = batch?.columns, !existing.contains(record.id) {
                let values = Dictionary(current, uniquingKeysWith: { _, last in last })
                if columns.dropFirst().allSatisfy({ values[$0] != nil }) {
                    batch?.rows.append([record.id] + columns.dropFirst().map { values[$0]! })
                    continue
                }
            }
            try materializer.materializeNew(id: record.id, cl: record.cl, fields: current)
        }
    }

    /// Runs `head (?, ...), (?, ...) tail` over `rows`, up to 500 rows per statement.
    private func insertRows(head: String, tail: String, width: Int, rows: [[SQLValue]]) throws {
        let marks = "(" + repeatElement("?", count: width).joined(separator: ", ") + ")"
        var start = 0
        while start < rows.count {
            let end = min(rows.count, start + 500)
            let statement = try connection.cachedStatement(
                head + repeatElement(marks, count: end - start).joined(separator: ", ") + tail)
            try statement.execute(Array(rows[start..<end].joined()))
            start = end
        }
    }

    fileprivate func insertNew(
        _ record: ChangeSet.Record, of table: CapturedTable, from device: String,
        materializer: Materializer,
        batch: inout NewRows?
    ) throws {
        let name = SQLValue.text(table.collection)
        let writeField = try connection.cachedStatement(
            """
            INSERT INTO \(SyncTables.fields)(collection, id, field, cl, hlc, device, value, pending) VALUES (?, ?, ?, ?, ?, ?, ?, 0)
            ON CONFLICT(collection, id, field) DO UPDATE SET cl = excluded.cl, hlc = excluded.hlc, device = excluded.device,
                value = excluded.value, base_hlc = NULL, base_device = NULL, pending = 0
            WHERE (excluded.cl, excluded.hlc, excluded.device) > (cl, hlc, device)
            """)
        var current: [(String, SQLValue)] = []
        for field in record.fields {
            try writeField.execute([
                name, record.id, .text(field.name), .integer(field.cl), .integer(field.hlc),
                .text(device), field.value,
            ])
            if field.cl == record.cl { current.append((field.name, field.value)) }
        }
        // Every column known and no row yet: the row joins the batch insert.
        if record.cl % 2 == 1, let columns = batch?.columns {
            let values = Dictionary(current, uniquingKeysWith: { _, last in last })
            if columns.dropFirst().allSatisfy({ values[$0] != nil }),
                !(try materializer.rowExists(id: record.id))
            {
                batch?.rows.append([record.id] + columns.dropFirst().map { values[$0]! })
                return
            }
        }
        try materializer.materializeNew(id: record.id, cl: record.cl, fields: current)
    }
}

/// A field's stamp: ordered by life, then clock, then device id (a total order, so every device
/// picks the same winner).
struct Stamp: Comparable {
    var cl: Int64
    var hlc: Int64
    var device: String

    static func < (a: Stamp, b: Stamp) -> Bool {
        (a.cl, a.hlc, a.device) < (b.cl, b.hlc, b.device)
    }
}
