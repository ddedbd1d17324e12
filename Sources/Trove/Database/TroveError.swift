import Foundation
import TroveEmbeddings

/// An error from the Trove store. Each case carries what a person needs to fix the problem.
///
/// Failures of the file itself (disk full, locked, corrupt) surface as `SQLiteError` from
/// `TroveSQLite`, with SQLite's codes and the SQL that failed.
///
/// ```swift
/// do {
///     try await notes.insert(entry)
/// } catch TroveError.dimensionMismatch(let expected, let actual) {
///     print("model produced \(actual)-d vectors, collection holds \(expected)-d")
/// }
/// ```
public enum TroveError: Error, Hashable, Sendable {
    /// The collection exists with a different frozen configuration; nothing was changed.
    case schemaMismatch(collection: String, details: String)
    /// The collection was created with another embedding model; vectors would not be comparable.
    case embeddingMismatch(
        collection: String, stored: EmbeddingManifest, requested: EmbeddingManifest)
    /// A vector has the wrong number of components.
    case dimensionMismatch(expected: Int, actual: Int)
    /// A vector has NaN or infinite components, or is unusable under the metric (zero under cosine).
    case invalidVector(reason: String)
    /// Metadata is larger than the collection's byte limit.
    case metadataTooLarge(limit: Int, actual: Int)
    /// Metadata is not a JSON object.
    case invalidMetadata(reason: String)
    /// A raw FTS5 query is malformed.
    case invalidTextQuery(query: String, reason: String)
    /// A `where:` SQL fragment does not compile or fails to run.
    case invalidFilter(sql: String, reason: String)
    /// The collection was created with lexical search off.
    case lexicalSearchDisabled(collection: String)
    /// The collection has no embedder attached, so text cannot be embedded.
    case embedderRequired(collection: String)
    /// A limit (how many hits a ranked query returns) is outside `1...maximum`.
    case invalidLimit(Int, maximum: Int)
    /// A dimension must be at least 1 (and at most 65,536).
    case invalidDimension(Int)
    /// A collection or table name is not a plain SQL identifier or is reserved.
    case invalidName(String, reason: String)
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// No collection with this name exists in the file.
    case collectionNotFound(String)
    /// The file was written by a newer Trove.
    case unsupportedFormatVersion(found: Int, supported: Int)

    // Documents and queries.

    /// The field is not declared (and the collection keeps no undeclared fields).
    case unknownField(field: String, known: [String])
    /// The value's type does not fit the field.
    case typeMismatch(field: String, expected: String, value: String)
    /// A required field without a default is missing or null.
    case missingField(field: String)
    /// The value is of the right type but not acceptable (not finite, empty id, ...).
    case invalidValue(field: String, reason: String)
    /// A JSON path that Trove does not accept.
    case invalidPath(field: String, path: String, reason: String)
    /// Another document already has this id.
    case duplicateDocumentID(DocumentID)
    /// Another document already has this value in a unique field (or unique index).
    case uniqueViolation(field: String, value: String)
    /// A reference field names a document its target collection does not have; nothing written.
    case missingReference(field: String, value: String, collection: String)
    /// A delete was refused: the document is referenced through a `.deny` reference
    /// (`referencedBy` is `collection.field`, possibly reached through cascades); nothing deleted.
    case deleteDenied(collection: String, id: DocumentID, referencedBy: String)
    /// A reference field names a document collection that does not exist (yet).
    case referenceTargetNotFound(field: String, collection: String)
    /// The collection cannot be dropped while other collections reference it.
    case collectionReferenced(collection: String, by: [String])
    /// No document has this id.
    case documentNotFound(DocumentID)
    /// A compare-and-set update found another version.
    case versionConflict(id: DocumentID, expected: Int64, actual: Int64)
    /// A context's save found a model's row changed (or deleted) since the context read it:
    /// `fields` are the columns that differ from what the context read (empty when the row is
    /// gone). Nothing of that save was written.
    case modelConflict(model: String, id: DocumentID, fields: [String])
    /// A vector leg names a field that is not a vector field.
    case notVectorField(field: String, type: String)
    /// A text leg names a field outside the full-text index.
    case notTextField(field: String, fullTextFields: [String])
    /// sum/avg of a field that is not numeric.
    case notNumeric(field: String, aggregate: String)
    /// The cursor does not belong to this query.
    case invalidCursor(reason: String)
    /// The query's parts do not fit together.
    case invalidQuery(String)

    // Models.

    /// A model type cannot be stored as it is declared (its Codable shape or its options).
    case invalidModel(type: String, reason: String)
    /// A `#Predicate` or sort node that Trove cannot translate into SQL (it never falls back to
    /// filtering in memory).
    case unsupportedPredicate(node: String, reason: String)
    // Expiry and administration (backup, dump, load).

    /// An expiry was given for a collection whose schema does not allow expiry.
    case expiryDisabled(collection: String)
    /// A backup, dump or compaction target exists and overwriting was not asked for.
    case fileExists(path: String)
    /// A load needs an empty database; this one holds the named tables or collections.
    case databaseNotEmpty(objects: [String])
    /// A dump file is truncated, corrupt or of an unknown version; nothing was loaded.
    case invalidDump(line: Int, reason: String)
    /// A point's latitude is not in -90...90 or its longitude not in -180...180 (or one is not
    /// finite).
    case invalidPoint(field: String, latitude: Double, longitude: Double)
}

