// trove-bench sync-join: a new device joining a space from the newest snapshot plus the tail of
// the feed, against one replaying the whole feed, through PostgreSQL.
import Foundation
import Trove
@_spi(Benchmarks) import TroveSync

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
              (default 100: body and vector) and seals them, one change set per round (pushed a
              thousand at a time): a feed whose changes are mostly overwritten. A uploads a snapshot
              (a device that pulled nothing holds pruning back, so the whole feed stays), then writes
              T more rounds (default 30: the tail). Then K times (default 3) two new devices pull
              the space: one replaying the whole feed (a transport without snapshots), one joining
              from the snapshot plus the tail; each is timed from its first pull to the last note
              applied (download and apply), and their notes are compared. The limit, in the same
              run: `Database.load(from:)` (what `trove load` runs) of a dump of A's notes into an
              empty database. At scale (issue #41: a million change sets over 100,000 notes with
              384-d vectors): --notes 100000 --rounds 1000000 --edits 1 --dimension 384 --repeat 1.
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
    let setupStart = ContinuousClock.now
    try await writerSync.push()
    // One change set per round, sealed at once and pushed a thousand at a time (a push per round
    // would add a round trip to each, which a feed of a million change sets cannot afford).
    func writeRounds(_ total: Int, _ label: String) async throws {
        for round in 0..<total {
            for _ in 0..<edits {
                let id = "n\(Int.random(in: 0..<count, using: &random))"
                _ = try await notes.patch(.string(id), [Field("body"): .string(body()), Field("embedding"): .vector(vector())])
            }
            _ = try await writerSync.sealWithoutPushing()
            if round % 1_000 == 999 || round == total - 1 { try await writerSync.push() }
            if total >= 100_000, round % (total / 10) == total / 10 - 1 {
                print("  \(label): \(round + 1) of \(total) rounds written, \(Int((ContinuousClock.now - setupStart).components.seconds)) s")
            }
        }
    }
    try await writeRounds(rounds, "feed")
    // The rounds' full-text segments, merged now (untimed) rather than by the background merger
    // beside the timed joins.
    try await writer.mergeTextIndexes()
    let snapshot = try await writerSync.uploadSnapshot()
    try await writeRounds(tail, "tail")
    try await writerSync.push()
    let state = try await transport.feedState(space: space, fullSize: true)
    print("feed: \(state.changeSets ?? 0) change sets, \(String(format: "%.1f", Double(state.bytes ?? 0) / 1e6)) MB; "
        + "snapshot: \(String(format: "%.1f", Double(snapshot.bytes) / 1e6)) MB in \(snapshot.parts) part(s), "
        + "up to \(snapshot.upToSequence); \(state.changeSetsSinceSnapshot) change sets after it")

    // The limit: the same notes loaded from a dump into an empty database (`trove load`).
    let dumpPath = directory.appendingPathComponent("notes.trove-dump").path
    let dumped = try await writer.dump(to: dumpPath)
    print("dump of A's notes: \(String(format: "%.1f", Double(dumped.bytes) / 1e6)) MB")

    let clock = ContinuousClock()
    func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = clock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
    enum Mode: String, CaseIterable { case feed = "whole feed     ", snapshot = "snapshot + tail", load = "load of a dump " }
    var times: [Mode: [Double]] = [:]
    for round in 0..<repeats {
        let order = Mode.allCases.count
        for index in 0..<order {
            let mode = Mode.allCases[(index + round) % order]
            let path = directory.appendingPathComponent("new-\(round)-\(index).trove").path
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let database = try Database(path: path)
            let elapsed: Double
            if mode == .load {
                let start = clock.now
                let report = try await database.load(from: dumpPath)
                elapsed = seconds(since: start)
                guard report.problems.isEmpty else { throw BenchFailure("load: \(report.problems)") }
            } else {
                _ = try await database.documents("notes", schema: schema)
                let deviceTransport = try PostgresTransport(url: fixture.deviceURLs[0])
                defer { deviceTransport.close() }
                let sync = try await SyncSpace(
                    database: database, space: space, key: key,
                    transport: mode == .snapshot ? deviceTransport as any SyncTransport : FeedOnly(deviceTransport),
                    collections: ["notes"])
                let start = clock.now
                try await sync.pull()
                elapsed = seconds(since: start)
                let status = await sync.status
                guard status.missing.isEmpty, status.refusedSnapshot == nil else { throw BenchFailure("new device: \(status)") }
            }
            // The work was really done: every note, with the writer's last body.
            let received = try await database.documents(named: "notes")
            guard try await received.count() == count else { throw BenchFailure("a new device has \(try await received.count()) of \(count) notes") }
            let probe = "n\(count / 2)"
            guard try await received.fetch(id: .string(probe))?["body"] == notes.fetch(id: .string(probe))?["body"] else {
                throw BenchFailure("a new device's note \(probe) differs from the writer's")
            }
            times[mode, default: []].append(elapsed)
            print(String(format: "  round %d: %@ %.2f s", round + 1, mode.rawValue, elapsed))
        }
    }
    func median(_ mode: Mode) -> Double { let values = times[mode]!.sorted(); return values[values.count / 2] }
    print(String(
        format: "new device (medians): whole feed %.2f s, snapshot + tail %.2f s, load of a dump %.2f s; "
            + "snapshot + tail is %.1fx faster than the feed and %.2fx the load's time",
        median(.feed), median(.snapshot), median(.load), median(.feed) / median(.snapshot),
        median(.snapshot) / median(.load)))
}
