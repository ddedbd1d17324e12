// trove-bench text: the in-memory BM25 leg (TroveText) on 58,029 Debian package descriptions,
// 1,000 synopsis queries, side by side with FTS5, bm25s and tantivy (../shared/bench/peers/text.py).
import Foundation
@_spi(Benchmarks) import Trove

private struct TextBenchmarkError: Error, CustomStringConvertible {
    let description: String
}


private let peersDirectory = ProcessInfo.processInfo.environment["TROVE_BENCH_PEERS"] ?? sharedBenchDirectory + "/peers"

func runTextBenchmarks(_ arguments: [String]) async throws {
    if arguments.contains("--dev") { return try runTextDevEvaluation(arguments) }
    let runPeers = !arguments.contains("--no-peers")
    // `--peers bm25s,tantivy` runs only those peers (FTS5's OR queries take minutes on a busy machine).
    let peerEngines = arguments.firstIndex(of: "--peers").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
        ?? "fts5,bm25s,tantivy"
    let python = "\(benchCache)/venv/bin/python"
    let corpusPath = "\(benchCache)/data/packages.jsonl"
    guard FileManager.default.fileExists(atPath: corpusPath) else {
        throw TextBenchmarkError(description: "missing \(corpusPath): run \(python) bench/data/build_corpora.py")
    }

    // Corpus and queries (outside the timed part).
    let lines = try String(contentsOfFile: corpusPath, encoding: .utf8).split(separator: "\n")
    var bodies: [String] = []
    var synopses: [String] = []
    for line in lines {
        guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
              let body = object["body"] as? String, let synopsis = object["synopsis"] as? String
        else { throw TextBenchmarkError(description: "bad row in \(corpusPath)") }
        bodies.append(body)
        synopses.append(synopsis)
    }
    // The same 1,000 rows as peers/text.py: numpy default_rng(42).choice(N, 1000, replace=False), sorted.
    let rowsOutput = try runProcess(python, ["-c", """
        import numpy as np; print(" ".join(map(str, np.sort(np.random.default_rng(42).choice(\(bodies.count), size=1000, replace=False)))))
        """])
    let rows = rowsOutput.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    guard rows.count == 1000 else { throw TextBenchmarkError(description: "could not draw the query rows") }

    print("trove-bench text: \(bodies.count) package descriptions, \(rows.count) synopsis queries (rows: numpy default_rng(42)), top-10")
    print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, load average at start \(loadAverage())")
    print("timing: each query alone (parse + search), one thread, 10 warm-up queries, 2 passes, faster pass kept\n")

    // Tokenizer throughput alone (FTS5 calls it for every insert and query on CJK collections).
    for configuration in [TokenizerConfiguration.unicode, .english, .cjk] {
        let tokenizer = Tokenizer(configuration)
        var terms = 0
        var bytes = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for var body in bodies {
            bytes += body.utf8.count
            body.withUTF8 { tokenizer.forEachTerm(utf8: $0) { _, _, _ in terms += 1; return true } }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        print("tokenizer \(configuration): \(terms) terms, "
              + String(format: "%.1f MB/s, %.0f ns/term", Double(bytes) / seconds / 1e6, seconds * 1e9 / Double(max(terms, 1))))
    }
    var notes: [String] = []
    print("engine                                   build s   p50 ms   p99 ms  mean ms   hit@1   hit@3  MRR@10  hit@10")
    for (name, configuration, stopwords, exhaustive) in [
        ("trove BM25Index unicode61, MaxScore", TokenizerConfiguration.unicode, Set<String>(), false),
        ("trove BM25Index unicode61, exhaustive", TokenizerConfiguration.unicode, Set<String>(), true),
        ("trove BM25Index porter+stopwords (default)", TokenizerConfiguration.english, Stopwords.english, false),
    ] {
        let rssBefore = residentMegabytes()
        let start = DispatchTime.now().uptimeNanoseconds
        var index = BM25Index(tokenizer: Tokenizer(configuration))
        for (row, body) in bodies.enumerated() { index.add(id: Int64(row), text: body) }
        let build = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        let search: (String) -> [Int64] = { text in
            let query = TypedQuery(text, tokenizer: index.tokenizer, stopwords: stopwords)
            let clauses = query.clauses.map(\.terms)
            let hits = exhaustive ? index.exhaustiveSearch(clauses: clauses, topK: 10)
                                  : index.search(clauses: clauses, topK: 10)
            return hits.map(\.id)
        }
        let (results, latencies) = timeQueries(rows.map { synopses[$0] }, search)
        let quality = Quality(results, targets: rows.map(Int64.init))
        print(row(name, build: build, latencies: latencies, quality: quality))
        notes.append("\(name): resident memory grew \(Int(residentMegabytes() - rssBefore)) MB while building; "
                     + "slowest queries: " + zip(latencies, rows).sorted { $0.0 > $1.0 }.prefix(3)
                        .map { String(format: "%.1f ms ", $0.0) + "\"\(synopses[$0.1])\"" }.joined(separator: ", "))
        withExtendedLifetime(index) {}
    }
    for note in notes { print("  " + note) }
    print("load average at end \(loadAverage())")

    guard runPeers else { return }
    print("\npeers (same run): \(python) \(peersDirectory)/text.py --engines \(peerEngines)")
    _ = try runProcess(python, ["\(peersDirectory)/text.py", "--engines", peerEngines], echo: false)
    let resultsPath = "\(benchCache)/results/text_pkg.json"
    guard let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: resultsPath))) as? [String: Any]
    else { throw TextBenchmarkError(description: "could not read \(resultsPath)") }
    for (label, key, sub) in [("FTS5 bm25(), OR of words", "fts5", "query"),
                              ("FTS5 bm25(), OR, stop words dropped", "fts5", "query_stopwords_removed"),
                              ("bm25s (k1 1.5)", "bm25s", "query"), ("tantivy", "tantivy", "query")] {
        guard peerEngines.split(separator: ",").contains(Substring(key)),
              let engine = json[key] as? [String: Any], let stats = engine[sub] as? [String: Any] else { continue }
        let quality = (stats["quality"] as? [String: Any]) ?? (engine["quality"] as? [String: Any]) ?? [:]
        func number(_ dictionary: [String: Any], _ key: String) -> Double { (dictionary[key] as? Double) ?? .nan }
        let build = number(engine, "build_s")
        print(label.padding(toLength: 40, withPad: " ", startingAt: 0)
              + String(format: " %8.2f %8.3f %8.3f %8.3f  %6.3f  %6.3f  %6.3f  %6.3f", build,
                       number(stats, "lat_ms_p50"), number(stats, "lat_ms_p99"), number(stats, "lat_ms_mean"),
                       number(quality, "hit@1"), number(quality, "hit@3"), number(quality, "mrr@10"),
                       number(quality, "hit@10")))
    }
}

