import Foundation
import Testing
import Trove
import TroveChildProcess
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
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
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

    /// Runs the child to the end; returns its output lines, progress lines ("~ ...") left out.
    static func run(_ arguments: [String]) throws -> [String] {
        let (process, pipe) = try start(arguments)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init).filter
        {
            !$0.hasPrefix("~")
        }
    }

    static func start(_ arguments: [String]) throws -> (ChildProcess, Pipe) {
        let process = ChildProcess()
        process.executableURL = URL(
            fileURLWithPath: try #require(child, "TroveSyncCrashChild not built"))
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }

    /// Starts the child and kills it with SIGKILL once it has printed its `line`-th progress line
    /// (then waited `delay`): the kill is aimed by the child's own progress, not by a duration
    /// measured earlier on a machine whose load changes. True when the child was still running
    /// (it had not reached that line, or had ended meanwhile, otherwise).
    static func runAndKill(_ arguments: [String], onProgressLine line: Int, after delay: Duration)
        async throws -> Bool
    {
        let (process, pipe) = try start(arguments)
        // A thread of its own reads the progress and kills: neither GCD's pool nor the test
        // runner's tasks, which a loaded suite starves until the child has long ended.
        let pause = useconds_t(
            delay.components.seconds * 1_000_000 + delay.components.attoseconds / 1_000_000_000_000)
        let wasRunning = await withCheckedContinuation {
            (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                var text = ""
                var reached = true
                while text.split(separator: "\n").filter({ $0.hasPrefix("~") }).count < line {
                    let data = pipe.fileHandleForReading.availableData
                    if data.isEmpty {
                        reached = false
                        break
                    }  // it ended first
                    text += String(decoding: data, as: UTF8.self)
                }
                if reached, pause > 0 { usleep(pause) }
                let running = reached && process.isRunning
                kill(process.processIdentifier, SIGKILL)
                continuation.resume(returning: running)
            }.start()
        }
        // The rest of the output and the exit are awaited on a thread of their own too: a
        // blocking read on a task would hold one of the cooperative pool's threads.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                _ = pipe.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume()
            }.start()
        }
        return wasRunning
    }

    /// Kills `arguments` `kills` times, each on a random progress line of the first `lines`
    /// (plus up to 50 ms), trying a kill again without the delay when the child had already
    /// ended (at most three tries). Returns how many kills landed while the child ran.
    static func killRepeatedly(
        _ arguments: [String], kills: Int, lines: Int, using random: inout SeededGenerator
    ) async throws -> Int {
        var landed = 0
        for _ in 0..<kills {
            let line = Int.random(in: 1...lines, using: &random)
            var delay = Duration.milliseconds(Int.random(in: 0...50, using: &random))
            for _ in 0..<3 {
                if try await runAndKill(arguments, onProgressLine: line, after: delay) {
                    landed += 1
                    break
                }
                delay = .zero
            }
        }
        return landed
    }

    @Test func aDeviceKilledDuringPushAndDuringApplyLosesNothingAndDoublesNothing() async throws {
        var random = SeededGenerator(seed: 0x5c7a_5117)
        let directory = try TemporaryDirectory()
        let (a, b, c, server) = (
            directory.path("a.trove"), directory.path("b.trove"), directory.path("c.trove"),
            directory.path("server.trove")
        )
        #expect(try Self.run(["edit", a, server, "12000"]) == ["E 12000"])

        // Push, killed at random points (sealing, before and after the server's write), then
        // pushed to the end.
        let pushKills = try await Self.killRepeatedly(
            ["push", a, server], kills: 4, lines: 3, using: &random)
        #expect(pushKills > 0)
        let pushed = try Self.run(["push", a, server])
        #expect(pushed.first?.hasPrefix("P ") == true, "\(pushed)")

        // The server holds each change set once, numbered 1... without gaps.
        let feed = try Database(path: server)
        let rows = try await feed.query("SELECT device_sequence FROM feed ORDER BY server_sequence")
        let sequences = rows.compactMap { $0.int64(at: 0) }
        #expect(sequences == Array(1...Int64(sequences.count)))
        #expect(sequences.count == 6)  // 12,000 records, 2,000 per change set

        // Apply, killed at random points (the pull, the apply), then pulled to the end.
        _ = try Self.run(["edit", b, server, "0"])
        let pullKills = try await Self.killRepeatedly(
            ["pull", b, server], kills: 4, lines: 2, using: &random)
        #expect(pullKills > 0)
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
        let cursor = try await devices[1].query("SELECT pulled FROM _trove_sync_device").first?
            .int64(at: 0)
        #expect(cursor == Int64(sequences.count))
        let conflicts = try await devices[1].query("SELECT count(*) FROM _trove_sync_conflicts")
            .first?.int64(at: 0)
        #expect(conflicts == 0)
    }

}
