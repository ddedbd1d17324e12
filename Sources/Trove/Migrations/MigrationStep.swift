import Foundation
import TroveEmbeddings

/// One change in a migration: declarative steps on document collections, or a custom body with
/// raw SQL and the documents API. A migration's steps run in order inside one transaction.
///
/// ```swift
/// migrator.registerMigration("v2", steps: [
///     .addField(.integer("priority", default: 0), to: "notes"),
///     .renameField("body", to: "text", in: "notes"),
///     .addIndex(IndexDefinition([Field("priority")]), to: "notes"),
///     .changeField("due", in: "notes", to: .date("due", optional: true)) { old in
///         old.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }.map(Value.date) ?? .null
///     },
/// ])
/// ```
public struct MigrationStep: Sendable {
    /// A field transform: the old value of one row in, the new value out (throw to fail the migration).
    public typealias Transform = @Sendable (Value) throws -> Value

    enum Kind: Sendable {
        case createCollection(DocumentSchema)
        case dropCollection
        case addField(FieldDefinition)
        case renameField(from: String, to: String)
        case removeField(String)
        case changeField(String, FieldDefinition, Transform?)
        case addIndex(IndexDefinition)
        case dropIndex(IndexDefinition)
        case setFullText(FullTextDefinition?)
        case setVectorIndex(field: String, IndexKind)
        case reembed(ReembeddingPlan)
        /// `fills`: column → the value rows stored before get when the column is added required
        /// without a default (a `@Model` property's initial value).
        case lightweight(DocumentSchema, renamed: [String: String], fills: [String: Value])
        case custom(@Sendable (MigrationContext) throws -> Void)
    }

    /// The collection the step changes (empty for custom steps).
    let collection: String
    let kind: Kind

    /// Creates a document collection.
    public static func createCollection(_ name: String, schema: DocumentSchema) -> MigrationStep {
        MigrationStep(collection: name, kind: .createCollection(schema))
    }

    /// Deletes a document collection with its rows and indexes.
    public static func dropCollection(_ name: String) -> MigrationStep {
        MigrationStep(collection: name, kind: .dropCollection)
    }

    /// Adds a field. Existing rows get its default (or null when optional); a required field
    /// without a default can be added only to an empty collection
    /// (``MigrationError/requiredFieldWithoutDefault(collection:field:rows:)``, checked before any
    /// change). In a collection that keeps undeclared fields, values already stored under that
    /// name move into the new column (a value of the wrong type throws, naming the document).
    ///
    /// - Complexity: O(1) (`ALTER TABLE ADD COLUMN`) for optional or defaulted fields that are
    ///   not unique; O(rows) (a table rebuild) otherwise.
    public static func addField(_ field: FieldDefinition, to collection: String) -> MigrationStep {
        MigrationStep(collection: collection, kind: .addField(field))
    }

    /// Renames a field; its indexes, full-text index, vector index and embedding source follow.
    ///
    /// - Complexity: O(1) (`ALTER TABLE RENAME COLUMN`), plus re-creating its indexes (and
    ///   rebuilding the full-text index when the field is in it).
    public static func renameField(_ name: String, to newName: String, in collection: String)
        -> MigrationStep
    {
        MigrationStep(collection: collection, kind: .renameField(from: name, to: newName))
    }

    /// Removes a field and its values. A field still named by a compound index, the full-text
    /// index or an embedding source throws ``MigrationError/fieldInUse(collection:field:usedBy:)``.
    ///
    /// - Complexity: O(rows): the table is rebuilt.
    public static func removeField(_ name: String, from collection: String) -> MigrationStep {
        MigrationStep(collection: collection, kind: .removeField(name))
    }

    /// Changes a field's definition (type, optionality, default, unique, indexed) and converts
    /// every stored value with `transform` (identity when nil: the old value must then fit the
    /// new type). A transform that throws, or returns a value the new definition refuses, rolls
    /// the migration back (``MigrationError/transformFailed(collection:field:id:reason:)``).
    ///
    /// - Complexity: O(rows): the table is rebuilt, each row passing through `transform`.
    public static func changeField(
        _ name: String, in collection: String, to definition: FieldDefinition,
        transform: Transform? = nil
    ) -> MigrationStep {
        MigrationStep(collection: collection, kind: .changeField(name, definition, transform))
    }

    /// Adds a B-tree index (compound, unique, or over JSON paths). A unique index over duplicate
    /// values throws ``MigrationError/duplicateValues(collection:keys:value:)``.
    public static func addIndex(_ index: IndexDefinition, to collection: String) -> MigrationStep {
        MigrationStep(collection: collection, kind: .addIndex(index))
    }

    /// Drops a B-tree index: one of the schema's `indexes`, or a field's `indexed` flag when the
    /// definition is that single field.
    public static func dropIndex(_ index: IndexDefinition, from collection: String) -> MigrationStep
    {
        MigrationStep(collection: collection, kind: .dropIndex(index))
    }

    /// Adds (or replaces) the full-text index, built from the rows.
    public static func addFullTextIndex(_ definition: FullTextDefinition, to collection: String)
        -> MigrationStep
    {
        MigrationStep(collection: collection, kind: .setFullText(definition))
    }

