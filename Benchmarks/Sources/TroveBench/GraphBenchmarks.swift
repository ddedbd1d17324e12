// trove-bench graph: 1-hop, 2-hop and shortest paths on a seeded preferential-attachment graph,
// Trove's link API (in-memory adjacency index) against hand-written recursive CTEs on the same
// edge table through TroveSQLite, and Trove's own SQL path (traversal inside a write
// transaction: one indexed SELECT per node).
import Foundation
@_spi(Benchmarks) import Trove

/// Barabási–Albert style: node i links to `perNode` earlier nodes chosen in proportion to their
/// degree (the repeated-endpoints list), weights 1...10.
private func preferentialAttachment(nodes: Int, edges: Int, seed: UInt64) -> [(Int64, Int64, Double)] {
    var rng = BenchRandom(state: seed)
    let perNode = max(1, edges / nodes)
    var endpoints: [Int64] = []
    endpoints.reserveCapacity(2 * edges)
    var out: [(Int64, Int64, Double)] = []
    out.reserveCapacity(edges)
    let seedNodes = perNode + 1
    for a in 0..<Int64(seedNodes) {
        for b in 0..<Int64(seedNodes) where a != b && out.count < edges {
            out.append((a, b, Double(Int.random(in: 1...10, using: &rng))))
            endpoints += [a, b]
        }
    }
    var node = Int64(seedNodes)
    while out.count < edges, node < Int64(nodes) {
        var chosen: Set<Int64> = []
        while chosen.count < perNode {
            chosen.insert(endpoints[Int.random(in: 0..<endpoints.count, using: &rng)])
        }
        for target in chosen.sorted() where out.count < edges {
            out.append((node, target, Double(Int.random(in: 1...10, using: &rng))))
            endpoints += [node, target]
        }
        node += 1
    }
    return out
}

/// Node i of the benchmark graph.
private func node(_ i: Int64) -> GraphNode { GraphNode("n", .int(i)) }

func runGraphBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench graph [--edges E] [--nodes N] [--queries Q] [--json FILE]
              A seeded preferential-attachment graph (default 1,000,000 links over 100,000 nodes,
              weights 1-10) linked through `database.links`. Outgoing 1-hop and 2-hop traversals and
              weighted shortest paths (to a node 3 hops away) from Q seeded start nodes (default 200):
              Trove (in-memory adjacency index, reader pool) alternating with hand-written recursive
              CTEs on the same `_trove_edges` table (UNION for each node once per depth, min depth;
              paths of at most 4 links for the shortest path), and Trove's SQL path (the same
              traversal inside a write transaction). p50/p99 in ms.
            """)
        return
    }
    let edgeCount = options.int("edges", 1_000_000)
    let nodeCount = options.int("nodes", 100_000)
    let queryCount = options.int("queries", 200)
    print("graph: \(edgeCount) links, \(nodeCount) nodes, \(queryCount) queries per kind, \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("trove-graph-\(getpid())")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("graph.trove").path

    let edges = preferentialAttachment(nodes: nodeCount, edges: edgeCount, seed: 16)
    let db = try Database(path: path)
    let (_, loadMs) = try await timedMilliseconds {
        for start in stride(from: 0, to: edges.count, by: 100_000) {
            let batch = edges[start..<min(edges.count, start + 100_000)].map { Link(from: node($0.0), label: "l", to: node($0.1), weight: $0.2) }
            try await db.links.link(batch)
        }
    }
    print(String(format: "link: %.1f s (%.0f links/s)", loadMs / 1000, Double(edges.count) / (loadMs / 1000)))
    try await db.checkpoint()
    let (_, indexMs) = try await timedMilliseconds { _ = try await db.links.neighbours(of: node(0)) }
    print(String(format: "adjacency index built from the table on first use: %.0f ms", indexMs))

    let hand = try Connection(.file(path), options: Connection.Options(readOnly: true, walMode: false, foreignKeys: false))
    try hand.execute(script: "PRAGMA cache_size = -16384; PRAGMA mmap_size = \(1 << 30)")
    let hopsSQL = """
        WITH RECURSIVE r(c, i, d) AS (
            SELECT 'n', ?1, 0
            UNION
            SELECT e.to_collection, e.to_id, r.d + 1 FROM r JOIN _trove_edges AS e
            ON e.from_collection = r.c AND e.from_id = r.i WHERE r.d < ?2)
        SELECT c, i, min(d) FROM r WHERE d > 0 GROUP BY c, i
        """
    let pathSQL = """
        WITH RECURSIVE p(i, w, d) AS (
            SELECT ?1, 0.0, 0
            UNION ALL
            SELECT e.to_id, p.w + e.weight, p.d + 1 FROM p JOIN _trove_edges AS e
            ON e.from_collection = 'n' AND e.from_id = p.i WHERE p.d < 4 AND p.i != ?2)
        SELECT min(w) FROM p WHERE i = ?2
        """

    var rng = BenchRandom(state: 99)
    let starts = (0..<queryCount).map { _ in Int64.random(in: 0..<Int64(nodeCount), using: &rng) }
    // Warm-up (not timed): every reader connection opened, statements prepared, pages cached.
    for start in starts.prefix(20) {
        _ = try await db.links.traverse(from: node(start), maxHops: 2)
        _ = try hand.cachedStatement(hopsSQL).rows([.integer(start), .integer(2)])
    }
    var report: [String: Any] = ["edges": edges.count, "nodes": nodeCount, "queries": queryCount,
                                 "link_s": loadMs / 1000, "index_build_ms": indexMs]
    print("\n| query | Trove p50 | Trove p99 | hand CTE p50 | p99 | Trove / CTE (p50) | Trove SQL path p50 | p99 | mean nodes |")
    print("|---|---|---|---|---|---|---|---|---|")
    for hops in [1, 2] {
        var trove = LatencySamples(), cte = LatencySamples(), sqlPath = LatencySamples()
        var total = 0
        for start in starts {
            let (a, ta) = try await timedMilliseconds { try await db.links.traverse(from: node(start), maxHops: hops) }
            let (b, tb) = try timedSync { try hand.cachedStatement(hopsSQL).rows([.integer(start), .integer(Int64(hops))]) }
            let (c, tc) = try await timedMilliseconds {
                try await db.write { tx in try tx.links.traverse(from: node(start), maxHops: hops).count }
            }
            trove.add(ta); cte.add(tb); sqlPath.add(tc)
            total += a.count
            if a.count != b.count || c != a.count { print("  note: \(hops)-hop from \(start): Trove \(a.count), CTE \(b.count), SQL path \(c)") }
        }
        print(String(format: "| %d-hop | %.3f | %.3f | %.3f | %.3f | %.2fx | %.3f | %.3f | %.0f |", hops, trove.p50, trove.p99, cte.p50, cte.p99,
                     trove.p50 / cte.p50, sqlPath.p50, sqlPath.p99, Double(total) / Double(starts.count)))
        report["\(hops)-hop"] = ["trove": trove.json, "cte": cte.json, "trove_sql_path": sqlPath.json, "ratio_p50": trove.p50 / cte.p50]
    }
    // Shortest paths to a node 3 hops away (found by the traversal), so the CTE's 4-link limit
    // covers a path; its answer is the lightest path of at most 4 links, Trove's the lightest of all.
    var trove = LatencySamples(), cte = LatencySamples(), sqlPath = LatencySamples()
    var lighter = 0, equal = 0, pairs = 0
    for start in starts {
        guard let target = try await db.links.traverse(from: node(start), maxHops: 3).last(where: { $0.depth == 3 })?.node else { continue }
        guard case .int(let goal) = target.id else { continue }
        pairs += 1
        let (a, ta) = try await timedMilliseconds { try await db.links.shortestPath(from: node(start), to: target) }
        let (b, tb) = try timedSync { try hand.scalar(pathSQL, [.integer(start), .integer(goal)])?.doubleValue }
        let (_, tc) = try await timedMilliseconds {
            try await db.write { tx in try tx.links.shortestPath(from: node(start), to: target)?.totalWeight }
        }
        trove.add(ta); cte.add(tb); sqlPath.add(tc)
        if let w = a?.totalWeight, let v = b { if w < v - 1e-9 { lighter += 1 } else if abs(w - v) < 1e-9 { equal += 1 } }
    }
    print(String(format: "| shortest path | %.3f | %.3f | %.3f | %.3f | %.2fx | %.3f | %.3f | - |", trove.p50, trove.p99, cte.p50, cte.p99,
                 trove.p50 / cte.p50, sqlPath.p50, sqlPath.p99))
    print("shortest paths: \(pairs) pairs; Trove's path weighs the same as the CTE's in \(equal), less (a path of more than 4 links) in \(lighter)")
    report["shortest-path"] = ["trove": trove.json, "cte": cte.json, "trove_sql_path": sqlPath.json, "ratio_p50": trove.p50 / cte.p50,
                               "pairs": pairs, "same_weight": equal, "trove_lighter": lighter]
    if let file = options.values["json"] {
        try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .prettyPrinted]).write(to: URL(fileURLWithPath: file))
        print("wrote \(file)")
    }
}
