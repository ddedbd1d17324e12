import Foundation
import Testing
import Trove
import TroveChildProcess
import TroveTestSupport

@testable import TroveSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Sync proven under faults (RELIABILITY.md, "Sync under faults"): device processes write at
/// random and sync through a loopback proxy that delays, stalls and cuts connections, while the
/// harness kills devices inside pushes, applies, writes and snapshot uploads, restarts
/// PostgreSQL, and has one device remove another (a new key epoch). Then the network heals,
/// every remaining device syncs until a round changes nothing, and:
///
/// - every remaining device's dump is identical, its derived indexes healthy, its status in sync
///   with nothing queued or quarantined;
/// - each device's notes are exactly its ledger's committed writes replayed (nothing lost,
///   nothing applied twice, no write half there); the removed device's, a prefix of them at
///   least as long as its last acknowledged push;
/// - the feed holds each (device, sequence) once, without gaps;
/// - the removed device's real key material opens no change set, snapshot or wrapped key of
///   the epochs after its removal.
///
/// Sizes and the seed come from the environment (TROVE_FAULT_SEED, TROVE_FAULT_DEVICES,
/// TROVE_FAULT_SECONDS, TROVE_FAULT_RESTARTS); every failure names them, so a run can be
/// repeated with the same decisions (the interleaving with the machine's timing differs).
///
/// Its phases are timed (a removal half way, restarts within the run), so on a small machine it
/// needs the machine to itself: `.ci/run` sets `TROVE_FAULT_HARNESS=alone` for the whole suite,
/// which skips it there, and runs it on its own afterwards.
@Suite(
    .serialized,
    .disabled(
        if: ProcessInfo.processInfo.environment["TROVE_FAULT_HARNESS"] == "alone",
        "runs on its own after the suite (.ci/run)")
) struct FaultHarnessTests {
    @Test func devicesConvergeThroughKillsRestartsCutConnectionsAndARemoval() async throws {
        let settings = FaultSettings(environment: ProcessInfo.processInfo.environment)
        let run = try FaultRun(settings: settings)
        // What happened, printed whatever the outcome (RELIABILITY.md quotes these lines).
        defer { print(run.summary()) }
        // TROVE_FAULT_LOG=<folder>: each device's output and ledger kept there.
        defer { run.keepLogs(in: ProcessInfo.processInfo.environment["TROVE_FAULT_LOG"]) }
        try await run.faultPhase()
        try await run.heal()
        try await run.check()
    }
}

/// The harness's knobs, from the environment.
struct FaultSettings: CustomStringConvertible {
    var seed: UInt64 = 41
    var devices = 4
    var seconds = 20.0
    var restarts = 2

    init(environment: [String: String]) {
        if let value = environment["TROVE_FAULT_SEED"].flatMap(UInt64.init) { seed = value }
        if let value = environment["TROVE_FAULT_DEVICES"].flatMap(Int.init) {
            devices = max(3, value)
        }
        if let value = environment["TROVE_FAULT_SECONDS"].flatMap(Double.init) {
            seconds = max(3, value)
        }
        if let value = environment["TROVE_FAULT_RESTARTS"].flatMap(Int.init) {
            restarts = max(0, value)
        }
    }

    /// The command that repeats this run.
    var description: String {
        "TROVE_FAULT_SEED=\(seed) TROVE_FAULT_DEVICES=\(devices) TROVE_FAULT_SECONDS=\(Int(seconds)) "
            + "TROVE_FAULT_RESTARTS=\(restarts) swift test --filter FaultHarnessTests"
    }
}

/// One run of the harness: the server, the proxy, the device processes and what they reported.
final class FaultRun: @unchecked Sendable {
    // @unchecked Sendable: used from the test's task alone; the device processes and the proxy
    // guard their own state.
    let settings: FaultSettings
    let server: TestPostgresServer
    let role: SyncServerFixture.Device
    let proxy: FaultProxy
    let folder: TemporaryDirectory
    let devices: [DeviceProcess]
    var random: SeededGenerator
    var restartsDone = 0
    var cutAllCount = 0
    /// The removed device and the device that removes it.
    var victim: DeviceProcess
    var remover: DeviceProcess
    var removedIn: Int64?
    var healRounds = 0
    var finalStatus: [String: String] = [:]
    /// Each remaining device's output while healing, round by round.
    var healLines: [String: [String]] = [:]
    var feedCount = 0
    var afterRemovalChecked = 0
    var started = ContinuousClock.now

