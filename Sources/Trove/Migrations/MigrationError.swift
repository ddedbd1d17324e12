import Foundation

/// Why a migration did not run. The file is left exactly as it was before the failing migration
/// (each migration is one transaction); migrations applied before it stay applied.
///
/// Errors of the steps themselves pass through unchanged: ``TroveError`` for a schema the engine
/// refuses (``TroveError/unknownField(field:known:)``, ``TroveError/invalidConfiguration(_:)``,
/// ...), `SQLiteError` from raw SQL in a custom step, and whatever a custom step throws.
///
/// ```swift
/// do {
///     try await migrator.migrate(database)
/// } catch MigrationError.fileIsNewer(let unknown) {
///     print("this file was migrated by a newer version of the app: \(unknown)")
/// }
/// ```
public enum MigrationError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// The file's timeline has migrations this code does not register (a newer version of the app
    /// wrote it). Nothing was changed.
    case fileIsNewer(unknownMigrations: [String])
    /// The file's timeline is not a prefix of the registered one: a migration was inserted or
    /// renamed before ones already applied. Nothing was changed.
    case timelineMismatch(applied: [String], registered: [String])
    /// A required field without a default cannot be added to a collection that has rows.
    case requiredFieldWithoutDefault(collection: String, field: String, rows: Int)
    /// A field made required has null values in some rows.
    case nullValues(collection: String, field: String, rows: Int)
    /// A unique field or index would have duplicate values (one of them shown).
    case duplicateValues(collection: String, keys: [String], value: String)
    /// A field type change's transform threw, or returned a value the new type does not accept.
    case transformFailed(collection: String, field: String, id: DocumentID, reason: String)
    /// A step does not fit the collection as it is at that point of the timeline.
    case invalidStep(migration: String, reason: String)
    /// A field is still used by an index (or an embedding source) that the step would leave
    /// dangling; drop that first.
    case fieldInUse(collection: String, field: String, usedBy: String)
    /// Raw SQL in a step left rows referencing missing parents (`PRAGMA foreign_key_check`).
    case foreignKeyViolation(table: String, rows: Int)
    /// Other writers kept changing the collection while its vectors were being re-embedded.
    case concurrentChanges(collection: String, attempts: Int)

    public var description: String {
        switch self {
        case .fileIsNewer(let unknown):
            "The file has migrations this version does not know (\(unknown.joined(separator: ", "))): "
                + "it was written by a newer version. Update the app to open it."
        case .timelineMismatch(let applied, let registered):
            "The file's migrations (\(applied.joined(separator: ", "))) are not the start of the registered "
                + "ones (\(registered.joined(separator: ", "))). Register new migrations after existing ones."
        case .requiredFieldWithoutDefault(let collection, let field, let rows):
            "Cannot add required field '\(field)' without a default to '\(collection)', which has \(rows) rows. "
                + "Give it a default, or make it optional."
        case .nullValues(let collection, let field, let rows):
            "Field '\(field)' of '\(collection)' is null in \(rows) rows; it cannot become required without a transform."
        case .duplicateValues(let collection, let keys, let value):
            "'\(collection)' has several rows with \(value) in \(keys.joined(separator: ", ")); it cannot become unique."
        case .transformFailed(let collection, let field, let id, let reason):
            "Changing field '\(field)' of '\(collection)' failed for document \(id): \(reason)."
        case .invalidStep(let migration, let reason):
            "Migration '\(migration)': \(reason)."
        case .fieldInUse(let collection, let field, let usedBy):
            "Field '\(field)' of '\(collection)' is used by \(usedBy); drop that first."
        case .foreignKeyViolation(let table, let rows):
            "The migration left \(rows) rows of '\(table)' referencing missing rows."
        case .concurrentChanges(let collection, let attempts):
            "'\(collection)' changed during each of \(attempts) attempts to re-embed it; retry when writes pause."
        }
    }

    public var errorDescription: String? { description }
}
