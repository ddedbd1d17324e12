import Foundation
import Testing
import Trove
import TroveCrashChild
import TroveSQLite
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process ingests batches (text, metadata, vectors, and an update of a counter row, one
/// transaction each) and prints each committed batch; it is killed with SIGKILL at a seeded random
/// moment, and the file is reopened and checked. `TROVE_CRASH_TRIALS` (default 10) sets the number
/// of kills, `TROVE_CRASH_SEED` the seed.
@Suite("Crash safety: SIGKILL at random moments", .serialized)
struct CrashTests {
    static let environment = ProcessInfo.processInfo.environment
    static let trials = environment["TROVE_CRASH_TRIALS"].flatMap(Int.init) ?? 10
    static let seed = environment["TROVE_CRASH_SEED"].flatMap(UInt64.init) ?? 20_261_130

    /// What one trial saw.
    struct Outcome {
        var started: Int?  // the batch the child found in the file (nil: killed before it said)
        var reported: Int  // the last batch the child reported committed
        var present: Int  // the last batch found in the file after the kill
        var rows: Int
    }

    @Test("every reported batch survives, no batch is partial, indexes agree with the table")
    func killAndReopen() async throws {
        try await killAndReopen(encryption: nil)
    }

    /// The kill loop; `encryption` (a raw key) makes the child and every check open the file encrypted.
    func killAndReopen(encryption: Data?) async throws {
        try #require(CrashChild.path != nil, "TroveCrashChild is not built")
        let environment =
            encryption.map {
                ["TROVE_CRASH_KEY_HEX": $0.map { String(format: "%02x", $0) }.joined()]
            } ?? [:]
        let dir = try TemporaryDirectory(prefix: "trove-crash")
        var rng = SeededGenerator(seed: Self.seed)
        var outcomes: [Outcome] = []
        var path = ""
        var previous = 0
        for trial in 0..<Self.trials {
            // A fresh file every 10 trials keeps each check small; the kills in between land on a
            // file that already went through earlier kills (recovery after recovery).
            if trial % 10 == 0 {
                path = dir.path("crash-\(trial).trove")
                previous = 0
            }
            let (process, pipe) = try CrashChild.start(
                ["ingest", path, "1000000"], environment: environment)
            let fd = pipe.fileHandleForReading.fileDescriptor
            var output = ""
            // Half the kills are timed from the start (they can land while the file or the
            // collection is being created or recovered), half from the first committed batch.
            let fromStart = rng.next() % 2 == 0
            if !fromStart { output += readUntil(fd, contains: "C ") }
            let delay = UInt32(rng.next() % 300_000)
            usleep(delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            output += String(
                decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(
                process.terminationReason == .uncaughtSignal,
                "trial \(trial): the child exited by itself: \(output)")
            #expect(
                !output.contains("E "), "trial \(trial): the child reported an error: \(output)")
            let lines = output.split(separator: "\n")
            let started = lines.last { $0.hasPrefix("S ") }.flatMap { Int($0.dropFirst(2)) }
            let reported =
                lines.compactMap { $0.hasPrefix("C ") ? Int($0.dropFirst(2)) : nil }.max()
                ?? started ?? previous
            let outcome = try await check(
                path: path, reported: reported, previous: previous, started: started,
                trial: trial, rng: &rng, encryption: encryption)
            outcomes.append(outcome)
            previous = outcome.present
        }
        let committedUnreported = outcomes.filter { $0.present == $0.reported + 1 }.count
        let beforeFirstBatch = outcomes.filter { $0.started == nil }.count
        // The child runs repair() after every 17th batch, so these kills most likely hit a repair.
        let duringRepair = outcomes.filter {
            $0.reported > 0 && $0.reported % 17 == 0 && $0.present == $0.reported
        }
        .count
        print(
            "crash trials\(encryption == nil ? "" : " (encrypted)"): \(outcomes.count) kills; batches reported \(outcomes.map(\.reported)); "
                + "killed between commit and report: \(committedUnreported); killed before the child said where it "
                + "started: \(beforeFirstBatch); killed after a batch that starts repair(): \(duringRepair); final rows per file: \(outcomes.map(\.rows))"
        )
    }

    /// Reads from `fd` until the text contains `marker` followed by a newline (or EOF).
    func readUntil(_ fd: Int32, contains marker: String) -> String {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 256)
        while !(text.contains(marker) && text.hasSuffix("\n")) {
            let n = read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            text += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        return text
    }

    func check(
        path: String, reported: Int, previous: Int, started: Int?, trial: Int,
        rng: inout SeededGenerator,
        encryption: Data? = nil
    ) async throws -> Outcome {
        let context = "trial \(trial) (reported \(reported), previous \(previous))"
        guard FileManager.default.fileExists(atPath: path) else {
            #expect(reported == 0, "\(context): file missing")
            return Outcome(started: started, reported: reported, present: 0, rows: 0)
        }
        // 1. SQLite's own check, on a plain connection, before Trove touches the file.
        do {
            let key = try encryption.map {
                try EncryptionKey(path: path, encryption: .key($0), create: false)
            }
            let raw = try Connection(.file(path), options: .init(encryption: key))
            let integrity = try raw.query("PRAGMA integrity_check").compactMap { $0.string(at: 0) }
            #expect(integrity == ["ok"], "\(context): \(integrity)")
        }
        let database =
            try encryption.map { try Database(path: path, encryption: .key($0)) }
            ?? Database(path: path)
        guard try await database.collectionNames().contains(CrashWorkload.collection) else {
            #expect(reported == 0, "\(context): collection missing")
            return Outcome(started: started, reported: reported, present: 0, rows: 0)
        }
        let collection = try await SearchCollection(named: CrashWorkload.collection, in: database)

        // 2. Every batch present is complete and exact; they are 1...present with no gap.
        let rows = try await database.query(
            "SELECT id, content, source, metadata, embedding FROM crash ORDER BY id")
        var byBatch: [Int: [VectorEntry]] = [:]
        for row in rows {
            let id = try #require(row.int64(at: 0))
            let vector = (row.blob(at: 4) ?? []).withUnsafeBytes {
                Array($0.bindMemory(to: Float.self))
            }
            let entry = VectorEntry(
                id: .int(id), content: row.string(at: 1) ?? "", source: row.string(at: 2) ?? "",
                metadata: row.string(at: 3), vector: vector)
            byBatch[CrashWorkload.batch(ofRow: id), default: []].append(entry)
        }
        let present = byBatch.keys.filter { $0 > 0 }.max() ?? 0
        #expect(
            present >= reported,
            "\(context): batch \(reported) was reported committed, the file ends at \(present)")
        #expect(
            present <= reported + 1,
            "\(context): \(present) batches present, only \(reported) reported")
        #expect(
            present >= previous,
            "\(context): batches committed before this trial are gone (\(present) < \(previous))")
        for batch in stride(from: 1, through: present, by: 1) {
            let expected = CrashWorkload.rows(of: batch)
            let found = byBatch[batch] ?? []
            if found != expected {
                Issue.record(
                    "\(context): batch \(batch) has \(found.count) of \(expected.count) rows or differs"
                )
            }
        }
        if present > 0 {
            #expect(
                byBatch[0] == [CrashWorkload.counter(after: present)],
                "\(context): counter row does not name batch \(present)")
        } else {
            #expect(byBatch[0] == nil)
        }
        let total = rows.count
        #expect(try await collection.count() == total)

        // 3. The derived indexes agree with the table.
        let report = try await database.verify()
        #expect(report.isHealthy, "\(context): \(report.problems)")

        // 4. Text and vector search find exactly what the table holds.
        if present > 0 {
            var sample: Set<Int> = [present]
            for _ in 0..<3 { sample.insert(1 + Int(rng.next() % UInt64(present))) }
            for batch in sample {
                let hits = try await collection.search(
                    Query().matching(.fts5(CrashWorkload.tag(batch))).limit(100))
                #expect(
                    Set(hits.map(\.id)) == Set(CrashWorkload.rows(of: batch).map(\.id)),
                    "\(context): text batch \(batch)")
                let row = CrashWorkload.rows(of: batch)[
                    Int(rng.next() % UInt64(CrashWorkload.size(of: batch)))]
                let nearest = try await collection.search(vector: row.vector, limit: 1)
                #expect(nearest.first?.id == row.id, "\(context): vector search for row \(row.id)")
            }
            #expect(
                try await collection.search(Query().matching(.fts5(CrashWorkload.tag(present + 1))))
                    .isEmpty)
            let all = try await collection.search(
                vector: CrashWorkload.vector(seed: 1), limit: Query.maximumLimit)
            #expect(
                all.count == total,
                "\(context): vector search returns \(all.count) of \(total) rows")
        }
        return Outcome(started: started, reported: reported, present: present, rows: total)
    }
}
