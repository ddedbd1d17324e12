// trove-bench sync-join: a new device joining a space from the newest snapshot plus the tail of
// the feed, against one replaying the whole feed, through PostgreSQL.
import Foundation
import Trove
import TroveSync

/// The feed's transport seen through the plain SyncTransport requirements only: no snapshots, no
/// byte budget, no cursors, so a device on it replays the whole feed.
private final class FeedOnly: SyncTransport, @unchecked Sendable {
    // Forwards to `base` only, which is Sendable.
    let base: PostgresTransport
    init(_ base: PostgresTransport) { self.base = base }
    func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] { try await base.push(changeSets, space: space) }
    func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        try await base.pull(space: space, after: after, limit: limit)
    }
    func notifications(space: String) -> AsyncStream<Void> { AsyncStream { $0.finish() } }
    func keyCheck(space: String) async throws -> Data? { try await base.keyCheck(space: space) }
    func setKeyCheck(_ check: Data, space: String) async throws -> Data { try await base.setKeyCheck(check, space: space) }
}

func runSyncJoinBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    guard !options.has("help") else {
        print("""
            trove-bench sync-join [--server URL] [--notes N] [--rounds R] [--tail T] [--edits E] [--dimension D] [--repeat K]
              URL: a libpq URL of a role that may install the schema and create roles (a scratch database);
              without it, a PostgreSQL 15 server of its own (Debian's, fsync on) is started and stopped.
              Device A inserts N notes (default 5,000: title, ~40-word body, a D-dimensional vector,
              default 64, full text) and pushes them, then R times (default 300) edits E random notes
              (default 100: body and vector) and pushes, one change set per round: a feed whose
              changes are mostly overwritten. A uploads a snapshot (a device that pulled nothing holds
              pruning back, so the whole feed stays), then pushes T more rounds (default 30: the tail).
              Then K times (default 3) two new devices pull
              the space: one replaying the whole feed (a transport without snapshots), one joining
              from the snapshot plus the tail; each is timed from its first pull to the last note
              applied (download and apply), and their notes are compared.
            """)
        return
    }
    let postgres = try BenchPostgres(options)
    let adminURL = postgres.adminURL
    print("PostgreSQL: \(postgres.description)")
    let count = options.int("notes", 5_000)
    let rounds = options.int("rounds", 300)
    let tail = options.int("tail", 30)
    let edits = options.int("edits", 100)
    let dimension = options.int("dimension", 64)
    let repeats = options.int("repeat", 3)
    let fixture = try await SyncBenchServer(adminURL: adminURL, roles: 1)
    defer { fixture.dropRoles() }
    print("sync-join: \(count) notes, \(rounds) rounds of \(edits) edits then \(tail) after the snapshot, \(dimension)-d vectors, \(repeats) repeats, \(fixture.serverVersion)")

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-sync-join-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let schema = DocumentSchema(
        id: .string, fields: [.text("title"), .text("body"), .vector("embedding", dimension: dimension)],
        fullText: FullTextDefinition(fields: ["title", "body"]))
    var random = BenchRandom(state: 0x501_9e1)
    let words = (0..<2_000).map { "w\($0)" }
    func body() -> String { (0..<40).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }.joined(separator: " ") }
    func vector() -> [Float] { (0..<dimension).map { _ in Float.random(in: -1...1, using: &random) } }

    let space = "join-\(getpid())"
    let key = try SyncKey.random()
    let transport = try PostgresTransport(url: fixture.deviceURLs[0])
    defer { transport.close() }
    try await transport.createSpace(space)
    _ = try await transport.reportCursor(0, device: "holdout", space: space)

    // Setup (not timed): the writer's history.
    let writer = try Database(path: directory.appendingPathComponent("writer.trove").path)
    let notes = try await writer.documents("notes", schema: schema)
    for first in stride(from: 0, to: count, by: 500) {
        try await notes.insert((first..<min(count, first + 500)).map {
            Document(id: .string("n\($0)"), ["title": .string("note \($0)"), "body": .string(body()), "embedding": .vector(vector())])
        })
    }
    let writerSync = try await SyncSpace(database: writer, space: space, key: key, transport: transport, collections: ["notes"])
    try await writerSync.push()
    for _ in 0..<rounds {
        for _ in 0..<edits {
            let id = "n\(Int.random(in: 0..<count, using: &random))"
            _ = try await notes.patch(.string(id), [Field("body"): .string(body()), Field("embedding"): .vector(vector())])
        }
        try await writerSync.push()
    }
    let snapshot = try await writerSync.uploadSnapshot()
    for _ in 0..<tail {
        for _ in 0..<edits {
            let id = "n\(Int.random(in: 0..<count, using: &random))"
            _ = try await notes.patch(.string(id), [Field("body"): .string(body()), Field("embedding"): .vector(vector())])
        }
        try await writerSync.push()
    }
    let state = try await transport.feedState(space: space, fullSize: true)
    print("feed: \(state.changeSets ?? 0) change sets, \(String(format: "%.1f", Double(state.bytes ?? 0) / 1e6)) MB; "
        + "snapshot: \(String(format: "%.1f", Double(snapshot.bytes) / 1e6)) MB in \(snapshot.parts) part(s), "
        + "up to \(snapshot.upToSequence); \(state.changeSetsSinceSnapshot) change sets after it")

    let clock = ContinuousClock()
    var replayTimes: [Double] = []
    var joinTimes: [Double] = []
    for round in 0..<repeats {
        for joins in (round % 2 == 0 ? [false, true] : [true, false]) {
            let path = directory.appendingPathComponent("new-\(round)-\(joins).trove").path
            let database = try Database(path: path)
            _ = try await database.documents("notes", schema: schema)
            let deviceTransport = try PostgresTransport(url: fixture.deviceURLs[0])
            defer { deviceTransport.close() }
            let sync = try await SyncSpace(
                database: database, space: space, key: key,
                transport: joins ? deviceTransport as any SyncTransport : FeedOnly(deviceTransport), collections: ["notes"])
            let start = clock.now
            try await sync.pull()
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            // The work was really done: every note, with the writer's last body.
            let received = try await database.documents(named: "notes")
            guard try await received.count() == count else { throw BenchFailure("a new device has \(try await received.count()) of \(count) notes") }
            let probe = "n\(count / 2)"
            guard try await received.fetch(id: .string(probe))?["body"] == notes.fetch(id: .string(probe))?["body"] else {
                throw BenchFailure("a new device's note \(probe) differs from the writer's")
            }
            let status = await sync.status
            guard status.missing.isEmpty, status.refusedSnapshot == nil else { throw BenchFailure("new device: \(status)") }
            if joins { joinTimes.append(seconds) } else { replayTimes.append(seconds) }
            print(String(format: "  round %d: %@ %.2f s", round + 1, joins ? "snapshot + tail" : "whole feed     ", seconds))
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(String(
        format: "new device: whole feed %.2f s (median), snapshot + tail %.2f s: %.1fx faster",
        median(replayTimes), median(joinTimes), median(replayTimes) / median(joinTimes)))
}
