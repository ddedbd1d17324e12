import Foundation
import Testing
import Trove
import TroveCrashChild
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Readers and writers at the same time: in one Database, across connections, across processes.
/// Writes are 10-row batches whose rows share a tag word, so any read that sees part of a batch
/// is caught. Run under TSan with
/// `swift test --sanitize=thread --scratch-path .build-tsan --filter ConcurrencyReliabilityTests`.
@Suite("Concurrency: readers, writers, processes", .serialized)
struct ConcurrencyReliabilityTests {
    static let batchSize = 10

    static func batch(_ b: Int, base: Int64 = 0, dimension: Int = 8) -> [VectorEntry] {
        (0..<Int64(batchSize)).map { i -> VectorEntry in
            let id: Int64 = base + Int64(b) * Int64(batchSize) + i + 1
            return VectorEntry(
                id: .int(id), content: "tag\(base)x\(b) row \(i) shared", source: "b\(b % 3)",
                metadata: "{\"b\":\(b)}",
                vector: CrashWorkload.vector(seed: UInt64(id)).prefix(dimension).map { $0 })
        }
    }

    /// Checks one reader's view: counts in whole batches, and a batch's tag finds all of it or none.
    static func checkWholeBatches(
        _ items: SearchCollection, rng: inout SeededGenerator, batches: Int
    ) async throws {
        let count = try await items.count()
        #expect(count % batchSize == 0, "count \(count) is not whole batches")
        let all = try await items.search(
            vector: CrashWorkload.vector(seed: rng.next()).prefix(8).map { $0 }, limit: 10_000)
        #expect(all.count % batchSize == 0, "vector search saw \(all.count) rows")
        let b = Int(rng.next() % UInt64(batches))
        let tagged = try await items.search(Query().matching(.fts5("tag0x\(b)")).limit(100))
        #expect(
            tagged.count == 0 || tagged.count == batchSize,
            "batch \(b): \(tagged.count) rows visible")
        let hybrid = try await items.search(
            Query().nearest(to: [1, 0, 0, 0, 0, 0, 0, 0], in: "embedding").matching(
                .typed("shared")
            ).limit(10_000))
        #expect(hybrid.count % batchSize == 0, "hybrid search saw \(hybrid.count) rows")
    }

    @Test("12 reader tasks and one writer on one Database: every read sees whole batches")
    func readersAndWriterOneDatabase() async throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("one.trove"))
        let items = try await SearchCollection("items", in: database, dimension: 8)
        let batches = 30
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for b in 0..<batches { try await items.insert(Self.batch(b)) }
            }
            for r in 0..<12 {
                group.addTask {
                    var rng = SeededGenerator(seed: UInt64(r))
                    for _ in 0..<8 {
                        try await Self.checkWholeBatches(items, rng: &rng, batches: batches)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await items.count() == batches * Self.batchSize)
        #expect(try await database.verify().isHealthy)
    }

    @Test(
        "one writer connection and 4 reader connections on one file: whole batches, then all rows")
    func readersAndWriterSeparateConnections() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("many.trove")
        let writer = try await SearchCollection("items", in: Database(path: path), dimension: 8)
        var readers: [SearchCollection] = []
        for _ in 0..<4 {
            readers.append(
                try await SearchCollection("items", in: Database(path: path), dimension: 8))
        }
        let batches = 30
        let snapshot = readers
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for b in 0..<batches { try await writer.insert(Self.batch(b)) }
            }
            for (r, reader) in snapshot.enumerated() {
                group.addTask {
                    var rng = SeededGenerator(seed: UInt64(50 + r))
                    for _ in 0..<10 {
                        try await Self.checkWholeBatches(reader, rng: &rng, batches: batches)
                    }
                }
            }
            try await group.waitForAll()
        }
        // Each reader's vector index caught up from the change log the writer's triggers filled.
        for reader in readers {
            #expect(
                try await reader.search(vector: Self.batch(29)[3].vector, limit: 1).first?.id
                    == Self.batch(29)[3].id)
            #expect(try await reader.count() == batches * Self.batchSize)
            #expect(try await reader.database.verify().isHealthy)
        }
    }

    @Test(
        "two processes write and read one file while this one reads: no busy errors, whole batches")
    func twoProcesses() async throws {
        try #require(CrashChild.path != nil)
        let dir = try TemporaryDirectory()
        let path = dir.path("shared.trove")
        let batches = 200
        // Both children start at once on a file that does not exist yet: creating the file, the
        // WAL switch and the collection race too.
        let children = try [Int64(0), 1_000_000].map { base in
            try CrashChild.start(["writer", path, "\(batches)", "\(base)"])
        }
        var rng = SeededGenerator(seed: 9)
        var reads = 0
        // Read while they write, through one connection opened once the collection exists.
        var reader: SearchCollection?
        var openFailures: [String] = []
        while children.contains(where: { $0.0.isRunning }) {
            if reader == nil, FileManager.default.fileExists(atPath: path) {
                do {
                    let database = try Database(path: path)
                    if try await database.collectionNames().contains("shared") {
                        reader = try await SearchCollection(named: "shared", in: database)
                    }
                } catch {
                    openFailures.append("\(error)")
                }
            }
            if let shared = reader {
                for _ in 0..<5 {
                    let count = try await shared.count()
                    #expect(count % Self.batchSize == 0, "count \(count) is not whole batches")
                    let hits = try await shared.search(
                        vector: CrashWorkload.vector(seed: rng.next()).prefix(8).map { $0 },
                        limit: 10_000)
                    #expect(
                        hits.count % Self.batchSize == 0, "vector search saw \(hits.count) rows")
                    reads += 1
                }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        // The file may not be a database yet while the first child creates it; anything else is a failure.
        #expect(
            openFailures.allSatisfy {
                $0.contains("not a database") || $0.contains("unable to open")
            },
            "\(openFailures)")
        #expect(reads > 0, "this process never read while the writers wrote")
        for (process, pipe) in children {
            await CrashChild.waitForExit(process)
            let output = String(
                decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(output)")
            #expect(!output.contains("E "), "a writer saw an error: \(output)")
            #expect(output.contains("D \(batches) 0"), "\(output)")
        }
        let database = try Database(path: path)
        let shared = try await SearchCollection(named: "shared", in: database)
        #expect(try await shared.count() == 2 * batches * Self.batchSize)
        #expect(try await database.verify().isHealthy)
        print(
            "two processes: \(2 * batches) batches written, \(reads) reads in this process while they wrote; open failures: \(openFailures)"
        )
    }

    @Test(
        "a writer process killed mid-write neither blocks nor damages the other writer",
        arguments: [UInt64(1), 2, 3])
    func killedWriter(seed: UInt64) async throws {
        try #require(CrashChild.path != nil)
        let dir = try TemporaryDirectory()
        let path = dir.path("killed.trove")
        // Create the collection first so both start writing at once.
        _ = try await SearchCollection("shared", in: Database(path: path), dimension: 8)
        let batches = 150
        let victim = try CrashChild.start(["writer", path, "100000", "0"])
        let survivor = try CrashChild.start(["writer", path, "\(batches)", "1000000"])
        var rng = SeededGenerator(seed: seed)
        try await Task.sleep(for: .microseconds(50_000 + rng.next() % 400_000))
        kill(victim.0.processIdentifier, SIGKILL)
        await CrashChild.waitForExit(victim.0)
        await CrashChild.waitForExit(survivor.0)
        let output = String(
            decoding: survivor.1.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(survivor.0.terminationStatus == 0 && output.contains("D \(batches) 0"), "\(output)")
        #expect(!output.contains("E "), "\(output)")
        let database = try Database(path: path)
        let shared = try await SearchCollection(named: "shared", in: database)
        #expect(try await shared.count(where: .source("w1000000")) == batches * Self.batchSize)
        #expect(
            try await shared.count(where: .source("w0")) % Self.batchSize == 0,
            "the killed writer left a partial batch")
        #expect(try await database.verify().isHealthy)
        print(
            "killed writer: \(try await shared.count(where: .source("w0")) / Self.batchSize) of its batches committed before the kill"
        )
    }
}