    static let space = "crash"

    init(settings: FaultSettings) throws {
        self.settings = settings
        server = try TestPostgresServer()
        try server.psql(file: SyncServerFixture.schemaFile)
        role = try SyncServerFixture.newDevice(on: server, prefix: "fault")
        proxy = try FaultProxy(
            upstreamPort: server.port, seed: settings.seed &+ 1,
            faults: FaultProxy.Faults(
                refuse: 0.05, cut: 0.2, cutWithin: 48 << 10, delay: 0.05,
                maximumDelay: .milliseconds(150), stall: 0.004, maximumStall: .milliseconds(1_500)))
        let folder = try TemporaryDirectory()
        self.folder = folder
        let child = try #require(SyncCrashTests.child, "TroveSyncCrashChild not built")
        let devices = (0..<settings.devices).map { i in
            DeviceProcess(
                name: "d\(i)", database: folder.path("d\(i).trove"), folder: folder.url.path,
                executable: child)
        }
        self.devices = devices
        var random = SeededGenerator(seed: settings.seed)
        let victimIndex = Int.random(in: 0..<settings.devices, using: &random)
        var removerIndex = Int.random(in: 0..<(settings.devices - 1), using: &random)
        if removerIndex >= victimIndex { removerIndex += 1 }
        victim = devices[victimIndex]
        remover = devices[removerIndex]
        self.random = random
    }

    deinit { proxy.stop() }

    var proxiedURL: String {
        role.url.replacingOccurrences(of: ":\(server.port)/", with: ":\(proxy.port)/")
    }

    /// Every failure message ends with how to repeat the run.
    func replay(_ message: String) -> Comment {
        Comment(rawValue: "\(message) [repeat: \(settings)]")
    }

    // MARK: Faults

    /// Devices write and sync through the proxy while the harness kills them, restarts the
    /// server and cuts the network; one device removes another half way.
    func faultPhase() async throws {
        let transport = try PostgresTransport(url: role.url)
        defer { transport.close() }
        _ = try await transport.createSpace(Self.space)
        started = .now
        let duration = Duration.milliseconds(Int64(settings.seconds * 1_000))
        let deadline = started + duration
        // The last device joins late (from a snapshot when one was uploaded by then).
        let late = devices.last!
        let lateStart = started + duration * 0.15
        var removalAsked = false
        let removalAt = started + duration * 0.4
        var restartTimes = (0..<settings.restarts).map { _ in
            started + duration * Double.random(in: 0.15...0.85, using: &random)
        }.sorted()
        var restartAt: [ObjectIdentifier: ContinuousClock.Instant] = [:]

        for device in devices where device !== late { try start(device) }
        while ContinuousClock.now < deadline || removedIn == nil {
            guard ContinuousClock.now < deadline + .seconds(60) else {
                Issue.record(replay("the removal did not complete within a minute of the end"))
                break
            }
            let now = ContinuousClock.now
            if !late.hasStarted, now >= lateStart { try start(late) }
            // Dead devices come back after a short while.
            for device in devices where device.hasStarted && !device.isRunning {
                let key = ObjectIdentifier(device)
                if let at = restartAt[key] {
                    if now >= at {
                        restartAt[key] = nil
                        try start(device)
                    }
                } else {
                    restartAt[key] =
                        now + .milliseconds(Int.random(in: 50...500, using: &random))
                }
            }
            // The removal, once every device has registered (its first successful sync).
            if !removalAsked, now >= removalAt, devices.allSatisfy(\.hasSynced),
                let id = victim.deviceID
            {
                try "remove \(id)".write(
                    toFile: folder.path("\(remover.name).control"), atomically: true,
                    encoding: .utf8)
                removalAsked = true
            }
            if removalAsked, removedIn == nil { removedIn = try await removalEpoch() }
            if let next = restartTimes.first, now >= next, now < deadline {
                restartTimes.removeFirst()
                try await restartServer()
            }
            if now < deadline { injectFault() }
            try await Task.sleep(for: .milliseconds(Int.random(in: 100...400, using: &random)))
        }
        for device in devices { device.kill(reason: nil) }
        for device in devices { await device.waitForExit() }
        #expect(restartsDone == settings.restarts, replay("server restarts"))
    }

