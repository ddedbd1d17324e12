import Foundation

/// A collection whose records go in with `insert`: documents (``DocumentCollection``), models
/// (``ModelCollection``) and search entries (``SearchCollection``), each call one transaction.
///
/// `insert` is written once here, so it means the same on every facade: all or nothing, an
/// unassigned id replaced by a new one and returned, `expiry` where the collection allows it.
/// Inside `database.write { tx in ... }` the same calls are ``RecordWriter``'s.
public protocol RecordCollection: Sendable {
    /// What the collection holds: ``Document``, a model type, or ``VectorEntry``.
    associatedtype Record
    /// The records' id type: ``DocumentID``, or the model's `ID`.
    associatedtype RecordID
    /// Writes `records` in one transaction (Trove's own; call ``insert(_:expiry:)->Self.RecordID``).
    func _insert(_ records: [Record], expiry: Expiry) async throws -> [RecordID]
}

extension RecordCollection {
    /// Inserts one record (see ``insert(_:expiry:)->[Self.RecordID]``).
    ///
    /// ```swift
    /// let id = try await notes.insert(Document(["title": "Dentist", "year": 2026]))
    /// ```
    /// - Returns: its id: the new one when it was unassigned.
    @discardableResult
    public func insert(_ record: Record, expiry: Expiry = .never) async throws -> RecordID {
        try await _insert([record], expiry: expiry)[0]
    }

    /// Inserts records in one transaction, all or nothing: each is validated before the first
    /// is written, and a failure part-way (a duplicate id, a full disk) leaves the collection
    /// unchanged.
    ///
    /// A record whose id is unassigned (``DocumentID/unassigned``, ``ModelID/unassigned``, what
    /// `Document(_:)` and `VectorEntry(content:)` hold) goes in under a new one: a time-ordered
    /// UUIDv7 in `.uuid` and `.string` collections (unique across devices, as sync needs), the
    /// next rowid in `.int64` ones. A search collection's entry without a vector is embedded by
    /// the collection's embedder first. In a collection whose schema has `allowsExpiry: true`,
    /// `expiry` says when the records expire:
    ///
    /// ```swift
    /// let sessions = try await database.documents("sessions", schema: DocumentSchema(
    ///     fields: [.text("user")], allowsExpiry: true))
    /// try await sessions.insert([Document(id: 1, ["user": "ada"])], expiry: .after(.seconds(3600)))
    /// ```
    /// - Returns: their ids, in order: the new ones where they were unassigned.
    /// - Throws: ``TroveError/duplicateDocumentID(_:)`` when an id exists,
    ///   ``TroveError/uniqueViolation(field:value:)`` naming a unique field, the record's
    ///   validation errors (``TroveError/unknownField(field:known:)``,
    ///   ``TroveError/typeMismatch(field:expected:value:)``, ``TroveError/missingField(field:)``,
    ///   ``TroveError/dimensionMismatch(expected:actual:)``,
    ///   ``TroveError/invalidMetadata(reason:)``, …), ``TroveError/embedderRequired(collection:)``
    ///   for an entry without a vector in a collection without an embedder, and
    ///   ``TroveError/expiryDisabled(collection:)`` for an expiry other than `.never` where the
    ///   schema does not allow it. Nothing is written when it throws.
    /// - Complexity: O(n) rows through multi-row statements in one transaction.
    @discardableResult
    public func insert(_ records: [Record], expiry: Expiry = .never) async throws -> [RecordID] {
        records.isEmpty ? [] : try await _insert(records, expiry: expiry)
    }
}

/// Writes inside `database.write { tx in ... }` whose records go in with `insert`:
/// ``DocumentWriter`` and ``ModelWriter``. Synchronous and part of the open transaction: a
/// failed insert leaves nothing behind (its own savepoint), and a throw out of the body rolls
/// all of the transaction back.
public protocol RecordWriter {
    /// What the collection holds: ``Document`` or a model type.
    associatedtype Record
    /// The records' id type: ``DocumentID``, or the model's `ID`.
    associatedtype RecordID
    /// Writes `records` in the open transaction (Trove's own; call
    /// ``insert(_:expiry:)->Self.RecordID``).
    func _insert(_ records: [Record], expiry: Expiry) throws -> [RecordID]
}

extension RecordWriter {
    /// Inserts one record, as ``RecordCollection/insert(_:expiry:)->Self.RecordID`` does.
    ///
    /// - Returns: its id: the new one when it was unassigned.
    @discardableResult
    public func insert(_ record: Record, expiry: Expiry = .never) throws -> RecordID {
        try _insert([record], expiry: expiry)[0]
    }

    /// Inserts records, all or nothing, as ``RecordCollection/insert(_:expiry:)->[Self.RecordID]``
    /// does.
    ///
    /// - Returns: their ids, in order: the new ones where they were unassigned.
    @discardableResult
    public func insert(_ records: [Record], expiry: Expiry = .never) throws -> [RecordID] {
        records.isEmpty ? [] : try _insert(records, expiry: expiry)
    }
}
