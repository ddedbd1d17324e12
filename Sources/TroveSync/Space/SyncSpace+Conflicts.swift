import Foundation
import Trove
import TroveSQLite

extension SyncSpace {
    /// The local values that concurrent changes from other devices overwrote, oldest first.
    ///
    /// - Complexity: one query; O(conflicts kept).
    public func conflicts() async throws -> [SyncConflict] {
        try await database.syncWrite { connection in
            try connection.query(
                """
                SELECT id, collection, record, field, value, device, hlc, winner_device, winner_hlc
                FROM \(SyncTables.conflicts) ORDER BY id
                """
            ).map { row in
                SyncConflict(
                    id: row.int64(at: 0) ?? 0, collection: row.string(at: 1) ?? "",
                    recordID: row.string(at: 2) ?? row[2].description,
                    field: row.string(at: 3) ?? "",
                    losingValue: row[4], losingDevice: row.string(at: 5) ?? "",
                    losingTime: SyncTables.date(ofHLC: row.int64(at: 6) ?? 0),
                    winningDevice: row.string(at: 7) ?? "",
                    winningTime: SyncTables.date(ofHLC: row.int64(at: 8) ?? 0))
            }
        }
    }

    /// Writes a conflict's losing value back as a new local change (it then wins everywhere,
    /// being the newest) and forgets the conflict.
    ///
    /// - Parameter conflict: one of ``conflicts()``.
    /// - Throws: ``SyncError/conflictRecordGone(collection:id:)`` when the record was deleted
    ///   since; ``SyncError/unknownCollection(_:)``.
    public func restore(_ conflict: SyncConflict) async throws {
        guard let table = captured[conflict.collection] else {
            throw SyncError.unknownCollection(conflict.collection)
        }
        try await database.syncWrite { connection in
            let materializer = Materializer(connection: connection, table: table)
            guard
                try materializer.write(
                    id: .text(conflict.recordID), field: conflict.field, value: conflict.losingValue
                )
            else {
                throw SyncError.conflictRecordGone(
                    collection: conflict.collection, id: conflict.recordID)
            }
            try connection.execute(
                "DELETE FROM \(SyncTables.conflicts) WHERE id = ?", [.integer(conflict.id)])
        }
        try await refreshStatus(error: status.lastError)
    }

    /// Forgets a conflict without restoring it.
    ///
    /// - Parameter conflict: one of ``conflicts()``.
    public func dismiss(_ conflict: SyncConflict) async throws {
        try await database.syncWrite { connection in
            try connection.execute(
                "DELETE FROM \(SyncTables.conflicts) WHERE id = ?", [.integer(conflict.id)])
        }
        try await refreshStatus(error: status.lastError)
    }

    /// Forgets a quarantined change set on this device (after the space's owner deleted it from
    /// the server, or to stop listing it). It is not pulled again: the cursor is past it.
    ///
    /// - Parameter changeSet: one of ``SyncStatus/quarantined``.
    public func forgetQuarantined(_ changeSet: QuarantinedChangeSet) async throws {
        try await database.syncWrite { connection in
            try connection.execute(
                "DELETE FROM \(SyncTables.quarantine) WHERE server_sequence = ?",
                [.integer(changeSet.serverSequence)])
        }
        try await refreshStatus(error: status.lastError)
    }
}