private struct Quality {
    var hit1 = 0.0, hit3 = 0.0, hit10 = 0.0, mrr = 0.0

    init(_ results: [[Int64]], targets: [Int64]) {
        for (ranked, target) in zip(results, targets) {
            guard let position = ranked.prefix(10).firstIndex(of: target) else { continue }
            mrr += 1 / Double(position + 1)
            if position < 1 { hit1 += 1 }
            if position < 3 { hit3 += 1 }
            hit10 += 1
        }
        let n = Double(targets.count)
        hit1 /= n; hit3 /= n; hit10 /= n; mrr /= n
    }
}

private func timeQueries(_ queries: [String], _ search: (String) -> [Int64]) -> ([[Int64]], [Double]) {
    for query in queries.prefix(10) { _ = search(query) }
    var best: (total: Double, results: [[Int64]], latencies: [Double])?
    for _ in 0..<2 {
        var results: [[Int64]] = []
        var latencies: [Double] = []
        let passStart = DispatchTime.now().uptimeNanoseconds
        for query in queries {
            let start = DispatchTime.now().uptimeNanoseconds
            results.append(search(query))
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        let total = Double(DispatchTime.now().uptimeNanoseconds - passStart)
        if best == nil || total < best!.total { best = (total, results, latencies) }
    }
    guard let best, best.results.allSatisfy({ !$0.isEmpty }) || true else { return ([], []) }
    return (best.results, best.latencies)
}

private func row(_ name: String, build: Double, latencies: [Double], quality: Quality) -> String {
    let sorted = latencies.sorted()
    func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p / 100) * Double(sorted.count - 1) + 0.5))] }
    let mean = latencies.reduce(0, +) / Double(latencies.count)
    return name.padding(toLength: 40, withPad: " ", startingAt: 0)
        + String(format: " %8.2f %8.3f %8.3f %8.3f  %6.3f  %6.3f  %6.3f  %6.3f", build, percentile(50), percentile(99), mean,
                 quality.hit1, quality.hit3, quality.mrr, quality.hit10)
}

/// This process's resident set size (VmRSS), in MB.
private func residentMegabytes() -> Double {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) / 1024
}

private func loadAverage() -> String {
    ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").prefix(3).joined(separator: " ")
}

private func runProcess(_ executable: String, _ arguments: [String], echo: Bool = false) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TextBenchmarkError(description: "\(executable) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
    }
    return String(decoding: data, as: UTF8.self)
}
