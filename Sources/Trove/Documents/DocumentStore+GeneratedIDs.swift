import Foundation
import TroveSQLite

// Ids Trove chooses for new rows that leave theirs to it: the one mechanism behind models with
// an unassigned id (`ModelID.unassigned`), `DocumentCollection.insert(_:)` of bare fields, and
// search collections' entries without an id.

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

    /// Inserts documents made of `fieldSets`, each under a new id (``newIDs(_:besides:on:)``),
    /// validated like ``write(_:mode:expiry:on:)``; inside the caller's transaction.
    ///
    /// - Returns: the new ids, in order.
    func insert(generatingIDs fieldSets: [[String: Value]], on connection: Connection) throws
        -> [DocumentID]
    {
        let placeholder = DocumentID.placeholder(schema.id)
        var rows = try fieldSets.map { fields -> [SQLValue] in
            var row = try storedValues(Document(id: placeholder, fields))
            row[0] = .null
            if schema.allowsExpiry { row.append(.null) }
            return row
        }
        let fresh = try assignIDs(&rows, on: connection)
        let ids = rows.indices.map { fresh[$0]! }  // every row was missing its id
        try write(rows: rows, mode: .insert, on: connection) {
            Document(id: ids[$0], fieldSets[$0])
        }
        return ids
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

    /// Whether this is ``unassigned(_:)`` of its kind.
    var isUnassigned: Bool { self == .unassigned(kind) }

    /// A valid id of `kind`, to validate a new row's fields before its id is chosen.
    static func placeholder(_ kind: IDKind) -> DocumentID {
        kind == .string ? .string("-") : .unassigned(kind)
    }
}
