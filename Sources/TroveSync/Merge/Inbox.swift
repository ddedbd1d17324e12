import Foundation
import Trove
import TroveSQLite

/// Pulled change sets on their way in: each is opened, checked, then applied or queued, and the
/// pull cursor moves past it in the same transaction, so a crash can neither lose it nor apply
/// it twice (and applying twice would change nothing anyway).
struct Inbox {
    let connection: Connection
    let merger: Merger
    let keys: SpaceKeys
    let space: String
    let device: String

    struct Outcome {
        var applied = 0
        /// Change sets that did not open or decode, quarantined (skipped, nothing of them applied).
        var quarantined = 0
        /// A change set the transport handed over without a server sequence: nothing of it or
        /// after it was applied.
        var failure: SyncError?
        /// The first change set refused for its embedding model (queued).
        var embeddingError: SyncError?
    }

    /// Takes a pulled batch, in server order. The key was proved to be the space's before the
    /// pull (``SyncSpace``'s key check), so a change set that does not open or decode is at fault
    /// itself: it is quarantined, and the ones after it are applied as usual.
    func receive(_ batch: [SealedChangeSet]) throws -> Outcome {
        var outcome = Outcome()
        var resendOwn = false
        let advance = try connection.cachedStatement(
            "UPDATE \(SyncTables.device) SET pulled = max(pulled, ?)")
        for sealed in batch {
            guard let position = sealed.serverSequence else {
                outcome.failure = .malformedChangeSet(
                    device: sealed.device, deviceSequence: sealed.deviceSequence,
                    reason: "the transport gave it no server sequence")
                return outcome
            }
            if sealed.device != device {
                try WriterSequences.note(sealed.device, sealed.deviceSequence, on: connection)
            }
            if sealed.device == device {
                // Its effects are here already. One that does not open was sealed with another
                // key (this device synced with a wrong passphrase before key checks existed):
                // nobody could read it, so this device sends its own values again.
                if !resendOwn, try !Sealing.opens(sealed, keys: keys, space: space) {
                    resendOwn = true
                }
            } else {
                // Sealed under an epoch this device holds no key of: not at fault, so not
                // quarantined; the pull stops before it and learns the epoch (or that this
                // device was removed).
                if keys.lacksKey(for: Array(sealed.payload)) {
                    outcome.failure = .missingEpochKey(
                        epoch: SpaceKeys.epoch(of: Array(sealed.payload)))
                    return outcome
                }
                let set: ChangeSet
                do {
                    set = try Sealing.open(sealed, keys: keys, space: space)
                } catch let error as SyncError {
                    try quarantine(sealed, reason: error)
                    outcome.quarantined += 1
                    try advance.execute([.integer(position)])
                    continue
                }
                do {
                    if let reason = try merger.check(set) {
                        try enqueue(sealed, reason: reason)
                    } else {
                        try merger.apply(set, from: sealed.device)
                        outcome.applied += 1
                    }
                } catch let error as SyncError {
                    guard case .embeddingModelMismatch(let collection, let field, _, _) = error
                    else { throw error }
                    try enqueue(
                        sealed,
                        reason: .embeddingModelMismatch(collection: collection, field: field))
                    if outcome.embeddingError == nil { outcome.embeddingError = error }
                }
            }
            try advance.execute([.integer(position)])
        }
        if resendOwn { try markOwnValuesPending() }
        return outcome
    }

    /// Keeps a change set that does not open or decode, with why (its payload too: a later
    /// version may read a malformed one).
    private func quarantine(_ sealed: SealedChangeSet, reason error: SyncError) throws {
        let reason: QuarantinedChangeSet.Reason
        switch error {
        case .malformedChangeSet(_, _, let why): reason = .malformed(why)
        default: reason = .cannotOpen
        }
        try connection.cachedStatement(
            """
            INSERT OR REPLACE INTO \(SyncTables.quarantine)(server_sequence, device, device_sequence, payload, reason)
            VALUES (?, ?, ?, ?, ?)
            """
        ).execute([
            .integer(sealed.serverSequence ?? 0), .text(sealed.device),
            .integer(sealed.deviceSequence),
            .blob(Array(sealed.payload)), .text(QuarantineReasonCoding.encode(reason)),
        ])
    }