    /// One of: a kill aimed at a step, a kill at once, every connection cut, or nothing.
    func injectFault() {
        let roll = Int.random(in: 0..<100, using: &random)
        let running = devices.filter(\.isRunning)
        guard !running.isEmpty else { return }
        let device = running[Int.random(in: 0..<running.count, using: &random)]
        let delay = Int.random(in: 0...25, using: &random)
        switch roll {
        case 0..<12: device.arm(on: ["~ pushing", "~ pushed"], phase: "push", delay: delay)
        case 12..<24: device.arm(on: ["~ pulled"], phase: "apply", delay: delay)
        case 24..<30: device.arm(on: ["~ write"], phase: "write", delay: delay)
        case 30..<34:
            device.arm(
                on: ["~ snapshot part", "~ snapshot fetched"], phase: "snapshot", delay: delay)
        case 34..<36: device.arm(on: ["~ epoch", "~ removing"], phase: "removal", delay: delay)
        case 36..<42: device.kill(reason: "anywhere")
        case 42..<52:
            proxy.cutAll()
            cutAllCount += 1
        default: break
        }
    }

    func start(_ device: DeviceProcess) throws {
        try device.start(url: proxiedURL, seed: random.next())
    }

    /// Stops PostgreSQL (fast shutdown: every connection cut) and starts it again a moment later.
    func restartServer() async throws {
        let pause = UInt32(Int.random(in: 200_000...1_200_000, using: &random))
        let server = self.server
        try await onThread {
            try server.stop()
            usleep(pause)
            try server.start()
        }
        restartsDone += 1
    }

    /// The epoch in which the victim was removed, nil while it is a member (asked directly,
    /// past the proxy).
    func removalEpoch() async throws -> Int64? {
        guard let id = victim.deviceID else { return nil }
        let transport = try PostgresTransport(url: role.url)
        defer { transport.close() }
        do {
            return try await transport.devices(space: Self.space).first { $0.device == id }?
                .removedIn
        } catch {
            return nil  // the server is restarting
        }
    }

    // MARK: Healing

