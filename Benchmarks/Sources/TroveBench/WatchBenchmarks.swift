import Foundation
import Trove

/// `trove-bench watch`: time from a file save to its searchable record under `trove index
/// --watch`, p50 and p99 over N edits.
///
/// Runs the release `trove` binary (`../.build/release/trove`, or `--trove PATH`) on a folder of
/// notes in a temporary directory with all-MiniLM-L6-v2, waits for "watching", then edits one
/// note N times (a new unique word each time, one edit after the previous one became
/// searchable, a pause between edits so each is its own batch) and polls a second connection
/// every millisecond for a record of that file holding that word: the moment the transaction
/// with its text index and vectors committed. No peer: qmd, the tool people compare with, has
/// no watch mode (it re-indexes on `qmd update`).
///
/// Options: `--edits N` (default 100), `--notes N` other notes in the folder (default 200),
/// `--trove PATH`.
func runWatchBenchmarks(_ arguments: [String]) async throws {
    func option(_ name: String) -> String? {
        arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
    }
    let edits = Int(option("--edits") ?? "100") ?? 100
    let others = Int(option("--notes") ?? "200") ?? 200
    var repository = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { repository.deleteLastPathComponent() }
    let trove = option("--trove") ?? repository.appendingPathComponent(".build/release/trove").path
    guard FileManager.default.isExecutableFile(atPath: trove) else {
        throw BenchmarkError("no trove binary at \(trove): run 'swift build -c release --product trove' in the repository")
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("trove-bench-watch-\(UUID().uuidString)")
    let notes = folder.appendingPathComponent("notes")
    try FileManager.default.createDirectory(at: notes, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    for index in 0..<others {
        try Data("Note \(index): errands, groceries and a call to the bank on day \(index % 28 + 1).".utf8)
            .write(to: notes.appendingPathComponent("note\(index).md"))
    }
    let target = notes.appendingPathComponent("edited.md")
    try Data("The note being edited.".utf8).write(to: target)
    let databasePath = folder.appendingPathComponent("watch.sqlite").path
    print("watch: \(edits) edits of one note among \(others + 1), all-MiniLM-L6-v2, trove \(trove)")

    let process = Process()
    process.executableURL = URL(fileURLWithPath: trove)
    process.arguments = ["index", "--watch", "--model", "all-MiniLM-L6-v2", "--db", databasePath, notes.path]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    let started = Date()
    try process.run()
    defer { if process.isRunning { process.interrupt(); process.waitUntilExit() } }
    var seen = ""
    while !seen.contains("watching") {
        let data = errors.fileHandleForReading.availableData
        guard !data.isEmpty else { throw BenchmarkError("trove exited before watching: \(seen)") }
        seen += String(decoding: data, as: UTF8.self)
    }
    print(String(format: "initial index of %d notes: %.1f s", others + 1, Date().timeIntervalSince(started)))
    // Keep draining stderr so the child never blocks on a full pipe.
    errors.fileHandleForReading.readabilityHandler = { _ = $0.availableData }

    let database = try Database(path: databasePath)
    var latencies: [Double] = []
    for edit in 0..<edits {
        let word = "zq\(edit)x\(UInt32.random(in: 0...UInt32.max))"
        let saved = Date()
        try Data("The note being edited, version \(edit): \(word).".utf8).write(to: target)
        while true {
            let rows = try await database.query(
                "SELECT 1 FROM notes WHERE json_extract(metadata, '$.file') = ? AND content LIKE ?",
                bindings: [.text(target.path), .text("%\(word)%")])
            if !rows.isEmpty { break }
            if Date().timeIntervalSince(saved) > 10 { throw BenchmarkError("edit \(edit) not indexed after 10 s") }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        latencies.append(Date().timeIntervalSince(saved) * 1000)
        try await Task.sleep(nanoseconds: 20_000_000)
    }
    process.interrupt()
    process.waitUntilExit()
    let sorted = latencies.sorted()
    func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)] }
    print(String(format: "save -> searchable: p50 %.0f ms, p99 %.0f ms, max %.0f ms (%d edits; exit status %d)",
                 percentile(0.5), percentile(0.99), sorted.last ?? 0, edits, process.terminationStatus))
}

/// A benchmark that cannot run, with the reason.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
