import Foundation
import Trove
import TroveSQLite

/// Pulled change sets on their way in: each is opened, checked, then applied or queued, and the
/// pull cursor moves past it in the same transaction, so a crash can neither lose it nor apply
/// it twice (and applying twice would change nothing anyway).
struct Inbox {
    let connection: Connection
    let merger: Merger
    let key: SyncKey
    let space: String
    let device: String

    struct Outcome {
        var applied = 0
        /// The change set that did not open or decode: nothing of it or after it was applied.
        var failure: SyncError?
        /// The first change set refused for its embedding model (queued).
        var embeddingError: SyncError?
    }

    /// Takes a pulled batch, in server order, up to the first change set that does not open.
    func receive(_ batch: [SealedChangeSet]) throws -> Outcome {
        var outcome = Outcome()
        let advance = try connection.cachedStatement("UPDATE \(SyncTables.device) SET pulled = max(pulled, ?)")
        for sealed in batch {
            guard let position = sealed.serverSequence else {
                outcome.failure = .malformedChangeSet(
                    device: sealed.device, deviceSequence: sealed.deviceSequence, reason: "the transport gave it no server sequence")
                return outcome
            }
            if sealed.device != device {
                let set: ChangeSet
                do {
                    set = try Sealing.open(sealed, key: key, space: space)
                } catch let error as SyncError {
                    outcome.failure = error
                    return outcome
                }
                do {
                    if let reason = try merger.check(set) {
                        try enqueue(sealed, reason: reason)
                    } else {
                        try merger.apply(set, from: sealed.device)
                        outcome.applied += 1
                    }
                } catch let error as SyncError {
                    guard case .embeddingModelMismatch(let collection, let field, _, _) = error else { throw error }
                    try enqueue(sealed, reason: .embeddingModelMismatch(collection: collection, field: field))
                    if outcome.embeddingError == nil { outcome.embeddingError = error }
                }
            }
            try advance.execute([.integer(position)])
        }
        return outcome
    }

    /// Tries every queued change set again (after a migration it may fit); returns how many
    /// were applied.
    func retryQueue() throws -> Int {
        let queued = try connection.query(
            "SELECT server_sequence, device, device_sequence, payload FROM \(SyncTables.queue) ORDER BY server_sequence")
        var applied = 0
        for row in queued {
            let sealed = SealedChangeSet(
                device: row.string(at: 1) ?? "", deviceSequence: row.int64(at: 2) ?? 0, payload: row.data(at: 3) ?? Data(),
                serverSequence: row.int64(at: 0))
            let set = try Sealing.open(sealed, key: key, space: space)
            let reason: QueuedChangeSet.Reason?
            do {
                reason = try merger.check(set)
            } catch SyncError.embeddingModelMismatch(let collection, let field, _, _) {
                reason = .embeddingModelMismatch(collection: collection, field: field)
            }
            if let reason {
                try connection.execute(
                    "UPDATE \(SyncTables.queue) SET reason = ? WHERE server_sequence = ?",
                    [.text(QueueReasonCoding.encode(reason)), row[0]])
            } else {
                try merger.apply(set, from: sealed.device)
                try connection.execute("DELETE FROM \(SyncTables.queue) WHERE server_sequence = ?", [row[0]])
                applied += 1
            }
        }
        return applied
    }

    private func enqueue(_ sealed: SealedChangeSet, reason: QueuedChangeSet.Reason) throws {
        try connection.cachedStatement("""
            INSERT OR REPLACE INTO \(SyncTables.queue)(server_sequence, device, device_sequence, payload, reason)
            VALUES (?, ?, ?, ?, ?)
            """).execute([
                .integer(sealed.serverSequence ?? 0), .text(sealed.device), .integer(sealed.deviceSequence),
                .blob(Array(sealed.payload)), .text(QueueReasonCoding.encode(reason)),
            ])
    }
}

/// A queue reason as stored in `_trove_sync_queue.reason` (tab-separated parts).
enum QueueReasonCoding {
    static func encode(_ reason: QueuedChangeSet.Reason) -> String {
        switch reason {
        case .newerSchema(let changeSet, let local): "schema\t\(changeSet)\t\(local)"
        case .unknownCollection(let name): "collection\t\(name)"
        case .unknownField(let collection, let field): "field\t\(collection)\t\(field)"
        case .embeddingModelMismatch(let collection, let field): "embedding\t\(collection)\t\(field)"
        }
    }

    static func decode(_ text: String) -> QueuedChangeSet.Reason {
        let parts = text.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        func part(_ i: Int) -> String { i < parts.count ? parts[i] : "" }
        switch part(0) {
        case "schema": return .newerSchema(changeSet: Int(part(1)) ?? 0, local: Int(part(2)) ?? 0)
        case "field": return .unknownField(collection: part(1), field: part(2))
        case "embedding": return .embeddingModelMismatch(collection: part(1), field: part(2))
        default: return .unknownCollection(part(1))
        }
    }
}
