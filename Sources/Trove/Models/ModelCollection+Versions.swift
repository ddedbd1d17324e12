import Foundation

/// A model read with the version of its row, for a compare-and-set update
/// (``ModelCollection/update(_:ifVersion:)``).
public struct VersionedModel<M: Model>: Sendable {
    /// The model.
    public var model: M
    /// Its row's version: 1 when inserted, raised by every update (API, contexts or raw SQL).
    public var version: Int64
}

extension ModelCollection {
    /// The model with this id and the version of its row, or nil.
    ///
    /// ```swift
    /// guard var read = try await notes.fetchVersioned(id: 1) else { return }
    /// read.model.title = "Renamed"
    /// try await notes.update(read.model, ifVersion: read.version)  // fails if someone else wrote it meanwhile
    /// ```
    /// - Parameter id: the model's id.
    /// - Returns: the model and its version.
    /// - Throws: the read's errors; `DecodingError` when the row does not fit the type.
    public func fetchVersioned(id: M.ID) async throws -> VersionedModel<M>? {
        guard let document = try await documents.fetch(id: id.documentID) else { return nil }
        return VersionedModel(model: try schema.decode(document), version: document.version)
    }

    /// Replaces a stored model only if its row is still at `version` (compare-and-set), as
    /// ``DocumentCollection/update(_:ifVersion:)`` does for documents and contexts do for every
    /// row they save.
    ///
    /// - Parameters:
    ///   - model: the new value.
    ///   - version: the version it was read at (``fetchVersioned(id:)``).
    /// - Returns: the row's new version.
    /// - Throws: ``TroveError/versionConflict(id:expected:actual:)`` when the row moved on (nothing
    ///   is written), ``TroveError/documentNotFound(_:)`` when it is gone.
    @discardableResult
    public func update(_ model: M, ifVersion version: Int64) async throws -> Int64 {
        let row = try await rows([model])[0]
        let (store, schema) = (documents.store, self.schema)
        return try await database.writing { connection in
            try store.update(row: row, id: model.id.documentID, ifVersion: version, on: connection)
            {
                try schema.encode(model)
            }
        }
    }
}
