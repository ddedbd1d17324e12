// trove-bench sync-year: a simulated year of one person's notes on a few devices, through
// PostgreSQL: how large the feed grows with snapshots and pruning, against everything written.
import Foundation
import Trove
import TroveSync

func runSyncYearBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    guard !options.has("help") else {
        print("""
            trove-bench sync-year [--server URL] [--days N] [--devices D] [--notes M] [--edits E] [--new W]
                                  [--sessions S] [--dimension V] [--lost-after L] [--snapshot-change-sets C] [--snapshot-mb B]
              URL: a libpq URL of a role that may install the schema and create roles (a scratch database);
              without it, a PostgreSQL 15 server of its own (Debian's, fsync on) is started and stopped.
              One person's space on D devices (default 3) for N simulated days (default 365). Day 0: the
              first device writes M notes (default 1,000: title, ~40-word body, a V-dimensional vector,
              default 384). Each day the devices share E edits of random notes (default 40: body and
              vector) and W new notes (default 5), each device in S sessions (default 8) that each end
              with a push; then every device pulls, and the first one uploads a snapshot when its policy
              says one is due (C change sets or B MB since the newest: default the standard policy,
              10,000 and 64). The last device stops syncing after day L (default 120; 0: never), as a
              lost phone: the simulation ages its last-seen time by a day each day, so once it is past
              the server's horizon (90 days) it no longer holds pruning back.
              Prints, every 30 days and at the end: change sets and MB written so far, the feed's change
              sets and MB, the newest snapshot's MB, and how far the feed was pruned.
            """)
        return
    }
    let postgres = try BenchPostgres(options)
    print("PostgreSQL: \(postgres.description)")
    let days = options.int("days", 365)
    let deviceCount = max(1, options.int("devices", 3))
    let initial = options.int("notes", 1_000)
    let edits = options.int("edits", 40)
    let created = options.int("new", 5)
    let sessions = max(1, options.int("sessions", 8))
    let dimension = options.int("dimension", 384)
    let lostAfter = options.int("lost-after", 120)
    let policy = SnapshotPolicy(
        changeSets: Int64(options.int("snapshot-change-sets", Int(SnapshotPolicy.standard.changeSets))),
        bytes: Int64(options.int("snapshot-mb", Int(SnapshotPolicy.standard.bytes >> 20))) << 20)
    let fixture = try await SyncBenchServer(adminURL: postgres.adminURL, roles: 1)
    defer { fixture.dropRoles() }
    print("sync-year: \(days) days, \(deviceCount) devices, \(initial) notes first, \(edits) edits and \(created) new notes a day in \(sessions) sessions per device, \(dimension)-d vectors, last device lost after day \(lostAfter == 0 ? "never" : String(lostAfter)), snapshot policy \(policy.changeSets) change sets or \(policy.bytes >> 20) MB, \(fixture.serverVersion)")

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-sync-year-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let schema = DocumentSchema(
        id: .string, fields: [.text("title"), .text("body"), .vector("embedding", dimension: dimension)],
        fullText: FullTextDefinition(fields: ["title", "body"]))
    var random = BenchRandom(state: 0x7ea2_2026)
    let words = (0..<2_000).map { "w\($0)" }
    func body() -> String { (0..<40).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }.joined(separator: " ") }
    func vector() -> [Float] { (0..<dimension).map { _ in Float.random(in: -1...1, using: &random) } }

    let space = "year-\(getpid())"
    let key = try SyncKey.random()
    let owner = try PostgresTransport(url: fixture.deviceURLs[0])
    defer { owner.close() }
    try await owner.createSpace(space)
    var devices: [(notes: DocumentCollection, sync: SyncSpace, transport: PostgresTransport)] = []
    for index in 0..<deviceCount {
        let database = try Database(path: directory.appendingPathComponent("device-\(index).trove").path)
        let notes = try await database.documents("notes", schema: schema)
        let transport = try PostgresTransport(url: fixture.deviceURLs[0])
        let sync = try await SyncSpace(database: database, space: space, key: key, transport: transport, collections: ["notes"])
        await sync.setSnapshotPolicy(policy)
        devices.append((notes, sync, transport))
    }
    defer { for device in devices { device.transport.close() } }

    var count = 0
    for first in stride(from: 0, to: initial, by: 500) {
        try await devices[0].notes.insert((first..<min(initial, first + 500)).map {
            Document(id: .string("n\($0)"), ["title": .string("note \($0)"), "body": .string(body()), "embedding": .vector(vector())])
        })
    }
    count = initial
    try await devices[0].sync.push()
    for device in devices { try await device.sync.pull() }

    var written = try await owner.feedState(space: space, fullSize: true)
    var writtenBytes = written.bytes ?? 0
    var peak: (changeSets: Int64, bytes: Int64, day: Int) = (0, 0, 0)
    let clock = ContinuousClock()
    let started = clock.now
    print("  day | written: change sets | MB | feed: change sets | MB | snapshot MB | pruned up to")
    for day in 1...max(1, days) {
        let active = devices.indices.filter { lostAfter == 0 || $0 < deviceCount - 1 || day <= lostAfter || deviceCount == 1 }
        let before = try await owner.feedState(space: space, fullSize: true)
        // Edits go to notes every device has (pulled yesterday), not to today's new ones.
        let known = count
        for session in 0..<sessions {
            for (position, index) in active.enumerated() {
                // `total` spread over the day's sessions of every active device.
                let slots = active.count * sessions
                let share = { (total: Int) in total / slots + (session * active.count + position < total % slots ? 1 : 0) }
                for _ in 0..<share(edits) where known > 0 {
                    let id = "n\(Int.random(in: 0..<known, using: &random))"
                    _ = try await devices[index].notes.patch(.string(id), [Field("body"): .string(body()), Field("embedding"): .vector(vector())])
                }
                let new = share(created)
                if new > 0 {
                    try await devices[index].notes.insert((count..<count + new).map {
                        Document(id: .string("n\($0)"), ["title": .string("note \($0)"), "body": .string(body()), "embedding": .vector(vector())])
                    })
                    count += new
                }
                try await devices[index].sync.push()
            }
        }
        let pushed = try await owner.feedState(space: space, fullSize: true)
        writtenBytes += (pushed.bytes ?? 0) - (before.bytes ?? 0)
        written = pushed
        for index in active { try await devices[index].sync.pull() }
        _ = try await devices[0].sync.snapshotIfDue()
        // A lost device is last seen on day `lostAfter`: one more day has passed since.
        if lostAfter > 0, deviceCount > 1, day > lostAfter {
            let lost = devices[deviceCount - 1].sync.device
            try fixture.admin.exec("UPDATE trove_sync.cursors SET seen_at = now() - interval '\(day - lostAfter) days' WHERE device = '\(lost)'")
        }
        let state = try await owner.feedState(space: space, fullSize: true)
        if (state.bytes ?? 0) > peak.bytes { peak = (state.changeSets ?? 0, state.bytes ?? 0, day) }
        if day % 30 == 0 || day == days {
            print(String(format: "  %3d | %8lld | %7.1f | %8lld | %7.1f | %7.1f | %lld", day, written.lastSequence, Double(writtenBytes) / 1e6,
                         state.changeSets ?? 0, Double(state.bytes ?? 0) / 1e6, Double(state.snapshot?.bytes ?? 0) / 1e6, state.prunedUpTo))
        }
    }
    // The devices still syncing hold the same notes.
    let reference = try await devices[0].notes.count()
    for index in devices.indices.dropFirst() where lostAfter == 0 || index < deviceCount - 1 {
        guard try await devices[index].notes.count() == reference else { throw BenchFailure("device \(index) has \(try await devices[index].notes.count()) notes, device 0 \(reference)") }
    }
    let elapsed = clock.now - started
    print(String(format: "sync-year: written %lld change sets, %.1f MB; feed at most %lld change sets, %.1f MB (day %d); %d notes; %.0f s",
                 written.lastSequence, Double(writtenBytes) / 1e6, peak.changeSets, Double(peak.bytes) / 1e6, peak.day, count,
                 Double(elapsed.components.seconds)))
}
