import Foundation
import Trove
import TroveSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One device of the fault harness (`FaultHarnessTests`): a seeded random workload of writes,
/// pushes, pulls and snapshot uploads against PostgreSQL, run until the harness kills it.
///
/// ```
/// TroveSyncCrashChild work <device.trove> <url> <name> <seed> <folder>
/// TroveSyncCrashChild heal <device.trove> <url>
/// ```
///
/// Every write is one transaction that changes one to three notes and sets the device's counter
/// note (`counter-<name>`, its rank the write's number) together. Before the transaction the
/// device appends the write to its ledger (`<folder>/<name>.ledger`, one `write(2)` per line, so
/// a kill loses at most the line being written):
///
/// ```
/// D <device id>                          at every start
/// I <n> <op>;<op>...                     write n, about to commit (committed iff the counter reached n)
/// P <n>                                  a push covering writes up to n was acknowledged
/// R <epoch>                              this device removed another (key epoch started)
/// ```
///
/// An op is `ins,<id>,<field>=<value>...` (a new note), `ups,<id>,...` (a note replaced whole),
/// `pat,<id>,...` (fields changed) or `del,<id>`; `body=~` is a null body. A note's embedding
/// is a function of its body, so the ledger leaves it out.
///
/// The device writes its own notes (`<name>-n<write>-<i>`, created once; `<name>-p<k>`, a pool
/// of ids inserted, patched, deleted and inserted again) and the shared notes `shared-<k>` that
/// every device replaces. When `<folder>/<name>.control` holds `remove <device id>` it removes
/// that device from the space (a new key epoch), then renames the file `.done`.
///
/// Standard output carries progress lines for the harness's kills ("~ write", "~ push",
/// "~ pull", "~ snapshot", "~ removing" and the transport's lines) and results: `W n`, `P n`,
/// `A n`, `S n`, `R epoch`, `E transport|removed|other: message`.
enum FaultWorkload {
    /// The embedding's dimension (small: the vectors are there to be merged and indexed).
    static let dimension = 8
    static let space = "crash"
    static let passphrase = "crash test"
    static let poolSize = 12
    static let sharedCount = 4
    static let words = [
        "oat", "milk", "tea", "bread", "river", "stone", "lamp", "north", "salt", "fern",
    ]

    static func main(_ arguments: [String], database: Database, notes: DocumentCollection)
        async throws -> Never
    {
        let transport = ProgressTransport(base: try PostgresTransport(url: arguments[3]))
        let sync = try await SyncSpace(
            database: database, space: space,
            key: try SyncKey(passphrase: passphrase, space: space), transport: transport,
            collections: ["notes"])
        if arguments[1] == "heal" { await heal(sync) }
        guard arguments.count >= 7, let seed = UInt64(arguments[5]) else {
            TroveSyncCrashChild.fail("usage: work <device> <url> <name> <seed> <folder>")
        }
        var device = try await Device(
            name: arguments[4], database: database, notes: notes, sync: sync,
            folder: arguments[6], seed: seed)
        await device.run()
    }

    /// Pushes and pulls once, then prints `H <pushed> <applied>` and the status:
    /// `Q <pending> <unacknowledged> <queued> <quarantined> <missing> <epoch> <in sync 0/1>`.
    static func heal(_ sync: SyncSpace) async -> Never {
        do {
            let pushed = try await sync.push()
            let applied = try await sync.pull()
            let status = try await sync.refreshStatus()
            TroveSyncCrashChild.say("H \(pushed) \(applied)")
            TroveSyncCrashChild.say(
                "Q \(status.pendingChanges) \(status.unacknowledgedChangeSets) "
                    + "\(status.queued.count) \(status.quarantined.count) \(status.missing.count) "
                    + "\(status.keyEpoch) \(status.isInSync ? 1 : 0)")
            exit(0)
        } catch {
            TroveSyncCrashChild.say("X \(kind(of: error)): \(error)")
            exit(1)
        }
    }

    static func kind(of error: any Error) -> String {
        switch error as? SyncError {
        case .transport?: "transport"
        case .removedFromSpace?: "removed"
        default: "other"
        }
    }

    /// The writing device: its state and its generator.
    struct Device {
        let name: String
        let database: Database
        let notes: DocumentCollection
        let sync: SyncSpace
        let ledger: Int32
        let control: String
        var random: SplitMix
        /// The last committed write (the counter note's rank).
        var counter: Int64
        /// The pool ids that exist now.
        var live: Set<Int>

