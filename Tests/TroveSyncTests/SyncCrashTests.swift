import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A device process killed with SIGKILL while it pushes and while it applies: after a restart
/// nothing is lost and nothing is stored or applied twice.
@Suite(.serialized) struct SyncCrashTests {
    static let child: String? = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var dir = start
            for _ in 0..<4 {
                candidates.append(dir.appendingPathComponent("TroveSyncCrashChild"))
                dir = dir.deletingLastPathComponent()
            }
        }
        candidates.append(repo.appendingPathComponent(".build/debug/TroveSyncCrashChild"))
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Runs the child to the end; returns its output lines.
    static func run(_ arguments: [String]) throws -> [String] {
        let (process, pipe) = try start(arguments)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    static func start(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(child, "TroveSyncCrashChild not built"))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }

    /// Starts the child and kills it with SIGKILL after `delay`; true when it was still running.
    static func runAndKill(_ arguments: [String], after delay: Duration) async throws -> Bool {
        let (process, pipe) = try start(arguments)
        try await Task.sleep(for: delay)
        let wasRunning = process.isRunning
        kill(process.processIdentifier, SIGKILL)
        _ = pipe.fileHandleForReading.readDataToEndOfFile()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
        return wasRunning
    }

    /// How long a full run of `arguments` takes on a copy of the files (to aim the kills inside it).
    static func duration(of mode: String, device: String, server: String, in directory: TemporaryDirectory) throws -> Duration {
        let copies = ["probe-device.trove", "probe-server.trove"].map(directory.path)
        for (source, copy) in zip([device, server], copies) {
            for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
                try? FileManager.default.removeItem(atPath: copy + suffix)
                try FileManager.default.copyItem(atPath: source + suffix, toPath: copy + suffix)
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        _ = try run([mode, copies[0], copies[1]])
        return clock.now - start
    }

    @Test func aDeviceKilledDuringPushAndDuringApplyLosesNothingAndDoublesNothing() async throws {
        var random = SeededGenerator(seed: 0x5c7a_5117)
        let directory = try TemporaryDirectory()
        let (a, b, c, server) = (
            directory.path("a.trove"), directory.path("b.trove"), directory.path("c.trove"), directory.path("server.trove"))
        #expect(try Self.run(["edit", a, server, "12000"]) == ["E 12000"])

        // Push, killed at random moments inside a full push's time, then pushed to the end.
        let pushTime = try Self.duration(of: "push", device: a, server: server, in: directory)
        var killedWhileRunning = 0
        for _ in 0..<4 {
            let fraction = Double.random(in: 0.05...0.95, using: &random)
            if try await Self.runAndKill(["push", a, server], after: pushTime * fraction) { killedWhileRunning += 1 }
        }
        #expect(killedWhileRunning > 0)
        let pushed = try Self.run(["push", a, server])
        #expect(pushed.first?.hasPrefix("P ") == true, "\(pushed)")

        // The server holds each change set once, numbered 1... without gaps.
        let feed = try Database(path: server)
        let rows = try await feed.query("SELECT device_sequence FROM feed ORDER BY server_sequence")
        let sequences = rows.compactMap { $0.int64(at: 0) }
        #expect(sequences == Array(1...Int64(sequences.count)))
        #expect(sequences.count == 6)  // 12,000 records, 2,000 per change set

        // Apply, killed at random moments, then pulled to the end.
        _ = try Self.run(["edit", b, server, "0"])
        let pullTime = try Self.duration(of: "pull", device: b, server: server, in: directory)
        killedWhileRunning = 0
        for _ in 0..<4 {
            let fraction = Double.random(in: 0.05...0.95, using: &random)
            if try await Self.runAndKill(["pull", b, server], after: pullTime * fraction) { killedWhileRunning += 1 }
        }
        #expect(killedWhileRunning > 0)
        let pulled = try Self.run(["pull", b, server])
        #expect(pulled.first?.hasPrefix("A ") == true, "\(pulled)")
        _ = try Self.run(["edit", c, server, "0"])
        _ = try Self.run(["pull", c, server])

        // Everything arrived, once: B (killed while applying) and C (never killed) equal A.
        let devices = try [a, b, c].map { try Database(path: $0) }
        var dumps: [[String]] = []
        for database in devices {
            let notes = try await database.documents(named: "notes")
            #expect(try await notes.count() == 12_000)
            #expect(try await notes.fetch(id: "n11999")?["title"] == "note 11999")
            dumps.append(try await canonicalDump(of: database))
        }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[0] == dumps[2])
        // Applied once: a second apply would be a change of nothing, but the cursor says where
        // B stands and it stands at the end.
        let cursor = try await devices[1].query("SELECT pulled FROM _trove_sync_device").first?.int64(at: 0)
        #expect(cursor == Int64(sequences.count))
        let conflicts = try await devices[1].query("SELECT count(*) FROM _trove_sync_conflicts").first?.int64(at: 0)
        #expect(conflicts == 0)
    }

}
