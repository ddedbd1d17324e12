import Foundation
import TroveSQLite
import TroveVectors

/// A search collection's row to write, its id nil when Trove assigns it.
struct PendingRow {
    var id: DocumentID?
    var content: String
    var source: String
    var metadata: String?
    var vector: [Float]?
    /// The further models' vectors (`embedding_2`, …), in order; empty when the collection has
    /// one model.
    var additionalVectors: [[Float]]

    init(
        id: DocumentID?, content: String, source: String, metadata: String?, vector: [Float]?,
        additionalVectors: [[Float]] = []
    ) {
        self.id = id
        self.content = content
        self.source = source
        self.metadata = metadata
        self.vector = vector
        self.additionalVectors = additionalVectors
    }

    /// The row of `entry`: no id when it is unassigned (the write chooses one).
    init(_ entry: VectorEntry) {
        self.init(
            id: entry.id == .unassigned ? nil : entry.id, content: entry.content,
            source: entry.source, metadata: entry.metadata, vector: entry.vector,
            additionalVectors: entry.additionalVectors)
    }
}

/// Validated rows (ids assigned) in the preset's write columns: id, content, source, metadata
/// (its JSON text exactly as given), embedding, then `embedding_2`, … (`models - 1` of them);
/// bound straight from the rows.
struct PresetRows: RowSource {
    let rows: [PendingRow]
    /// How many vector fields the collection has.
    let models: Int
    var count: Int { rows.count }

    func bind(_ i: Int, to statement: Statement, at first: Int) throws {
        let row = rows[i]
        switch row.id! {
        case .int(let id): try statement.bind(id, at: first)
        case .uuid(let id): try statement.bind(id.uuidString.lowercased(), at: first)
        case .string(let id): try statement.bind(id, at: first)
        }
        try statement.bind(row.content, at: first + 1)
        try statement.bind(row.source, at: first + 2)
        if let metadata = row.metadata {
            try statement.bind(metadata, at: first + 3)
        } else {
            try statement.bindNull(at: first + 3)
        }
        for field in 0..<models {
            if let vector = field == 0 ? row.vector : row.additionalVectors[field - 1] {
                try vector.withUnsafeBytes { try statement.bind(bytes: $0, at: first + 4 + field) }
            } else {
                try statement.bindNull(at: first + 4 + field)
            }
        }
    }

    func values(_ i: Int) -> [SQLValue] {
        let row = rows[i]
        return [
            row.id!.sqlValue, .text(row.content), .text(row.source),
            row.metadata.map(SQLValue.text) ?? .null,
            row.vector.map { .blob(VectorBlob.bytes($0)) } ?? .null,
        ] + row.additionalVectors.map { .blob(VectorBlob.bytes($0)) }
    }

    /// The entries with these ids, in the order given (missing ids left out). Metadata comes back
    /// as the text that was written, not re-encoded.
    static func read(ids: [DocumentID], from store: DocumentStore, on connection: Connection) throws
        -> [VectorEntry]
    {
        let rows = try read(
            keys: ids.map(\.sqlValue), by: "\"id\"", from: store, vectors: true, on: connection)
        return ids.compactMap { rows[$0.sqlValue] }
    }

    /// The entries of these internal row ids (what the ranked pipeline returns), by row id.
    /// Without `vectors` (search results, which carry none) the entries' vectors are empty and
    /// the blobs are never read.
    static func read(
        rids: [Int64], from store: DocumentStore, vectors: Bool, on connection: Connection
    ) throws
        -> [Int64: VectorEntry]
    {
        let rows = try read(
            keys: rids.map(SQLValue.integer), by: store.layout.rid, from: store, vectors: vectors,
            on: connection)
        var byRid: [Int64: VectorEntry] = [:]
        byRid.reserveCapacity(rows.count)
        for (key, entry) in rows { if case .integer(let rid) = key { byRid[rid] = entry } }
        return byRid
    }