        init(
            name: String, database: Database, notes: DocumentCollection, sync: SyncSpace,
            folder: String, seed: UInt64
        ) async throws {
            self.name = name
            self.database = database
            self.notes = notes
            self.sync = sync
            control = folder + "/\(name).control"
            ledger = open(folder + "/\(name).ledger", O_WRONLY | O_CREAT | O_APPEND, 0o644)
            guard ledger >= 0 else { TroveSyncCrashChild.fail("cannot open the ledger") }
            random = SplitMix(seed: seed)
            counter = try await notes.fetch(id: .string("counter-\(name)"))?["rank"]?.intValue ?? 0
            var live = Set<Int>()
            for k in 0..<FaultWorkload.poolSize
            where try await notes.fetch(id: .string("\(name)-p\(k)")) != nil {
                live.insert(k)
            }
            self.live = live
            record("D \(sync.device)")
            TroveSyncCrashChild.say("D \(sync.device) \(counter)")
        }

        mutating func run() async -> Never {
            while true {
                await removeIfAsked()
                let roll = Int.random(in: 0..<100, using: &random)
                do {
                    switch roll {
                    case 0..<55: try await write()
                    case 55..<75:
                        let covered = counter
                        TroveSyncCrashChild.say("~ push")
                        let pushed = try await sync.push()
                        record("P \(covered)")
                        TroveSyncCrashChild.say("P \(pushed)")
                    case 75..<96:
                        TroveSyncCrashChild.say("~ pull")
                        TroveSyncCrashChild.say("A \(try await sync.pull())")
                    default:
                        TroveSyncCrashChild.say("~ snapshot")
                        let snapshot = try await sync.uploadSnapshot()
                        TroveSyncCrashChild.say("S \(snapshot.upToSequence)")
                    }
                } catch {
                    let kind = FaultWorkload.kind(of: error)
                    TroveSyncCrashChild.say(
                        "E \(kind): \(error)".replacingOccurrences(of: "\n", with: " "))
                    // A removed device keeps trying, more slowly (the harness expects refusals).
                    pause(
                        milliseconds: kind == "removed"
                            ? 200 : Int.random(in: 20...150, using: &random))
                }
                pause(milliseconds: Int.random(in: 0...30, using: &random))
            }
        }

        /// One write: one to three notes and the counter, in one transaction, after its ledger line.
        mutating func write() async throws {
            let number = counter + 1
            var ops: [Op] = []
            var live = self.live
            for i in 0..<Int.random(in: 1...3, using: &random) {
                let roll = Int.random(in: 0..<100, using: &random)
                if roll < 30 {
                    ops.append(
                        .insert(id: "\(name)-n\(number)-\(i)", fields: fields(number, full: true)))
                } else if roll < 75 {
                    let k = Int.random(in: 0..<FaultWorkload.poolSize, using: &random)
                    let id = "\(name)-p\(k)"
                    if !live.contains(k) {
                        ops.append(.insert(id: id, fields: fields(number, full: true)))
                        live.insert(k)
                    } else if Int.random(in: 0..<10, using: &random) < 6 {
                        ops.append(.patch(id: id, fields: fields(number, full: false)))
                    } else {
                        ops.append(.delete(id: id))
                        live.remove(k)
                    }
                } else {
                    let k = Int.random(in: 0..<FaultWorkload.sharedCount, using: &random)
                    ops.append(.replace(id: "shared-\(k)", fields: fields(number, full: true)))
                }
            }
            record("I \(number) " + ops.map(\.ledger).joined(separator: ";"))
            TroveSyncCrashChild.say("~ write \(number)")
            let (written, counterID) = (ops, "counter-\(name)")
            try await database.write { tx in
                let notes = try tx.documents("notes")
                for op in written {
                    switch op {
                    case .insert(let id, let fields):
                        try notes.insert(Document(id: .string(id), fields.values))
                    case .replace(let id, let fields):
                        try notes.upsert([Document(id: .string(id), fields.values)])
                    case .patch(let id, let fields):
                        _ = try notes.patch(
                            .string(id),
                            Dictionary(
                                uniqueKeysWithValues: fields.values.map {
                                    (Field($0.key), $0.value)
                                }))
                    case .delete(let id): _ = try notes.delete(id: .string(id))
                    }
                }
                try notes.upsert([
                    Document(
                        id: .string(counterID), ["title": .string("counter"), "rank": .int(number)])
                ])
            }
            counter = number
            self.live = live
            TroveSyncCrashChild.say("W \(number)")
        }

