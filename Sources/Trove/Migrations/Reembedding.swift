import Foundation
import TroveSQLite

/// The vectors of one re-embedding step, computed before the migration's transaction (embedding
/// is slow and asynchronous; a write transaction must be neither).
///
/// Memory: 4 × dimension bytes per row plus its text, until the migration commits.
final class ReembeddedVectors: Sendable {
    /// The collection's newest change-log seq when the texts were read: if it moved by the time
    /// the transaction starts, someone wrote in between and the changed rows are embedded again.
    let seq: Int64
    /// The text each row had (rows with no text have no entry).
    let texts: [Int64: String]
    let vectors: [Int64: [Float]]

    init(seq: Int64, texts: [Int64: String], vectors: [Int64: [Float]]) {
        self.seq = seq
        self.texts = texts
        self.vectors = vectors
    }

    func vector(rid: Int64) -> [Float]? { vectors[rid] }
}

extension Database {
    /// Embeds every row's text for `plan`, reusing `previous` vectors whose text is unchanged.
    func embedForMigration(
        _ plan: ReembeddingPlan, store: DocumentStore, previous: ReembeddedVectors?
    ) async throws -> ReembeddedVectors {
        let layout = store.layout
        guard store.schema.field(plan.textField)?.type == .text else {
            throw StepRefusal(
                reason:
                    "re-embedding reads \(layout.name).\(plan.textField), which must be a text field when the migration starts"
            )
        }
        // One snapshot: the log position and the texts it covers.
        let (seq, rows): (Int64, [(Int64, String)]) = try connection.transaction(.deferred) {
            let seq = try layout.changeLog.state(connection).maxSeq
            var rows: [(Int64, String)] = []
            try connection.prepare(
                "SELECT \(layout.rid), \"\(plan.textField)\" FROM \(layout.table) WHERE \"\(plan.textField)\" IS NOT NULL ORDER BY \(layout.rid)"
            )
            .forEachRow { rows.append(($0.int64(at: 0), $0.string(at: 1) ?? "")) }
            return (seq, rows)
        }
        var texts: [Int64: String] = [:]
        var vectors: [Int64: [Float]] = [:]
        var pending: [(Int64, String)] = []
        for (rid, text) in rows {
            texts[rid] = text
            if let previous, previous.texts[rid] == text, let vector = previous.vectors[rid] {
                vectors[rid] = vector
            } else {
                pending.append((rid, text))
            }
        }
        let total = rows.count
        let report = { (done: Int) in
            plan.progress?(
                ReembeddingProgress(
                    collection: layout.name, field: plan.vectorField, completed: done, total: total)
            )
        }
        report(vectors.count)
        let dimension = plan.embedder.dimension
        var start = 0
        while start < pending.count {
            let batch = pending[start..<min(start + plan.batchSize, pending.count)]
            let embedded = try await plan.embedder.embed(batch.map(\.1))
            guard embedded.count == batch.count else {
                throw TroveError.invalidConfiguration(
                    "the embedder returned \(embedded.count) vectors for \(batch.count) texts")
            }
            for ((rid, _), vector) in zip(batch, embedded) {
                guard vector.count == dimension else {
                    throw TroveError.dimensionMismatch(expected: dimension, actual: vector.count)
                }
                vectors[rid] = vector
            }
            start += batch.count
            report(vectors.count)
        }
        return ReembeddedVectors(seq: seq, texts: texts, vectors: vectors)
    }
}