    /// The network heals (the devices connect directly, the proxy is stopped) and every
    /// remaining device pushes and pulls, round after round, until a round changes nothing.
    func heal() async throws {
        proxy.stop()
        let remaining = devices.filter { $0 !== victim }
        var quiet = false
        while !quiet, healRounds < 12 {
            healRounds += 1
            quiet = true
            var order = remaining
            order.shuffle(using: &random)
            for device in order {
                let lines = try await device.runToEnd(["heal", device.database, role.url])
                healLines[device.name, default: []] += ["round \(healRounds)"] + lines
                guard let result = lines.first(where: { $0.hasPrefix("H ") }),
                    let status = lines.first(where: { $0.hasPrefix("Q ") })
                else {
                    Issue.record(replay("\(device.name) failed to heal: \(lines)"))
                    quiet = false
                    continue
                }
                if result != "H 0 0" { quiet = false }
                finalStatus[device.name] = status
            }
        }
        #expect(quiet, replay("the devices still exchanged changes after \(healRounds) rounds"))
        // The removed device is refused, and says so.
        let refused = try await victim.runToEnd(["heal", victim.database, role.url])
        #expect(
            refused.contains { $0.hasPrefix("X removed:") },
            replay("the removed device's sync: \(refused)"))
    }

    // MARK: Checks

    func check() async throws {
        let removedIn = try #require(removedIn, replay("no device was removed"))
        #expect(removedIn == 1, replay("one removal, epoch \(removedIn)"))
        // Under faults a push, pull or upload may fail only for the network or the server
        // (transport), or, for the removed device, because it was removed; a device process
        // ends only when the harness kills it.
        for device in devices {
            let unexpected = device.lines.filter {
                $0.hasPrefix("E other") || $0.hasPrefix("X ")
                    || (device !== victim && $0.hasPrefix("E removed"))
            }
            #expect(
                unexpected.isEmpty,
                replay("\(device.name) failed unexpectedly: \(unexpected.prefix(3))"))
        }
        let remaining = devices.filter { $0 !== victim }
        for device in remaining {
            // pending, unacknowledged, queued, quarantined, missing, epoch, in sync
            let expected = "Q 0 0 0 0 0 \(removedIn) 1"
            #expect(
                finalStatus[device.name] == expected,
                replay("\(device.name)'s status after healing"))
        }

        // Identical dumps, healthy indexes.
        var dumps: [String: [String]] = [:]
        var reference: Database?
        for device in remaining {
            let database = try Database(path: device.database)
            dumps[device.name] = try await canonicalDump(of: database)
            let report = try await database.verify()
            #expect(report.isHealthy, replay("\(device.name): \(report.problems)"))
            if reference == nil { reference = database }
        }
        let first = dumps[remaining[0].name]!
        for device in remaining.dropFirst() {
            let dump = dumps[device.name]!
            #expect(
                dump == first,
                replay(
                    "\(device.name) differs from \(remaining[0].name): "
                        + "\(dump.filter { !first.contains($0) }.prefix(5)) against "
                        + "\(first.filter { !dump.contains($0) }.prefix(5))"))
        }

        // Each device's notes are its committed writes replayed.
        let notes = try await reference!.documents(named: "notes").fetch()
        var byID: [String: Document] = [:]
        for note in notes { if case .string(let id) = note.id { byID[id] = note } }
        var ledgers: [String: Ledger] = [:]
        for device in devices {
            let ledger = try Ledger(path: folder.path("\(device.name).ledger"))
            ledgers[device.name] = ledger
            checkReplay(of: device, ledger: ledger, notes: byID)
        }
        checkSharedNotes(ledgers: ledgers, notes: byID)

        // The feed: each change set once, no gaps; none from the removed device after removal.
        let transport = try PostgresTransport(url: role.url)
        defer { transport.close() }
        var feed: [SealedChangeSet] = []
        while true {
            let page = try await transport.pull(
                space: Self.space, after: feed.last?.serverSequence ?? 0, limit: 1_000)
            if page.isEmpty { break }
            feed += page
        }
        feedCount = feed.count
        let state = try await transport.feedState(space: Self.space, fullSize: false)
        let pruned = state.prunedUpTo
        var sequences: [String: [Int64]] = [:]
        for sealed in feed { sequences[sealed.device, default: []].append(sealed.deviceSequence) }
        let names = Dictionary(
            devices.compactMap { device in device.deviceID.map { ($0, device.name) } },
            uniquingKeysWith: { first, _ in first })
        for (id, numbers) in sequences {
            let sorted = numbers.sorted()
            let device = "\(names[id] ?? "?") (\(id))"
            #expect(
                Set(numbers).count == numbers.count,
                replay("device \(device) has a change set twice in the feed"))
            #expect(
                sorted.last! - sorted.first! + 1 == Int64(sorted.count),
                replay(
                    "device \(device)'s change sets have a gap: \(sorted) (pruned up to \(pruned))"
                ))
        }
        let victimID = try #require(victim.deviceID)
        #expect(
            !feed.contains {
                $0.device == victimID && SpaceKeys.epoch(of: Array($0.payload)) >= removedIn
            }, replay("a change set of the removed device under a later epoch"))

        try await checkRemovedDeviceKeys(
            feed: feed, removedIn: removedIn, transport: transport, snapshot: state.snapshot)
    }

    /// The device's notes in the converged state against its ledger: all committed writes for
    /// a remaining device; for the removed one, the writes up to its counter note as the others
    /// received it, which covers at least its last acknowledged push.
    func checkReplay(of device: DeviceProcess, ledger: Ledger, notes: [String: Document]) {
        let counter = notes["counter-\(device.name)"]?["rank"]?.intValue ?? 0
        let lastIntent = ledger.writes.keys.max() ?? 0
        #expect(
            lastIntent == counter || lastIntent == counter + 1 || device === victim,
            replay("\(device.name): ledger ends at write \(lastIntent), synced counter \(counter)"))
        #expect(
            ledger.acknowledged <= counter,
            replay(
                "\(device.name): a push covering write \(ledger.acknowledged) was acknowledged, "
                    + "but the others have only up to \(counter)"))
        if device === victim {
            #expect(
                counter <= lastIntent, replay("\(device.name): counter \(counter) never written"))
        }
        let expected = ledger.replay(upTo: counter)
        let own = notes.filter { $0.key.hasPrefix("\(device.name)-") }
        #expect(
            Set(own.keys) == Set(expected.keys),
            replay(
                "\(device.name): notes missing \(Set(expected.keys).subtracting(own.keys).sorted()), "
                    + "unexpected \(Set(own.keys).subtracting(expected.keys).sorted())"))
        for (id, fields) in expected {
            guard let note = own[id] else { continue }
            #expect(
                Ledger.matches(note, fields),
                replay("\(device.name): \(id) is \(note.fields), its ledger says \(fields)"))
        }
    }

    /// Every field of a shared note shows a value that some device's committed write gave that
    /// field. Not one write's values together: every device replaces the note whole, but a
    /// replace stamps only the fields it changes, so concurrent replaces merge field by field
    /// (a title from one, a body from another is the merge rule at work).
    func checkSharedNotes(ledgers: [String: Ledger], notes: [String: Document]) {
        var written: [String: [String: Set<String>]] = [:]
        for device in devices {
            guard let ledger = ledgers[device.name] else { continue }
            let counter = notes["counter-\(device.name)"]?["rank"]?.intValue ?? 0
            for (number, ops) in ledger.writes where number <= counter {
                for op in ops where op.id.hasPrefix("shared-") {
                    for name in Ledger.fieldNames {
                        written[op.id, default: [:]][name, default: []].insert(
                            op.fields[name] ?? "~")
                    }
                }
            }
        }
        for (id, note) in notes where id.hasPrefix("shared-") {
            for name in Ledger.fieldNames {
                let value = Ledger.text(note[name]) ?? "~"
                #expect(
                    written[id]?[name]?.contains(value) == true,
                    replay(
                        "shared note \(id)'s \(name) is \(value), which no committed write gave it")
                )
            }
            #expect(
                (note["embedding"]?.vectorValue != nil) == (Ledger.text(note["body"]) != nil),
                replay("shared note \(id) has an embedding without a body, or the other way"))
        }
        for id in written.keys {
            #expect(notes[id] != nil, replay("shared note \(id) was written but is missing"))
        }
    }

    /// The removed device's own private key and the epoch keys it kept (read from its database,
    /// as an attacker holding the device would): no change set, snapshot part or wrapped key of
    /// the epochs since its removal opens with them.
    func checkRemovedDeviceKeys(
        feed: [SealedChangeSet], removedIn: Int64, transport: PostgresTransport,
        snapshot: SnapshotDescriptor?
    ) async throws {
        let database = try Database(path: victim.database)
        let sync = try await SyncSpace(
            database: database, space: Self.space,
            key: try SyncKey(passphrase: "crash test", space: Self.space),
            transport: InProcessTransport(), collections: ["notes"])
        let keys = await sync.keys
        let identity = sync.identity
        #expect(
            keys.byEpoch.keys.allSatisfy { $0 < removedIn },
            replay("the removed device holds epochs \(keys.byEpoch.keys.sorted())"))
        // What a remaining device holds, to show the same bytes do open for a member.
        let memberDatabase = try Database(path: devices.first { $0 !== victim }!.database)
        let member = try await SyncSpace(
            database: memberDatabase, space: Self.space,
            key: try SyncKey(passphrase: "crash test", space: Self.space),
            transport: InProcessTransport(), collections: ["notes"])
        let memberKeys = await member.keys
        for sealed in feed where SpaceKeys.epoch(of: Array(sealed.payload)) >= removedIn {
            afterRemovalChecked += 1
            #expect(
                throws: (any Error).self,
                replay("change set \(sealed.serverSequence ?? 0) opened with the removed keys")
            ) { try Sealing.open(sealed, keys: keys, space: Self.space) }
            #expect(
                (try? Sealing.opens(sealed, keys: memberKeys, space: Self.space)) == true,
                replay("a member cannot open change set \(sealed.serverSequence ?? 0)"))
        }
        #expect(afterRemovalChecked > 0, replay("nothing was sealed after the removal"))
        if let snapshot {
            var parts: [Data] = []
            for part in 0..<snapshot.parts {
                if let data = try await transport.snapshotPart(
                    part, of: snapshot, space: Self.space)
                {
                    parts.append(data)
                }
            }
            if parts.count == snapshot.parts,
                parts.allSatisfy({ SpaceKeys.epoch(of: Array($0)) >= removedIn })
            {
                #expect(
                    throws: (any Error).self,
                    replay("the newest snapshot opened with the removed keys")
                ) { try Snapshot.open(parts, descriptor: snapshot, keys: keys, space: Self.space) }
            }
        }
        let records = try await transport.devices(space: Self.space)
        for record in records {
            for wrapped in try await transport.wrappedKeys(for: record.device, space: Self.space)
            where wrapped.epoch >= removedIn {
                #expect(
                    wrapped.device != victim.deviceID,
                    replay("a key wrapped for the removed device"))
                let bound = keys.byEpoch[wrapped.epoch - 1]?.bytes ?? keys.byEpoch[0]!.bytes
                for wrapper in records {
                    #expect(
                        try KeyWrap.unwrap(
                            wrapped, bound: bound, space: Self.space, identity: identity,
                            wrapperKey: Array(wrapper.publicKey)) == nil,
                        replay("a key of epoch \(wrapped.epoch) unwrapped by the removed device"))
                }
            }
        }
    }

    /// Copies each device's output lines and ledger into `folder` (nothing when nil).
    func keepLogs(in folder: String?) {
        guard let folder else { return }
        try? FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true)
        for device in devices {
            try? (device.lines + ["heal:"] + (healLines[device.name] ?? [])).joined(
                separator: "\n"
            ).write(toFile: folder + "/\(device.name).out", atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: folder + "/\(device.name).ledger")
            try? FileManager.default.copyItem(
                atPath: self.folder.path("\(device.name).ledger"),
                toPath: folder + "/\(device.name).ledger")
            // The device's database as healing left it, to read its `_trove_sync_*` tables.
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(
                    atPath: folder + "/\(device.name).trove" + suffix)
                try? FileManager.default.copyItem(
                    atPath: device.database + suffix,
                    toPath: folder + "/\(device.name).trove" + suffix)
            }
        }
        // The server's side: the feed's rows (not their payloads), cursors, snapshots, the space.
        let queries = [
            "SELECT 'space', name, last_sequence, pruned_up_to, key_epoch FROM trove_sync.spaces",
            "SELECT 'cursor', device, pulled_up_to, seen_at FROM trove_sync.cursors ORDER BY device",
            "SELECT 'snapshot', up_to_sequence, device, parts, complete, created_at "
                + "FROM trove_sync.snapshots ORDER BY up_to_sequence",
            "SELECT 'device', device, removed_in FROM trove_sync.devices ORDER BY device",
            "SELECT 'change', server_sequence, device, device_sequence, "
                + "trove_sync.payload_epoch(payload), octet_length(payload) "
                + "FROM trove_sync.changes ORDER BY server_sequence",
        ]
        let state = queries.map { (try? self.server.psql($0)) ?? "(no answer: \($0))" }
            .joined(separator: "\n")
        try? state.write(toFile: folder + "/server.txt", atomically: true, encoding: .utf8)
    }

    /// One line for RELIABILITY.md: what happened in this run.
    func summary() -> String {
        let kills = devices.flatMap(\.kills)
        var phases: [String: Int] = [:]
        for kill in kills { phases[kill, default: 0] += 1 }
        let writes = devices.map { $0.lines.filter { $0.hasPrefix("W ") }.count }.reduce(0, +)
        let errors = devices.map { $0.lines.filter { $0.hasPrefix("E transport") }.count }
            .reduce(0, +)
        return
            "fault harness seed \(settings.seed): \(settings.devices) devices, "
            + "\(Int(settings.seconds)) s; \(writes) writes committed, \(kills.count) kills "
            + "(\(phases.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))), "
            + "\(restartsDone) server restarts, \(cutAllCount) network cuts, proxy: \(proxy.counts); "
            + "\(errors) transport errors met; removal in epoch \(removedIn ?? -1); "
            + "\(healRounds) heal rounds; feed \(feedCount) change sets, "
            + "\(afterRemovalChecked) sealed after the removal; "
            + "\(Int((ContinuousClock.now - started) / .seconds(1))) s in all"
    }
}

