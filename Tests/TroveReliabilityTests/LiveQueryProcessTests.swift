import Foundation
import Testing
import TroveCrashChild
import TroveTestSupport

@testable import Trove

/// Live queries seeing commits made by another process (the TroveCrashChild `documents` mode),
/// found by the `data_version` poller and checked against the collections' change logs.
@Suite("Live queries across processes", .timeLimit(.minutes(10)))
struct LiveQueryProcessTests {
    /// Counts how often an observed read actually ran.
    final class Runs: @unchecked Sendable {
        // @unchecked Sendable: `count` is only touched under `lock`.
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    static func runChild(
        _ path: String, collection: String, first: Int64, count: Int, category: String = "c0",
        environment: [String: String] = [:]
    ) async throws {
        let (process, pipe) = try CrashChild.start(
            ["documents", path, collection, String(first), String(count), category],
            environment: environment)
        await CrashChild.waitForExit(process)
        let output = String(
            decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "child: \(output)")
        #expect(output.split(separator: "\n").count == count)
    }

    @Test("another process's commits are delivered, in order, ending at its final state")
    func otherProcessCommits() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let path = dir.path("shared.trove")
        let db = try Database(path: path)
        let items = try await db.documents("items", schema: ObservedWorkload.schema)
        var iterator = items.observeCount(where: Field("category") == "c0").makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        let child = Task { try await Self.runChild(path, collection: "items", first: 1, count: 20) }
        var seen: [Int] = []
        while seen.last != 20, let count = try await iterator.next() { seen.append(count) }
        try await child.value
        // Coalesced (the poller may see several commits at once) but never repeated or reordered.
        #expect(seen == seen.sorted() && Set(seen).count == seen.count && seen.last == 20)
    }

    @Test("another process's writes to an unrelated collection run no read")
    func otherProcessUnrelatedWrites() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let path = dir.path("shared.trove")
        let db = try Database(path: path)
        _ = try await db.documents("items", schema: ObservedWorkload.schema)
        _ = try await db.documents("other", schema: ObservedWorkload.schema)
        let runs = Runs()
        let query = db.observe { r in
            runs.increment()
            return try r.documents("items").count(where: Field("category") == "c0")
        }
        let values = AsyncStream<Int>.makeStream()
        let consumer = Task { for try await count in query { values.continuation.yield(count) } }
        defer { consumer.cancel() }
        var delivered = values.stream.makeAsyncIterator()
        #expect(await delivered.next() == 0)
        let mark = db.changeHub.wakesTaken
        try await Self.runChild(path, collection: "other", first: 1, count: 10)
        // The poller saw the other process's commits and woke the query, which ran no read.
        while !(db.changeHub.wakesTaken > mark && db.changeHub.allWaiting) {
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(runs.value == 1)
        try await Self.runChild(path, collection: "items", first: 1, count: 1)
        #expect(await delivered.next() == 1)
        #expect(runs.value == 2)
    }

    @Test("an encrypted file: the poller reads it with the database's key")
    func encryptedFile() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let path = dir.path("secret.trove")
        let key = Data((0..<32).map { UInt8($0 * 7 % 256) })
        let db = try Database(path: path, encryption: .key(key))
        let items = try await db.documents("items", schema: ObservedWorkload.schema)
        var iterator = items.observeCount().makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        let hex = key.map { String(format: "%02x", $0) }.joined()
        try await Self.runChild(
            path, collection: "items", first: 1, count: 3, environment: ["TROVE_CRASH_KEY_HEX": hex]
        )
        var last = 0
        while last != 3, let count = try await iterator.next() { last = count }
        #expect(last == 3)
    }
}