    /// Drops the full-text index.
    public static func dropFullTextIndex(from collection: String) -> MigrationStep {
        MigrationStep(collection: collection, kind: .setFullText(nil))
    }

    /// Changes the in-memory index of a vector field (`.flat` or `.hnsw(...)`); rebuilt on first use.
    public static func setVectorIndex(_ kind: IndexKind, for field: String, in collection: String)
        -> MigrationStep
    {
        MigrationStep(collection: collection, kind: .setVectorIndex(field: field, kind))
    }

    /// Re-embeds every row's `textField` into `vectorField` with `embedder`, and records its
    /// manifest as the field's ``EmbeddingSource``. The vector field's dimension follows the new
    /// model. Embedding runs before the migration's transaction (the texts as they stand when the
    /// migration starts, so `textField` must exist then); if other writers change the collection
    /// meanwhile, the changed rows are embedded again.
    ///
    /// - Parameters:
    ///   - vectorField: the vector field to fill.
    ///   - collection: the document collection.
    ///   - textField: the text field whose values are embedded.
    ///   - embedder: the new model.
    ///   - batchSize: texts per `embed` call.
    ///   - progress: called after each batch with the rows embedded so far and the total.
    /// - Complexity: O(rows) embeddings and a table rebuild. Memory: 4 × dimension bytes per row
    ///   until the transaction commits.
    public static func changeEmbeddingModel(
        of vectorField: String, in collection: String, from textField: String,
        to embedder: any Embedder,
        batchSize: Int = 64, progress: (@Sendable (ReembeddingProgress) -> Void)? = nil
    ) -> MigrationStep {
        MigrationStep(
            collection: collection,
            kind: .reembed(
                ReembeddingPlan(
                    vectorField: vectorField, textField: textField, embedder: embedder,
                    batchSize: max(1, batchSize), progress: progress)))
    }

    /// Brings a collection to `schema` (creating it when missing), with the steps derived from the
    /// difference between `schema` and the collection as it is at that point: indexes and the
    /// full-text index dropped and added, fields removed, changed (values kept as they are, so
    /// they must fit the new definition) and added, vector indexes changed. Renames cannot be told
    /// from a removal and an addition, so name them in `renamed` (old name: new name).
    ///
    /// ```swift
    /// .lightweight("notes", to: notesV2, renamed: ["body": "text"])
    /// ```
    /// - Throws (when run): ``MigrationError/invalidStep(migration:reason:)`` for changes that need
    ///   more than the schemas say: another id kind, `allowsUndeclaredFields`, another embedding
    ///   model (use ``changeEmbeddingModel(of:in:from:to:batchSize:progress:)``); the errors of
    ///   the derived steps.
    public static func lightweight(
        _ collection: String, to schema: DocumentSchema, renamed: [String: String] = [:]
    )
        -> MigrationStep
    {
        MigrationStep(
            collection: collection, kind: .lightweight(schema, renamed: renamed, fills: [:]))
    }

    /// Runs `body` inside the migration's transaction: raw SQL and the documents API (of the
    /// collections as the earlier steps left them).
    ///
    /// ```swift
    /// .custom { context in
    ///     try context.execute("UPDATE notes SET priority = 2 WHERE title LIKE ?", ["%urgent%"])
    /// }
    /// ```
    public static func custom(_ body: @escaping @Sendable (MigrationContext) throws -> Void)
        -> MigrationStep
    {
        MigrationStep(collection: "", kind: .custom(body))
    }

    /// A short description for the timeline and for error messages.
    var summary: String {
        switch kind {
        case .createCollection: "create \(collection)"
        case .dropCollection: "drop \(collection)"
        case .addField(let f): "add \(collection).\(f.name)"
        case .renameField(let a, let b): "rename \(collection).\(a) to \(b)"
        case .removeField(let f): "remove \(collection).\(f)"
        case .changeField(let f, let d, _): "change \(collection).\(f) to \(d.type)"
        case .addIndex(let i):
            "add index \(collection)(\(i.keys.map(\.description).joined(separator: ", ")))"
        case .dropIndex(let i):
            "drop index \(collection)(\(i.keys.map(\.description).joined(separator: ", ")))"
        case .setFullText(let d):
            d == nil ? "drop full-text index of \(collection)" : "full-text index of \(collection)"
        case .setVectorIndex(let f, _): "vector index of \(collection).\(f)"
        case .reembed(let p):
            "re-embed \(collection).\(p.vectorField) with \(p.embedder.manifest.modelID)"
        case .lightweight: "lightweight migration of \(collection)"
        case .custom: "custom"
        }
    }
}

/// How far a re-embedding has got, reported after each batch.
///
/// ```swift
/// .changeEmbeddingModel(of: "embedding", in: "notes", from: "body", to: embedder) { progress in
///     print("\(progress.completed) of \(progress.total)")
/// }
/// ```
public struct ReembeddingProgress: Sendable, Hashable {
    /// The collection being re-embedded.
    public var collection: String
    /// The vector field.
    public var field: String
    /// Rows embedded so far.
    public var completed: Int
    /// Rows to embed.
    public var total: Int
}

struct ReembeddingPlan: Sendable {
    let vectorField: String
    let textField: String
    let embedder: any Embedder
    let batchSize: Int
    let progress: (@Sendable (ReembeddingProgress) -> Void)?
}