/// A device's ledger (`FaultWorkload` in the crash child): its writes by number (the last
/// line for each number wins: a write killed before its commit is written again under the same
/// number) and the newest write an acknowledged push covered.
struct Ledger {
    struct Op {
        var kind: String
        var id: String
        var fields: [String: String]
    }

    var writes: [Int64: [Op]] = [:]
    var acknowledged: Int64 = 0

    init(path: String) throws {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            switch parts.first {
            case "I":
                guard parts.count == 3, let number = Int64(parts[1]) else { continue }
                writes[number] = parts[2].split(separator: ";").map { op in
                    let items = op.split(separator: ",", omittingEmptySubsequences: false).map(
                        String.init)
                    var fields: [String: String] = [:]
                    for item in items.dropFirst(2) {
                        let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                        if pair.count == 2 { fields[pair[0]] = pair[1] }
                    }
                    return Op(kind: items[0], id: items.count > 1 ? items[1] : "", fields: fields)
                }
            case "P":
                if parts.count >= 2, let number = Int64(parts[1]) {
                    acknowledged = max(acknowledged, number)
                }
            default: continue
            }
        }
    }

    /// The device's own notes after its writes 1...`last`, each as its fields (`~` for null).
    func replay(upTo last: Int64) -> [String: [String: String]] {
        var notes: [String: [String: String]] = [:]
        guard last >= 1 else { return notes }
        for number in 1...last {
            for op in writes[number] ?? [] where !op.id.hasPrefix("shared-") {
                switch op.kind {
                case "ins", "ups": notes[op.id] = op.fields
                case "pat": notes[op.id, default: [:]].merge(op.fields) { _, new in new }
                case "del": notes[op.id] = nil
                default: break
                }
            }
        }
        return notes
    }

    /// The fields the ledger records (the embedding follows the body).
    static let fieldNames = ["title", "rank", "body"]

    /// A field's value as the ledger writes it (nil for null).
    static func text(_ value: Value?) -> String? {
        switch value {
        case .string(let text)?: text
        case .int(let number)?: String(number)
        default: nil
        }
    }

    /// Whether the note shows exactly these fields (title, rank, body; absent or `~` is null),
    /// with an embedding exactly when it has a body.
    static func matches(_ note: Document, _ fields: [String: String]) -> Bool {
        for name in fieldNames {
            let expected = fields[name].flatMap { $0 == "~" ? nil : $0 }
            if text(note[name]) != expected { return false }
        }
        let hasBody = text(note["body"]) != nil
        return (note["embedding"]?.vectorValue != nil) == hasBody
    }
}

