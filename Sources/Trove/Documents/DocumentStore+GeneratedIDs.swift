import Foundation
import TroveSQLite

// Ids Trove chooses for new rows that leave theirs to it: the one mechanism behind documents,
// models and search collections' entries whose id is unassigned (`DocumentID.unassigned`,
// `ModelID.unassigned`).

extension DocumentStore {
    /// Fresh ids for `count` new rows, chosen inside the write transaction that inserts them.
    ///
    /// - `.uuid` and `.string` collections: time-ordered UUIDv7s (``TimeOrderedIDGenerator``;
    ///   as lowercase text for string ids), unique across devices.
    /// - `.int64` collections: what SQLite would assign to a rowid left NULL, one above the
    ///   largest in the table or among `explicit` (the ids given to other rows of the same batch),
    ///   counted up in order. Chosen here rather than by SQLite so a batch still goes through
    ///   multi-row and bulk statements and its ids are known in order; the write lock the
    ///   transaction holds keeps two writers from choosing the same ones.
    ///
    /// - Throws: ``TroveError/invalidConfiguration(_:)`` when no integer id is left above the
    ///   largest (`Int64.max` is in use; SQLite would then pick at random: give ids instead).
    func newIDs(_ count: Int, besides explicit: [Int64] = [], on connection: Connection) throws
        -> [DocumentID]
    {
        guard count > 0 else { return [] }
        switch schema.id {
        case .uuid:
            return TimeOrderedIDGenerator.shared.next(count).map(DocumentID.uuid)
        case .string:
            return TimeOrderedIDGenerator.shared.next(count).map {
                .string($0.uuidString.lowercased())
            }
        case .int64:
            let tableMax =
                try connection.scalar("SELECT max(\(layout.rid)) FROM \(layout.table)")?.int64Value
                ?? 0
            let highest = max(tableMax, explicit.max() ?? 0)
            // Data, not a bug, can put Int64.max in the table: refuse rather than overflow.
            guard highest <= Int64.max - Int64(count) else {
                throw TroveError.invalidConfiguration(
                    "no free ids above \(highest); insert these rows with explicit ids")
            }
            return (1...Int64(count)).map { .int(highest + $0) }
        }
    }

    /// Gives every row whose id (its first value) is NULL a new id from ``newIDs(_:besides:on:)``.
    ///
    /// - Returns: the new ids, by row index (empty when every row had its id).
    func assignIDs(_ rows: inout [[SQLValue]], on connection: Connection) throws -> [Int:
        DocumentID]
    {
        let missing = rows.indices.filter { rows[$0][0].isNull }
        guard !missing.isEmpty else { return [:] }
        let explicit = schema.id == .int64 ? rows.compactMap { $0[0].int64Value } : []
        let fresh = try newIDs(missing.count, besides: explicit, on: connection)
        for (i, id) in zip(missing, fresh) { rows[i][0] = id.sqlValue }
        return Dictionary(uniqueKeysWithValues: zip(missing, fresh))
    }

    /// The values of a document to insert or upsert (``storedValues(_:)``, validated the same
    /// way), with a NULL id when `unassigned` (its id is ``DocumentID/unassigned``, or a model's
    /// is ``ModelID/unassigned``), for ``assignIDs(_:on:)`` to choose.
    func newRowValues(_ document: Document, unassigned: Bool) throws -> [SQLValue] {
        guard unassigned else { return try storedValues(document) }
        var standIn = document
        standIn.id = .placeholder(schema.id)
        var row = try storedValues(standIn)
        row[0] = .null
        return row
    }
}

extension DocumentID {
    /// The id that leaves the choice to Trove, for models (``ModelID/unassigned``): `0`, the nil
    /// UUID (all zero bits, RFC 9562 section 5.9) or the empty string. None is ever a generated
    /// id, and the empty string is no valid id at all.
    static func unassigned(_ kind: IDKind) -> DocumentID {
        switch kind {
        case .int64: .int(0)
        case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .string: .string("")
        }
    }

    /// Whether this is a model's unassigned id (``unassigned(_:)`` of its kind: `0`, the nil UUID
    /// or `""`); documents and entries leave theirs to Trove with ``DocumentID/unassigned`` alone.
    var isUnassigned: Bool { self == .unassigned(kind) }

    /// A valid id of `kind`, to validate a new row's fields before its id is chosen.
    static func placeholder(_ kind: IDKind) -> DocumentID {
        kind == .string ? .string("-") : .unassigned(kind)
    }
}