    /// The entries whose `column` (the id or the row id) is one of `keys`, by key.
    private static func read(
        keys: [SQLValue], by column: String, from store: DocumentStore, vectors: Bool,
        on connection: Connection
    ) throws -> [SQLValue: VectorEntry] {
        guard !keys.isEmpty else { return [:] }
        let kind = store.schema.id
        let vectorFields = vectors ? store.preset.vectorFields : []
        let vectorColumns = vectorFields.map { ", \"\($0)\"" }.joined()
        let statement = try connection.cachedStatement(
            "SELECT \(column), id, content, source, metadata\(vectorColumns) FROM \(store.layout.table) WHERE \(column) IN (SELECT value FROM json_each(?))"
        )
        // Keys are all integers (row ids, Int64 ids: the common case, built without a JSON
        // encoder) or all text (UUID and String ids, as stored).
        let integers = keys.compactMap(\.int64Value)
        let list =
            integers.count == keys.count
            ? SQLFragment.jsonArray(integers)
            : try JSONCoding.text(.array(keys.map { .string($0.stringValue ?? "") }), field: "id")
        var byKey: [SQLValue: VectorEntry] = [:]
        byKey.reserveCapacity(keys.count)
        try statement.forEachRow([.text(list)]) { row in
            guard let id = DocumentID.read(row.value(at: 1), kind: kind) else { return }
            func vector(at column: Int) -> [Float] {
                row.withBlob(at: column) { bytes in
                    bytes.map { Array($0.bindMemory(to: Float.self)) }
                } ?? []
            }
            byKey[row.value(at: 0)] = VectorEntry(
                id: id, content: row.string(at: 2) ?? "", source: row.string(at: 3) ?? "",
                metadata: row.string(at: 4), vector: vectors ? vector(at: 5) : [],
                additionalVectors: vectorFields.indices.dropFirst().map { vector(at: 5 + $0) })
        }
        return byKey
    }
}

extension DocumentStore {
    /// The preset configuration of a search collection's store.
    var preset: CollectionConfiguration { layout.preset! }

    // MARK: Validation (Swift checks before the first write; metadata JSON by the CHECK constraint)

    private static func validate(vector: [Float], dimension: Int, cosine: Bool) throws {
        guard vector.count == dimension else {
            throw TroveError.dimensionMismatch(expected: dimension, actual: vector.count)
        }
        if let bad = vector.firstIndex(where: { !$0.isFinite }) {
            throw TroveError.invalidVector(
                reason: "component \(bad) is \(vector[bad]); every component must be finite")
        }
        if cosine, vector.allSatisfy({ $0 == 0 }) {
            throw TroveError.invalidVector(
                reason:
                    "every component is zero; a zero vector has no direction, so cosine similarity is undefined"
            )
        }
    }

    /// A row carries one vector per further model, each of its model's dimension.
    ///
    /// - Throws: ``TroveError/invalidVector(reason:)``, ``TroveError/dimensionMismatch(expected:actual:)``.
    private func validate(additionalVectors: [[Float]], of configuration: CollectionConfiguration)
        throws
    {
        let models = configuration.additionalEmbeddings
        guard additionalVectors.count == models.count else {
            throw TroveError.invalidVector(
                reason:
                    "the collection has \(models.count) further models; the entry carries \(additionalVectors.count) further vectors"
            )
        }
        for (vector, model) in zip(additionalVectors, models) {
            try Self.validate(
                vector: vector, dimension: model.dimension,
                cosine: configuration.metric == .cosine)
        }
    }

    func validatePreset(metadata: String?, on connection: Connection) throws {
        guard let metadata else { return }
        let size = metadata.utf8.count
        guard size <= preset.metadataByteLimit else {
            throw TroveError.metadataTooLarge(limit: preset.metadataByteLimit, actual: size)
        }
        // SQLite's own JSON parser decides, so validation agrees exactly with the CHECK constraint.
        let type = try connection.scalar(
            "SELECT CASE WHEN json_valid(?1) THEN json_type(?1) ELSE NULL END", [.text(metadata)])
        guard let type = type?.stringValue else {
            throw TroveError.invalidMetadata(reason: "the text is not valid JSON")
        }
        guard type == "object" else {
            throw TroveError.invalidMetadata(reason: "got a JSON \(type)")
        }
    }

    /// An entry's id is of the collection's kind, as a document's must be.
    ///
    /// - Throws: ``TroveError/typeMismatch(field:expected:value:)``, ``TroveError/invalidValue(field:reason:)``.
    func validatePreset(id: DocumentID) throws {
        guard id.kind == schema.id else {
            throw TroveError.typeMismatch(
                field: "id", expected: "\(schema.id) id", value: id.description)
        }
        if case .string(let text) = id, text.isEmpty {
            throw TroveError.invalidValue(field: "id", reason: "a string id cannot be empty")
        }
    }