/// One device's process across its restarts: its output, and kills aimed at a step.
final class DeviceProcess: @unchecked Sendable {
    // @unchecked Sendable: every variable is guarded by `lock`; the reader threads and the
    // harness's task share them.
    let name: String
    let database: String
    let folder: String
    let executable: String
    private let lock = NSLock()
    private var process: ChildProcess?
    private var running = false
    private var started = false
    private var allLines: [String] = []
    private var aim: (prefixes: [String], phase: String, delay: Int)?
    private var landed: [String] = []
    private var id: String?
    private var synced = false
    private var exited: [CheckedContinuation<Void, Never>] = []

    init(name: String, database: String, folder: String, executable: String) {
        self.name = name
        self.database = database
        self.folder = folder
        self.executable = executable
    }

    var isRunning: Bool { lock.withLock { running } }
    var hasStarted: Bool { lock.withLock { started } }
    /// Whether a push or pull of this device has succeeded (it is registered in the space).
    var hasSynced: Bool { lock.withLock { synced } }
    var deviceID: String? { lock.withLock { id } }
    var lines: [String] { lock.withLock { allLines } }
    /// The step each kill landed in ("push", "apply", "write", "snapshot", "removal",
    /// "anywhere").
    var kills: [String] { lock.withLock { landed } }