        /// New values for a note written by write `number`: every field (a new or replaced
        /// note: title, rank, and a body with its embedding or none) or some of them (a patch).
        mutating func fields(_ number: Int64, full: Bool) -> Fields {
            var fields = Fields()
            let title = "\(name) \(number) \(word())"
            if full || Bool.random(using: &random) { fields.set("title", .string(title)) }
            if full || Bool.random(using: &random) {
                fields.set("rank", .int(Int64.random(in: 0..<1_000, using: &random)))
            }
            if full || Int.random(in: 0..<3, using: &random) == 0 {
                if Int.random(in: 0..<4, using: &random) == 0 {
                    fields.set("body", nil)
                } else {
                    fields.set("body", .string("\(word()) \(word()) \(word()) \(number)"))
                }
            }
            if fields.values.isEmpty { fields.set("title", .string(title)) }
            return fields
        }

        mutating func word() -> String {
            FaultWorkload.words[Int.random(in: 0..<FaultWorkload.words.count, using: &random)]
        }

        /// Removes the device the harness names in the control file, once.
        mutating func removeIfAsked() async {
            guard let text = try? String(contentsOfFile: control, encoding: .utf8) else { return }
            let parts = text.split(separator: " ").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard parts.count == 2, parts[0] == "remove" else { return }
            TroveSyncCrashChild.say("~ removing")
            do {
                let epoch = try await sync.removeDevice(parts[1])
                record("R \(epoch)")
                TroveSyncCrashChild.say("R \(epoch)")
            } catch SyncError.unknownDevice {
                // Removed already: by this device before a kill or a lost acknowledgement.
                TroveSyncCrashChild.say("R done")
            } catch {
                TroveSyncCrashChild.say(
                    "E \(FaultWorkload.kind(of: error)): \(error)".replacingOccurrences(
                        of: "\n", with: " "))
                return
            }
            rename(control, control + ".done")
        }

        /// One ledger line, in one append.
        func record(_ line: String) { appendLine(line, to: ledger) }

        func pause(milliseconds: Int) {
            if milliseconds > 0 { usleep(useconds_t(milliseconds * 1_000)) }
        }
    }

    /// What one write does to one note.
    enum Op: Sendable {
        case insert(id: String, fields: Fields)
        case replace(id: String, fields: Fields)
        case patch(id: String, fields: Fields)
        case delete(id: String)

        var ledger: String {
            switch self {
            case .insert(let id, let fields): (["ins", id] + fields.ledger).joined(separator: ",")
            case .replace(let id, let fields): (["ups", id] + fields.ledger).joined(separator: ",")
            case .patch(let id, let fields): (["pat", id] + fields.ledger).joined(separator: ",")
            case .delete(let id): "del,\(id)"
            }
        }
    }

    /// Field values in the order they were drawn (a null body is `.null`, with a null
    /// embedding; a body brings its embedding).
    struct Fields: Sendable {
        private(set) var ordered: [(String, Value)] = []

        mutating func set(_ name: String, _ value: Value?) {
            ordered.append((name, value ?? .null))
            if name == "body" {
                let text = value?.stringValue
                ordered.append(
                    ("embedding", text.map { .vector(FaultWorkload.embedding($0)) } ?? .null))
            }
        }

        var values: [String: Value] {
            Dictionary(ordered, uniquingKeysWith: { _, last in last })
        }

        var ledger: [String] {
            ordered.compactMap { name, value in
                switch value {
                case .string(let text): "\(name)=\(text)"
                case .int(let number): "\(name)=\(number)"
                case .null: name == "embedding" ? nil : "\(name)=~"
                default: nil
                }
            }
        }
    }

    /// A deterministic vector for a body (FNV-1a of its bytes, spread over the components).
    static func embedding(_ text: String) -> [Float] {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        var random = SplitMix(seed: hash)
        return (0..<dimension).map { _ in Float.random(in: -1...1, using: &random) }
    }
}

/// Writes `line` and a newline to `fd` in one `write(2)` (outside ``FaultWorkload/Device``, whose
/// `write()` is a write of notes).
func appendLine(_ line: String, to fd: Int32) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}

/// SplitMix64, as the tests' `SeededGenerator` (this target does not depend on test support).
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
