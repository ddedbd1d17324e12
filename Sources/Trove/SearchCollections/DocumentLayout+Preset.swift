import Foundation
import TroveSQLite

/// A search collection (``Collection``) is one preset schema of the document engine: its table
/// `id, _version, content, source, metadata, embedding, created_at, updated_at` (then
/// `embedding_2`, … for each further model, and an internal
/// `_rowid` when ids are UUIDs or strings), its change log, text index and snapshots are made by
/// ``DocumentLayout`` like any document collection's (since format 4; older files are moved on
/// open, SearchCollectionTable+Upgrade.swift), so its filters, unranked queries, aggregates,
/// patches, deletes by filter and transactions run through ``DocumentStore`` too.
///
/// What the preset adds to the document rules, and all it adds: automatic timestamps
/// (`created_at` and `updated_at` are set by Trove, ignored in written documents; `updated_at`
/// moves on every update) and the metadata rule (`metadata` is a JSON object within the
/// collection's byte limit).
extension DocumentSchema {
    /// A search collection's row shape. The fields Trove sets itself come last.
    static func preset(_ configuration: CollectionConfiguration) -> DocumentSchema {
        DocumentSchema(
            id: configuration.ids,
            fields: [
                .text("content"), .text("source", default: "", indexed: true),
                .json("metadata", optional: true),
                .vector(
                    "embedding", dimension: configuration.dimension, metric: configuration.metric,
                    optional: true),
                .real("created_at"), .real("updated_at"),
            ]
                // After the timestamps: where `ALTER TABLE ADD COLUMN` puts them.
                + zip(configuration.vectorFields.dropFirst(), configuration.additionalEmbeddings)
                .map { name, model in
                    .vector(
                        name, dimension: model.dimension, metric: configuration.metric,
                        optional: true)
                },
            fullText: configuration.lexicalSearch
                ? FullTextDefinition(fields: ["content"], tokenizer: configuration.tokenizer) : nil,
            vectorIndexes: Dictionary(
                uniqueKeysWithValues: configuration.vectorFields.map { ($0, configuration.index) }))
    }
}

extension DocumentLayout {
    /// The layout of a search collection's table.
    init(preset name: String, configuration: CollectionConfiguration) {
        self.init(name: name, schema: .preset(configuration), preset: configuration)
    }

    /// The SQL default of a field Trove sets itself: the time of the write.
    func automaticDefault(_ field: FieldDefinition) -> String? {
        automaticFields.contains(field.name) ? CollectionSchema.now : nil
    }

    /// The column check of the metadata rule (a JSON object; `json_type` only of valid JSON,
    /// since it raises an error on anything else), or nil for every other column.
    func presetCheck(_ field: FieldDefinition, column c: String) -> String? {
        guard preset != nil, field.name == "metadata" else { return nil }
        return "CASE WHEN json_valid(\(c)) THEN json_type(\(c)) = 'object' ELSE 0 END"
    }

    /// Fields whose values Trove sets itself: writes skip them.
    var automaticFields: Set<String> { preset == nil ? [] : ["created_at", "updated_at"] }

    /// Assignments every update of a row also makes.
    var updateTouches: [String] {
        preset == nil ? [] : ["\"updated_at\" = \(CollectionSchema.now)"]
    }

    /// A search collection's own rule for a written document: its metadata is a JSON object
    /// whose text is within the byte limit (checked again before writes, PresetRows.swift).
    ///
    /// - Throws: ``TroveError/invalidMetadata(reason:)``, ``TroveError/metadataTooLarge(limit:actual:)``.
    func checkPreset(metadata value: Value?) throws {
        guard let preset, let value, !value.isNull else { return }
        guard case .object = value else {
            throw TroveError.invalidMetadata(
                reason: "metadata must be a JSON object, got \(value.description)")
        }
        let size = try JSONCoding.text(value, field: "metadata").utf8.count
        guard size <= preset.metadataByteLimit else {
            throw TroveError.metadataTooLarge(limit: preset.metadataByteLimit, actual: size)
        }
    }
}

extension DocumentStore {
    /// Before a patch of a search collection's metadata: the new text (`metadata`, an SQL
    /// expression over the stored row) is within the byte limit. The table's CHECK keeps it a
    /// JSON object.
    func checkPresetMetadataSize(_ metadata: SQLFragment, id: DocumentID, on connection: Connection)
        throws
    {
        guard let preset = layout.preset else { return }
        var sql = SQLFragment(sql: "SELECT length(CAST(")
        sql.append(metadata)
        sql.append(" AS BLOB)) FROM \(layout.table) WHERE \"id\" = ")
        sql.bind(id.sqlValue)
        let size = try connection.prepare(sql.sql).rows(sql.bindings).first?.int64(at: 0) ?? 0
        guard size <= Int64(preset.metadataByteLimit) else {
            throw TroveError.metadataTooLarge(limit: preset.metadataByteLimit, actual: Int(size))
        }
    }
}