    /// Starts the device's workload (`work`).
    func start(url: String, seed: UInt64) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["work", database, url, name, String(seed), folder]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.withLock {
            self.process = process
            running = true
            started = true
            aim = nil
        }
        // A thread of its own reads the output and kills on an aimed line at once, whatever the
        // load on the cooperative pool.
        let thread = Thread { [self] in read(pipe, process) }
        thread.start()
    }

    /// Kills the device on its next line starting with one of `prefixes`, `delay` ms after it.
    func arm(on prefixes: [String], phase: String, delay: Int) {
        lock.withLock { if running, aim == nil { aim = (prefixes, phase, delay) } }
    }

    /// Kills the device now (`reason` nil: the end of the fault phase, not counted).
    func kill(reason: String?) {
        lock.withLock {
            guard running, let process else { return }
            killProcess(process.processIdentifier)
            if let reason { landed.append(reason) }
            aim = nil
        }
    }

    func waitForExit() async {
        await withCheckedContinuation { continuation in
            let done = lock.withLock {
                guard running else { return true }
                exited.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func read(_ pipe: Pipe, _ process: ChildProcess) {
        var pending = ""
        while true {
            let data = pipe.fileHandleForReading.availableData
            if data.isEmpty { break }
            pending += String(decoding: data, as: UTF8.self)
            while let newline = pending.firstIndex(of: "\n") {
                let line = String(pending[..<newline])
                pending = String(pending[pending.index(after: newline)...])
                handle(line, process)
            }
        }
        process.waitUntilExit()
        let waiting = lock.withLock {
            running = false
            aim = nil
            let waiting = exited
            exited = []
            return waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    private func handle(_ line: String, _ process: ChildProcess) {
        let target: (phase: String, delay: Int)? = lock.withLock {
            if !line.hasPrefix("~") { allLines.append(line) }
            if line.hasPrefix("D ") {
                id = line.split(separator: " ").dropFirst().first.map(String.init)
            }
            if line.hasPrefix("P ") || line.hasPrefix("A ") { synced = true }
            guard let aim, aim.prefixes.contains(where: { line.hasPrefix($0) }) else { return nil }
            self.aim = nil
            return (aim.phase, aim.delay)
        }
        guard let target else { return }
        if target.delay > 0 { usleep(useconds_t(target.delay * 1_000)) }
        lock.withLock {
            guard running, process.isRunning else { return }
            killProcess(process.processIdentifier)
            landed.append(target.phase)
        }
    }

    /// Runs the child with `arguments` to its end (not as the workload) and returns its output.
    func runToEnd(_ arguments: [String]) async throws -> [String] {
        let executable = self.executable
        return try await onThread {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
                .filter { !$0.hasPrefix("~") }
        }
    }
}

/// SIGKILL (a free function: inside ``DeviceProcess`` the name `kill` is its method).
func killProcess(_ pid: pid_t) {
    kill(pid, SIGKILL)
}

/// Runs blocking work (pg_ctl, a child process to its end) on a thread of its own, not on the
/// cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
