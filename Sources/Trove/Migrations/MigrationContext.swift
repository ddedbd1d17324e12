import Foundation
import TroveSQLite

/// What a custom migration step works with: raw SQL and the documents API, inside the
/// migration's transaction, on the collections as the earlier steps left them.
///
/// Use raw SQL for data and for tables of your own; change document collections' shape with the
/// declarative steps, which keep the stored schema, triggers and indexes in step.
///
/// ```swift
/// .custom { context in
///     let notes = try context.documents("notes")
///     for note in try notes.reader.fetch() where note["title"]?.stringValue?.isEmpty ?? true {
///         try notes.patch(note.id, [Field("title"): "Untitled"])
///     }
/// }
/// ```
public struct MigrationContext {
    /// The migration being applied.
    public let migration: String
    let transaction: Transaction

    /// The document collection `name`, for reads and writes inside the migration.
    ///
    /// - Throws: ``TroveError/collectionNotFound(_:)``.
    public func documents(_ name: String) throws -> DocumentWriter {
        try transaction.documents(name)
    }

    /// The collection of a model type, in the shape the migration has reached: in a stage's
    /// `willMigrate` the old version's types fit, in `didMigrate` the new version's.
    ///
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` when the type does not fit
    ///   the collection as it is at this point.
    public func models<M: Model>(_ type: M.Type) throws -> ModelWriter<M> {
        try transaction.models(type)
    }

    /// Runs one SQL statement; returns the number of rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int {
        try transaction.execute(sql, bindings)
    }

    /// Runs one SQL query and returns its rows.
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        try transaction.query(sql, bindings)
    }
}