extension TroveError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .schemaMismatch(let collection, let details):
            "Collection '\(collection)' already exists with a different configuration (\(details)). "
                + "Open it with its stored configuration, or use a new collection name."
        case .embeddingMismatch(let collection, let stored, let requested):
            "Collection '\(collection)' holds vectors from \(stored.modelID) (\(stored.dimension)-d, "
                + "checksum \(stored.checksum.prefix(12))), not \(requested.modelID) "
                + "(\(requested.dimension)-d, checksum \(requested.checksum.prefix(12))). "
                + "Use the same model, or re-embed into a new collection."
        case .dimensionMismatch(let expected, let actual):
            "Vector has \(actual) components but the collection stores \(expected)-dimensional "
                + "vectors. Check that the embedding model matches the collection."
        case .invalidVector(let reason):
            "Invalid vector: \(reason)."
        case .metadataTooLarge(let limit, let actual):
            "Metadata is \(actual) bytes, over the collection's limit of \(limit) bytes. "
                + "Store large data in your own table and keep a reference in metadata."
        case .invalidMetadata(let reason):
            "Metadata must be a JSON object (like {\"page\": 3}): \(reason)."
        case .invalidTextQuery(let query, let reason):
            "Malformed full-text query \"\(query)\": \(reason). Quote words with special "
                + "characters, or use TextQuery.typed(_:) for text a person typed."
        case .invalidFilter(let sql, let reason):
            "The filter `\(sql)` is not valid SQL over id, content, source, metadata, created_at, "
                + "updated_at: \(reason). Pass values as ? with bindings."
        case .lexicalSearchDisabled(let collection):
            "Collection '\(collection)' was created with lexical search off, so text and hybrid "
                + "search are unavailable. Create the collection with lexicalSearch: true."
        case .embedderRequired(let collection):
            "Collection '\(collection)' has no embedder. Open it with an Embedder to add or "
                + "search text, or pass vectors yourself."
        case .invalidLimit(let k, let maximum):
            "limit must be between 1 and \(maximum); got \(k)."
        case .invalidDimension(let d):
            "Dimension must be between 1 and 65536; got \(d)."
        case .invalidName(let name, let reason):
            "Invalid name '\(name)': \(reason). Use letters, digits and underscores, starting with "
                + "a letter or underscore."
        case .invalidConfiguration(let reason):
            "Invalid configuration: \(reason)."
        case .collectionNotFound(let name):
            "No collection named '\(name)' in this database. Create it with a configuration first."
        case .unsupportedFormatVersion(let found, let supported):
            "This file uses Trove format version \(found); this build reads up to \(supported). "
                + "Update Trove to open it."
        case .unknownField(let field, let known):
            "No field named '\(field)'. Declared fields: \(known.joined(separator: ", "))."
        case .typeMismatch(let field, let expected, let value):
            "Field '\(field)' expects \(expected), got \(value)."
        case .missingField(let field):
            "Field '\(field)' is required and has no default; give it a value."
        case .invalidValue(let field, let reason):
            "Invalid value for '\(field)': \(reason)."
        case .invalidPath(let field, let path, let reason):
            "Invalid JSON path '\(path)' in '\(field)': \(reason). Write paths as $.name or $.list[0]."
        case .duplicateDocumentID(let id):
            "A document with id \(id) already exists (or appears twice in the batch). Use upsert to replace it."
        case .uniqueViolation(let field, let value):
            "Another document already has \(value) in the unique field '\(field)'."
        case .missingReference(let field, let value, let collection):
            "Field '\(field)' refers to \(value) in '\(collection)', which has no such document. "
                + "Write the referenced document first."
        case .deleteDenied(let collection, let id, let referencedBy):
            "Document \(id) of '\(collection)' is still referenced by \(referencedBy) (delete rule deny). "
                + "Delete or re-point those documents first."
        case .referenceTargetNotFound(let field, let collection):
            "Field '\(field)' references the document collection '\(collection)', which does not exist. "
                + "Create the referenced collection first."
        case .collectionReferenced(let collection, let by):
            "Collection '\(collection)' is referenced by \(by.joined(separator: ", ")); drop those first."
        case .documentNotFound(let id):
            "No document with id \(id)."
        case .versionConflict(let id, let expected, let actual):
            "Document \(id) is at version \(actual), not \(expected): someone changed it since you read it."
        case .modelConflict(let model, let id, let fields):
            fields.isEmpty
                ? "\(model) \(id) was deleted since this context read it; nothing was saved."
                : "\(model) \(id) was changed since this context read it (\(fields.joined(separator: ", "))); nothing was saved."
        case .notVectorField(let field, let type):
            "Field '\(field)' is a \(type) field, not a vector field."
        case .notTextField(let field, let fields):
            "Field '\(field)' is not in the full-text index (\(fields.joined(separator: ", ")))."
        case .notNumeric(let field, let aggregate):
            "\(aggregate) needs a numeric field; '\(field)' is not one."
        case .invalidCursor(let reason):
            "Invalid cursor: \(reason)."
        case .invalidQuery(let reason):
            "Invalid query: \(reason)."
        case .invalidModel(let type, let reason):
            "Model type \(type) cannot be stored: \(reason)."
        case .unsupportedPredicate(let node, let reason):
            "The predicate node \(node) cannot be translated into a query: \(reason)."
        case .expiryDisabled(let collection):
            "Collection '\(collection)' does not allow expiry; create it with allowsExpiry: true."
        case .fileExists(let path):
            "\(path) already exists; pass overwrite: true (CLI: --overwrite) to replace it."
        case .databaseNotEmpty(let objects):
            "A load needs an empty database; this one holds \(objects.prefix(5).joined(separator: ", "))\(objects.count > 5 ? ", ..." : "")."
        case .invalidDump(let line, let reason):
            "Invalid dump at line \(line): \(reason). Nothing was loaded."
        case .invalidPoint(let field, let latitude, let longitude):
            "\(field): (\(latitude), \(longitude)) is not a place: latitude must be in -90...90 and "
                + "longitude in -180...180 (degrees)."
        }
    }

    public var errorDescription: String? { description }
}
