// trove-bench sync-latency: time from a commit on device A to its hybrid-search hit on device B,
// both running SyncSpace.run() against PostgreSQL (LISTEN/NOTIFY), B watching with a live search.
// trove-bench sync-load: many simulated devices pushing and pulling one server at once.
import Foundation
import Trove
import TroveSync

func runSyncLatencyBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    guard !options.has("help") else {
        print("""
            trove-bench sync-latency [--server URL] [--commits N] [--notes M] [--dimension D] [--gap MS]
              URL: a libpq URL of a role that may install the schema and create roles (a scratch database);
              without it, a PostgreSQL 15 server of its own (Debian's, fsync on) is started and stopped.
              Two devices (databases A and B) share a space through PostgresTransport, each with run()
              (LISTEN/NOTIFY; its 30 s poll never fires in time). M notes (default 1,000; title, body,
              a D-dimensional vector, default 384; full text) are synced first. Then N times (default 200):
              B starts a live hybrid search (vector + text) for a word only the next note has, A inserts
              that note (one transaction), and the clock runs from A's commit to the live search on B
              yielding the note. MS (default 20) ms pass between one hit and the next commit.
              Prints p50, p90, p99 and max.
            """)
        return
    }
    let postgres = try BenchPostgres(options)
    let adminURL = postgres.adminURL
    print("PostgreSQL: \(postgres.description)")
    let commits = options.int("commits", 200)
    let preload = options.int("notes", 1_000)
    let dimension = options.int("dimension", 384)
    let gap = options.int("gap", 20)
    let fixture = try await SyncBenchServer(adminURL: adminURL, roles: 1)
    defer { fixture.dropRoles() }
    print("sync-latency: \(commits) commits, \(preload) notes synced first, \(dimension)-d vectors, \(gap) ms between a hit and the next commit, \(fixture.serverVersion)")

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trove-sync-latency-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let schema = DocumentSchema(
        id: .string,
        fields: [.text("title"), .text("body"), .vector("embedding", dimension: dimension)],
        fullText: FullTextDefinition(fields: ["title", "body"]))
    var random = BenchRandom(state: 0x1a7e_9c1)
    let words = (0..<2_000).map { "w\($0)" }
    func note(_ id: String, marker: String) -> Document {
        let body = (0..<40).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }.joined(separator: " ")
        return Document(id: .string(id), [
            "title": .string("note \(marker)"), "body": .string(body),
            "embedding": .vector((0..<dimension).map { _ in Float.random(in: -1...1, using: &random) }),
        ])
    }

    let space = "latency-\(getpid())"
    let key = try SyncKey.random()
    let owner = try PostgresTransport(url: fixture.deviceURLs[0])
    try await owner.createSpace(space)
    owner.close()
    var devices: [(database: Database, sync: SyncSpace, transport: PostgresTransport)] = []
    for name in ["a", "b"] {
        let database = try Database(path: directory.appendingPathComponent("\(name).trove").path)
        let notes = try await database.documents("notes", schema: schema)
        if name == "a" {
            for first in stride(from: 0, to: preload, by: 500) {
                try await notes.insert((first..<min(preload, first + 500)).map { note("pre-\($0)", marker: "w\($0 % words.count)") })
            }
        }
        let transport = try PostgresTransport(url: fixture.deviceURLs[0])
        let sync = try await SyncSpace(database: database, space: space, key: key, transport: transport, collections: ["notes"])
        devices.append((database, sync, transport))
    }
    defer { devices.forEach { $0.transport.close() } }
    try await devices[0].sync.push()
    try await devices[1].sync.pull()
    let a = try await devices[0].database.documents(named: "notes")
    let b = try await devices[1].database.documents(named: "notes")
    guard try await b.count() == preload else { throw BenchFailure("the first sync brought \(try await b.count()) of \(preload) notes") }

    let running = devices.map { device in Task { try await device.sync.run() } }
    defer { running.forEach { $0.cancel() } }
    // Both listeners connect and LISTEN before the first commit is timed.
    try await Task.sleep(for: .seconds(1))

    let clock = ContinuousClock()
    var latencies: [Double] = []
    for i in 0..<commits {
        let id = "timed-\(i)"
        let marker = "marker\(i)x"
        let document = note(id, marker: marker)
        guard case .vector(let vector) = document["embedding"] else { fatalError("a note has its vector") }
        let search = b.observeSearch(Query().nearest(to: vector, in: "embedding").matching(.typed(marker)).limit(3))
        var hits = search.makeAsyncIterator()
        // The live search's first result (before the note exists) proves it is watching.
        guard let before = try await hits.next(), !before.contains(where: { $0.record.id == .string(id) }) else {
            throw BenchFailure("the live search ended or found \(id) before its commit")
        }
        let start = clock.now
        try await a.insert([document])
        var found = false
        while let current = try await hits.next() {
            if current.first?.record.id == .string(id) { found = true; break }
        }
        guard found else { throw BenchFailure("the live search for \(id) ended without it") }
        let elapsed = clock.now - start
        latencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
        try await Task.sleep(for: .milliseconds(gap))
    }
    let sorted = latencies.sorted()
    func percentile(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)] }
    print(String(format: "commit on A -> hybrid-search hit on B: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms (target p50 < 100 ms)",
                 percentile(0.5), percentile(0.9), percentile(0.99), sorted.last ?? 0))
}

func runSyncLoadBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    guard !options.has("help") else {
        print("""
            trove-bench sync-load [--server URL] [--devices D] [--spaces S] [--seconds T] [--batch B] [--payload BYTES] [--think MS]
              URL: a libpq URL of a role that may install the schema and create roles (max_connections > D);
              without it, a PostgreSQL 15 server of its own (Debian's, fsync on, 300 connections) is used.
              D simulated devices (default 100), each a database role of its own with its own
              PostgresTransport (one connection), spread over S spaces (default 10). For T seconds
              (default 20) every device loops: push B sealed change sets (default 10) of BYTES random bytes
              (default 512) to its space, pull every change set new to it (pages of 200, as SyncSpace),
              then wait MS ms (default 100, jittered 50-150%). The server runs trove_sync.push/pull with
              row-level security, as for real devices; nothing is applied on a device.
              Prints change sets pushed and pulled per second and push and pull latency percentiles.
            """)
        return
    }
    let postgres = try BenchPostgres(options)
    let adminURL = postgres.adminURL
    print("PostgreSQL: \(postgres.description)")
    let deviceCount = options.int("devices", 100)
    let spaceCount = max(1, min(options.int("spaces", 10), deviceCount))
    let seconds = options.int("seconds", 20)
    let batch = options.int("batch", 10)
    let size = options.int("payload", 512)
    let think = options.int("think", 100)
    let fixture = try await SyncBenchServer(adminURL: adminURL, roles: deviceCount)
    defer { fixture.dropRoles() }
    print("sync-load: \(deviceCount) devices in \(spaceCount) spaces, \(seconds) s, pushes of \(batch) change sets of \(size) bytes, \(think) ms think time, \(fixture.serverVersion)")

    // The first device of each space creates it and adds the others as members.
    let spaces = (0..<spaceCount).map { "load-\(getpid())-\($0)" }
    for (index, space) in spaces.enumerated() {
        let owner = try PostgresTransport(url: fixture.deviceURLs[index])
        try await owner.createSpace(space)
        for device in stride(from: index + spaceCount, to: deviceCount, by: spaceCount) {
            try await owner.addMember(fixture.roles[device], toSpace: space)
        }
        owner.close()
    }

    struct DeviceResult: Sendable {
        var pushed = 0
        var pulled = 0
        var pushMilliseconds: [Double] = []
        var pullMilliseconds: [Double] = []
        var failures = 0
    }
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(seconds)
    let results = try await withThrowingTaskGroup(of: DeviceResult.self) { group in
        for index in 0..<deviceCount {
            let url = fixture.deviceURLs[index]
            let space = spaces[index % spaceCount]
            group.addTask {
                var random = BenchRandom(state: 0x10ad_0000 + UInt64(index))
                let transport = try PostgresTransport(url: url)
                defer { transport.close() }
                let device = "load-device-\(index)"
                var result = DeviceResult()
                var sequence: Int64 = 0
                var cursor: Int64 = 0
                func milliseconds(_ duration: Duration) -> Double {
                    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
                }
                while clock.now < deadline {
                    let sets = (0..<batch).map { _ -> SealedChangeSet in
                        sequence += 1
                        return SealedChangeSet(
                            device: device, deviceSequence: sequence,
                            payload: Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &random) }))
                    }
                    do {
                        var start = clock.now
                        _ = try await transport.push(sets, space: space)
                        result.pushMilliseconds.append(milliseconds(clock.now - start))
                        result.pushed += sets.count
                        while true {
                            start = clock.now
                            let page = try await transport.pull(space: space, after: cursor, limit: 200)
                            result.pullMilliseconds.append(milliseconds(clock.now - start))
                            result.pulled += page.count
                            cursor = page.last?.serverSequence ?? cursor
                            if page.count < 200 { break }
                        }
                    } catch {
                        result.failures += 1
                        sequence -= Int64(batch)
                    }
                    try await Task.sleep(for: .milliseconds(Int(Double(think) * Double.random(in: 0.5...1.5, using: &random))))
                }
                return result
            }
        }
        var all: [DeviceResult] = []
        for try await result in group { all.append(result) }
        return all
    }
    let elapsed = Double(seconds)
    let pushes = results.flatMap(\.pushMilliseconds).sorted()
    let pulls = results.flatMap(\.pullMilliseconds).sorted()
    func percentile(_ values: [Double], _ p: Double) -> Double {
        values.isEmpty ? 0 : values[min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1)]
    }
    let pushed = results.reduce(0) { $0 + $1.pushed }
    let pulled = results.reduce(0) { $0 + $1.pulled }
    print(String(format: "pushed %d change sets (%.0f/s) in %d pushes; pulled %d (%.0f/s) in %d requests; %d failed requests",
                 pushed, Double(pushed) / elapsed, pushes.count, pulled, Double(pulled) / elapsed, pulls.count,
                 results.reduce(0) { $0 + $1.failures }))
    print(String(format: "push latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms; pull latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms",
                 percentile(pushes, 0.5), percentile(pushes, 0.99), pushes.last ?? 0,
                 percentile(pulls, 0.5), percentile(pulls, 0.99), pulls.last ?? 0))
}

/// The schema installed and `roles` fresh device roles (members of trove_sync_device) with their
/// URLs, for the sync benchmarks; ``dropRoles()`` removes them again.
final class SyncBenchServer {
    let admin: RawPostgres
    let roles: [String]
    let deviceURLs: [String]

    init(adminURL: String, roles count: Int) async throws {
        let admin = try RawPostgres(adminURL)
        self.admin = admin
        _ = try await PostgresTransport.installServerSchema(url: adminURL)
        let password = UUID().uuidString
        roles = (0..<count).map { "bench_\(getpid())_\($0)" }
        for role in roles {
            try admin.exec("DROP ROLE IF EXISTS \(role)")
            try admin.exec("CREATE ROLE \(role) LOGIN PASSWORD '\(password)' IN ROLE trove_sync_device")
        }
        deviceURLs = roles.map { "host=\(admin.host) port=\(admin.port) dbname=\(admin.database) user=\($0) password=\(password)" }
    }

    var serverVersion: String { admin.serverVersion }

    func dropRoles() {
        for role in roles { try? admin.exec("DROP OWNED BY \(role); DROP ROLE \(role)") }
    }
}