    /// Checks everything Swift can check (vectors, metadata sizes, ids, duplicates in the batch)
    /// and throws the first fault in row order, exactly as checking each row in turn would.
    ///
    /// Whether metadata is a JSON object is left to the table's CHECK constraint, which runs on
    /// every write anyway: asking SQLite beforehand parsed each row's metadata twice more (about
    /// 3% of a batch insert's time). SQLite is asked only when something fails: here, for rows
    /// up to the fault (a row's metadata is checked before its id); after a failed write, by
    /// ``rethrowingMetadataFault(of:on:_:)``.
    func validatePreset(rows: [PendingRow], mode: WriteMode, on connection: Connection) throws {
        // Read once: each look through `preset` copies the configuration.
        let configuration = preset
        let cosine = configuration.metric == .cosine
        var seen = Set<DocumentID>()
        seen.reserveCapacity(rows.count)
        for (index, row) in rows.enumerated() {
            var metadataChecked = false
            do {
                if let vector = row.vector {
                    try Self.validate(
                        vector: vector, dimension: configuration.dimension, cosine: cosine)
                }
                try validate(additionalVectors: row.additionalVectors, of: configuration)
                if let metadata = row.metadata,
                    metadata.utf8.count > configuration.metadataByteLimit
                {
                    try validatePreset(metadata: metadata, on: connection)
                }
                metadataChecked = true
                if let id = row.id {
                    try validatePreset(id: id)
                    if !seen.insert(id).inserted, mode == .insert {
                        throw TroveError.duplicateDocumentID(id)
                    }
                }
            } catch {
                let checked = metadataChecked ? rows[...index] : rows[..<index]
                if let bad = try firstInvalidMetadata(in: checked, on: connection) {
                    try validatePreset(metadata: rows[bad].metadata, on: connection)
                }
                throw error
            }
        }
    }

    /// Runs a batch's write; when it fails, throws the metadata fault of the batch's first row
    /// whose metadata is not a JSON object, if any (the error validation would have thrown
    /// before writing), else the write's own error.
    func rethrowingMetadataFault<T>(
        of rows: [PendingRow], on connection: Connection, _ write: () throws -> T
    ) throws
        -> T
    {
        do {
            return try write()
        } catch {
            if let bad = try? firstInvalidMetadata(in: rows[...], on: connection) {
                try validatePreset(metadata: rows[bad].metadata, on: connection)
            }
            throw error
        }
    }

    /// Metadata strings checked per statement by `firstInvalidMetadata(in:on:)`.
    static let metadataPerValidation = 100

    /// The index of the first row whose metadata is not a JSON object, by SQLite's own parser
    /// (so the answer agrees with the table's CHECK constraint), or nil. One statement per
    /// ``metadataPerValidation`` rows instead of one per row.
    private func firstInvalidMetadata(in rows: ArraySlice<PendingRow>, on connection: Connection)
        throws -> Int?
    {
        let withMetadata = rows.indices.filter { rows[$0].metadata != nil }
        var start = 0
        while start < withMetadata.count {
            let chunk = withMetadata[
                start..<min(withMetadata.count, start + Self.metadataPerValidation)]
            let values = (0..<chunk.count).map { "(\($0), ?)" }.joined(separator: ", ")
            let statement = try connection.cachedStatement(
                """
                SELECT column1 FROM (VALUES \(values))
                WHERE (CASE WHEN json_valid(column2) THEN json_type(column2) END) IS NOT 'object'
                ORDER BY column1 LIMIT 1
                """)
            statement.reset()
            for (offset, index) in chunk.enumerated() {
                try statement.bind(rows[index].metadata!, at: offset + 1)
            }
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

    /// Writes a search collection's batch all-or-nothing, inside the caller's transaction:
    /// validated first (vectors, metadata sizes, ids within the batch; whether metadata is a JSON
    /// object by the table's CHECK constraint as the rows go in), then through the
    /// document engine's write path for the preset schema (``write(_:mode:on:document:)``: bulk
    /// and multi-row statements, the same statements every document collection uses).
    ///
    /// - Returns: the id of each row, in order.
    func writePreset(_ rows: [PendingRow], mode: WriteMode, on connection: Connection) throws
        -> [DocumentID]
    {
        try validatePreset(rows: rows, mode: mode, on: connection)
        var rows = rows
        if mode != .update {
            let missing = rows.indices.filter { rows[$0].id == nil }
            let explicit = rows.compactMap { row -> Int64? in
                if case .int(let id) = row.id { id } else { nil }
            }
            let fresh = try newIDs(missing.count, besides: explicit, on: connection)
            for (i, id) in zip(missing, fresh) { rows[i].id = id }
        }
        let batch = PresetRows(rows: rows, models: preset.vectorFields.count)
        try rethrowingMetadataFault(of: rows, on: connection) {
            if mode == .update {
                for (i, row) in rows.enumerated() {
                    try update(row: batch.values(i), id: row.id!, ifVersion: nil, on: connection) {
                        Document(id: row.id!)
                    }
                }
            } else {
                try write(batch, mode: mode, on: connection) { [rows] in Document(id: rows[$0].id!)
                }
            }
        }
        return rows.map { $0.id! }
    }
}
