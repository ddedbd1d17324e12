// trove-bench: one executable, one function per area. Release builds only.
import Foundation

#if DEBUG
FileHandle.standardError.write(Data("trove-bench refuses to run in a debug build: use swift run -c release trove-bench\n".utf8))
exit(2)
#endif

let areas: [(name: String, summary: String, run: ([String]) async throws -> Void)] = [
    ("vectors", "exact search over real/random vectors (+ sqlite-vec side by side)", runVectorBenchmarks),
    ("store", "batch insert, text and hybrid query latency", runStoreBenchmarks),
    ("embeddings", "tokens/s and latency of the built-in BERT encoder", runEmbeddingBenchmarks),
    ("ann", "HNSW build time, memory, recall@10 vs QPS", runANNBenchmarks),
    ("store-readers", "search collection: search latency with and without a writer inserting batches", runStoreReaderBenchmarks),
    ("first-query", "the first vector query after opening a file, in this process (store's cold figure)", runFirstQuery),
    ("store-ann", "HNSW in the store: filtered queries vs exact scan, snapshot load vs rebuild", runStoreANNBenchmarks),
    ("documents", "the grdb-peer record workload through the document API (+ GRDB side by side), reader scaling", runDocumentBenchmarks),
    ("documents-ann", "an HNSW vector field of a document collection: snapshot load vs rebuild on reopen", runDocumentANNBenchmarks),
    ("documents-text", "batch inserts into a document collection with full-text fields", runDocumentTextBenchmarks),
    ("models", "the grdb-peer record workload through Codable models and #Predicate (+ GRDB side by side)", runModelBenchmarks),
    ("contexts", "the grdb-peer workload through a model context vs value models (+ GRDB side by side); lazy blobs", runContextBenchmarks),
    ("update-cost", "CPU time per row of the record update, Trove against raw SQL with parts of Trove's layout added one at a time", runUpdateCostBenchmarks),
    ("observe", "live-query commit-to-delivery latency (+ GRDB side by side)", runObservationBenchmarks),
    ("text", "BM25 text leg: p50/p99 latency, hit@10 (+ FTS5, bm25s, tantivy side by side)", runTextBenchmarks),
    ("admin", "dump/load throughput and size, backup under inserts, purge of expired records", runAdminBenchmarks),
    ("geo", "radius, box and nearest-10 over 1M points (+ hand-written R*Tree SQL, brute force)", runGeoBenchmarks),
    ("graph", "1-hop, 2-hop, shortest path over 1M links (+ hand-written recursive CTEs)", runGraphBenchmarks),
    ("sync-apply", "applying pulled change sets on a device vs a local batch insert of the same documents", runSyncBenchmarks),
    ("sync-postgres", "push and pull of change sets through PostgreSQL vs the same bytes through raw libpq", runSyncPostgresBenchmarks),
    ("sync-latency", "time from a commit on one device to its hybrid-search hit on another, both running run()", runSyncLatencyBenchmarks),
    ("sync-load", "many simulated devices pushing and pulling one PostgreSQL server at once", runSyncLoadBenchmarks),
    ("sync-join", "a new device joining from the newest snapshot plus the tail vs replaying the whole feed", runSyncJoinBenchmarks),
    ("sync-year", "a simulated year of one person's devices: the feed's size with snapshots and pruning", runSyncYearBenchmarks),
    ("watch", "trove index --watch: file save to searchable record, p50/p99 over 100 edits", runWatchBenchmarks),
    ("migrations", "each migration step on a seeded collection; table rebuild vs ALTER TABLE DROP COLUMN", runMigrationBenchmarks),
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let areaName = arguments.first, let area = areas.first(where: { $0.name == areaName }) else {
    print("usage: trove-bench <area> [options]\n\nareas:")
    for area in areas { print("  \(area.name.padding(toLength: 12, withPad: " ", startingAt: 0)) \(area.summary)") }
    exit(arguments.isEmpty ? 0 : 2)
}
do {
    try await area.run(Array(arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("trove-bench \(areaName): \(error)\n".utf8))
    exit(1)
}
