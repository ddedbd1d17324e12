import Foundation

/// `../shared` beside the repository, found from this source file's location so no machine path
/// is baked in; `TROVE_SHARED` overrides it.
let sharedDirectory: String = {
    if let path = ProcessInfo.processInfo.environment["TROVE_SHARED"] { return path }
    // Benchmarks/Sources/TroveBench/SharedDirectory.swift -> the repository -> ../shared
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.appendingPathComponent("../shared").standardizedFileURL.path
}()

/// Where ../shared/bench/setup.sh puts the peers' venv, data and results: `TROVE_BENCH_CACHE`,
/// by default `trove-bench` in the temporary folder (setup.sh's default, /tmp/trove-bench).
let benchCache: String = ProcessInfo.processInfo.environment["TROVE_BENCH_CACHE"]
    ?? FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench").path