    /// Marks every value this device wrote, and every record's life, as pending: the next push
    /// seals them again under the space's key. Merging is idempotent, so devices that had them
    /// change nothing; those that could not read them get them now.
    private func markOwnValuesPending() throws {
        try connection.execute(
            "UPDATE \(SyncTables.fields) SET pending = 1 WHERE device = ?", [.text(device)])
        try connection.execute("UPDATE \(SyncTables.records) SET pending = 1")
    }

    /// Tries the quarantined change sets that opened but did not decode again (a later version
    /// may read them); returns how many were applied.
    func retryQuarantine() throws -> Int {
        let malformed = try connection.query(
            "SELECT server_sequence, device, device_sequence, payload FROM \(SyncTables.quarantine) "
                + "WHERE reason LIKE 'malformed%' ORDER BY server_sequence")
        var applied = 0
        for row in malformed {
            let sealed = SealedChangeSet(
                device: row.string(at: 1) ?? "", deviceSequence: row.int64(at: 2) ?? 0,
                payload: row.data(at: 3) ?? Data(),
                serverSequence: row.int64(at: 0))
            guard let set = try? Sealing.open(sealed, keys: keys, space: space) else { continue }
            try connection.execute(
                "DELETE FROM \(SyncTables.quarantine) WHERE server_sequence = ?", [row[0]])
            do {
                if let reason = try merger.check(set) {
                    try enqueue(sealed, reason: reason)
                } else {
                    try merger.apply(set, from: sealed.device)
                    applied += 1
                }
            } catch SyncError.embeddingModelMismatch(let collection, let field, _, _) {
                try enqueue(
                    sealed, reason: .embeddingModelMismatch(collection: collection, field: field))
            }
        }
        return applied
    }

    /// Tries every queued change set again (after a migration it may fit); returns how many
    /// were applied.
    func retryQueue() throws -> Int {
        let queued = try connection.query(
            "SELECT server_sequence, device, device_sequence, payload FROM \(SyncTables.queue) ORDER BY server_sequence"
        )
        var applied = 0
        for row in queued {
            let sealed = SealedChangeSet(
                device: row.string(at: 1) ?? "", deviceSequence: row.int64(at: 2) ?? 0,
                payload: row.data(at: 3) ?? Data(),
                serverSequence: row.int64(at: 0))
            let set = try Sealing.open(sealed, keys: keys, space: space)
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
                try connection.execute(
                    "DELETE FROM \(SyncTables.queue) WHERE server_sequence = ?", [row[0]])
                applied += 1
            }
        }
        return applied
    }

    private func enqueue(_ sealed: SealedChangeSet, reason: QueuedChangeSet.Reason) throws {
        try connection.cachedStatement(
            """
            INSERT OR REPLACE INTO \(SyncTables.queue)(server_sequence, device, device_sequence, payload, reason)
            VALUES (?, ?, ?, ?, ?)
            """
        ).execute([
            .integer(sealed.serverSequence ?? 0), .text(sealed.device),
            .integer(sealed.deviceSequence),
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
        case .embeddingModelMismatch(let collection, let field):
            "embedding\t\(collection)\t\(field)"
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

/// A quarantine reason as stored in `_trove_sync_quarantine.reason`.
enum QuarantineReasonCoding {
    static func encode(_ reason: QuarantinedChangeSet.Reason) -> String {
        switch reason {
        case .cannotOpen: "open"
        case .malformed(let why): "malformed\t\(why)"
        }
    }

    static func decode(_ text: String) -> QuarantinedChangeSet.Reason {
        guard text.hasPrefix("malformed\t") else { return .cannotOpen }
        return .malformed(String(text.dropFirst("malformed\t".count)))
    }
}
