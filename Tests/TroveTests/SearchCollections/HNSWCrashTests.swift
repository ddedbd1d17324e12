import Foundation
import Testing
import TroveChildProcess
import TroveTestSupport

@testable import Trove

/// The TroveANNCrashChild executable, built next to the test bundle by `swift build --build-tests`.
enum ANNCrashChild {
    static let path: String? = {
        if let path = ProcessInfo.processInfo.environment["TROVE_ANN_CRASH_CHILD"] { return path }
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var dir = start
            for _ in 0..<4 {
                candidates.append(dir.appendingPathComponent("TroveANNCrashChild"))
                dir = dir.deletingLastPathComponent()
            }
        }
        let repo = TestPaths.repository
        candidates.append(repo.appendingPathComponent(".build/debug/TroveANNCrashChild"))
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}

@Suite("HNSW collections survive SIGKILL")
struct HNSWCrashTests {
    /// Starts the child, lets it commit `batches` batches (past at least one automatic snapshot),
    /// then kills it with SIGKILL `delayMicroseconds` later: in the middle of a later batch, its
    /// index update or a snapshot save.
    func runAndKill(path: String, seed: UInt64, batches: Int, delayMicroseconds: UInt32) throws
        -> Int
    {
        let process = ChildProcess()
        process.executableURL = URL(
            fileURLWithPath: try #require(ANNCrashChild.path, "TroveANNCrashChild not built"))
        process.arguments = [path, String(seed)]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        var output = ""
        var committed = 0
        while committed < batches {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }  // the child exited (an error): reported below
            output += String(decoding: data, as: UTF8.self)
            committed = output.split(separator: "\n").filter { $0.hasPrefix("committed") }.count
        }
        #expect(process.isRunning, "the child stopped early: \(output)")
        usleep(delayMicroseconds)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        return committed
    }

    @Test("after a SIGKILL mid-batch, the reopened HNSW index holds exactly the table's vectors")
    func killedMidBatch() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("crash.trove")
        // Two rounds on the same file, killed at different moments.
        for (round, delay) in [(UInt64(1), UInt32(7_000)), (2, 23_000)] {
            let committed = try runAndKill(
                path: path, seed: round, batches: 20, delayMicroseconds: delay)
            #expect(committed >= 20)
            let db = try Database(path: path)
            let items = try await SearchCollection(named: "items", in: db)
            let stats = try await items.loadIndex()
            // The child saved snapshots as it went: the reopened index starts from one.
            #expect(stats.origin == .snapshot, "round \(round): \(stats.origin)")
            let table = try await tableVectors(db, table: "items", metric: .cosine)
            #expect(!table.isEmpty)
            #expect(agree(try await indexContents(items), table), "round \(round)")
            // And its answers are right: a stored vector finds its own row.
            for id in table.keys.sorted().prefix(5) {
                let hits = try await items.search(vector: table[id]!, limit: 1)
                #expect(hits.first.map { $0.id == .int(id) || ($0.distance ?? 1) < 1e-5 } == true)
            }
        }
    }
}
