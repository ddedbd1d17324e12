import Foundation
import Trove
import TroveSync

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The child process of the sync crash tests (not a product): one device's step, run until it
/// ends or the test kills it with SIGKILL.
///
/// ```
/// TroveSyncCrashChild edit <device.trove> <server.trove> <count>   insert count notes (ids n0...)
/// TroveSyncCrashChild push <device.trove> <server.trove>           push everything; "P <n>" at the end
/// TroveSyncCrashChild pull <device.trove> <server.trove>           pull everything; "A <n>" at the end
/// TroveSyncCrashChild work <device.trove> <url> <name> <seed> <folder>   the fault harness's device
/// TroveSyncCrashChild heal <device.trove> <url>                     push, pull, print the status
/// ```
/// The server is a SQLite file (``FileTransport``), so several processes share one feed, or a
/// PostgreSQL URL. Progress lines start with "~" ("~ start" before a push or pull; with the
/// SQLite server also "~ pushing n" and "~ pushed n" around its write and "~ pulled n" before
/// the apply): the test kills the child on reading one of them, so the kill lands inside the
/// step however loaded the machine.
@main
struct TroveSyncCrashChild {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4 else {
            fail("usage: TroveSyncCrashChild edit|push|pull <device> <server> ...")
        }
        do {
            let database = try Database(path: arguments[2])
            let notes = try await database.documents(
                "notes",
                schema: DocumentSchema(
                    id: .string,
                    fields: [
                        .text("title"), .text("body", optional: true),
                        .integer("rank", optional: true),
                        .vector("embedding", dimension: FaultWorkload.dimension, optional: true),
                    ],
                    fullText: FullTextDefinition(fields: ["title", "body"])))
            if arguments[1] == "work" || arguments[1] == "heal" {
                try await FaultWorkload.main(arguments, database: database, notes: notes)
            }
            // A libpq URL: the PostgreSQL server (PostgresCrashTests); otherwise a SQLite feed file.
            let transport: any SyncTransport =
                arguments[3].hasPrefix("postgresql://")
                ? try PostgresTransport(url: arguments[3]) : try FileTransport(path: arguments[3])
            let sync = try await SyncSpace(
                database: database, space: "crash",
                key: try SyncKey(passphrase: "crash test", space: "crash"),
                transport: transport, collections: ["notes"])
            switch arguments[1] {
            case "edit":
                let count = Int(arguments[4])!
                for start in stride(from: 0, to: count, by: 500) {
                    try await notes.insert(
                        (start..<min(count, start + 500)).map { i in
                            Document(
                                id: .string("n\(i)"),
                                [
                                    "title": .string("note \(i)"),
                                    "body": .string("body of note \(i)"),
                                    "rank": .int(Int64(i)),
                                ])
                        })
                }
                say("E \(count)")
            case "push":
                say("~ start")
                say("P \(try await sync.push())")
            case "pull":
                say("~ start")
                say("A \(try await sync.pull())")
            default: fail("unknown mode \(arguments[1])")
            }
        } catch {
            say("X \(error)")
            exit(1)
        }
        exit(0)
    }

    /// One line straight to fd 1 (seen by the parent even if a kill follows at once).
    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    static func fail(_ message: String) -> Never {
        say("X \(message)")
        exit(2)
    }
}

/// A server feed in a SQLite file: `feed(server_sequence, space, device, device_sequence,
/// payload)`, one row per (space, device, device sequence), so several processes share it.
struct FileTransport: SyncTransport {
    let server: Database

    init(path: String) throws {
        server = try Database(path: path)
    }

    private func prepare() async throws {
        try await server.execute(
            script: """
                CREATE TABLE IF NOT EXISTS feed (
                    server_sequence INTEGER PRIMARY KEY AUTOINCREMENT, space TEXT NOT NULL, device TEXT NOT NULL,
                    device_sequence INTEGER NOT NULL, payload BLOB NOT NULL, UNIQUE (space, device, device_sequence));
                CREATE TABLE IF NOT EXISTS key_checks (space TEXT PRIMARY KEY, value BLOB NOT NULL);
                """)
    }

    func push(_ changeSets: [SealedChangeSet], space: String) async throws -> [Int64] {
        try await prepare()
        TroveSyncCrashChild.say("~ pushing \(changeSets.count)")
        let sequences = try await server.write { tx in
            try changeSets.map { set in
                try tx.execute(
                    "INSERT INTO feed(space, device, device_sequence, payload) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    [
                        .text(space), .text(set.device), .integer(set.deviceSequence),
                        .blob(Array(set.payload)),
                    ])
                return try tx.query(
                    "SELECT server_sequence FROM feed WHERE space = ? AND device = ? AND device_sequence = ?",
                    [.text(space), .text(set.device), .integer(set.deviceSequence)]
                ).first?.int64(at: 0) ?? 0
            }
        }
        TroveSyncCrashChild.say("~ pushed \(changeSets.count)")
        return sequences
    }

    func pull(space: String, after: Int64, limit: Int) async throws -> [SealedChangeSet] {
        try await prepare()
        let changeSets = try await server.query(
            "SELECT server_sequence, device, device_sequence, payload FROM feed WHERE space = ? AND server_sequence > ? ORDER BY server_sequence LIMIT ?",
            bindings: [.text(space), .integer(after), .integer(Int64(limit))]
        ).map {
            SealedChangeSet(
                device: $0.string(at: 1) ?? "", deviceSequence: $0.int64(at: 2) ?? 0,
                payload: $0.data(at: 3) ?? Data(),
                serverSequence: $0.int64(at: 0))
        }
        if !changeSets.isEmpty { TroveSyncCrashChild.say("~ pulled \(changeSets.count)") }
        return changeSets
    }

    func notifications(space: String) -> AsyncStream<Void> {
        AsyncStream { _ in }
    }

    func keyCheck(space: String) async throws -> Data? {
        try await prepare()
        return try await server.query(
            "SELECT value FROM key_checks WHERE space = ?", bindings: [.text(space)]
        ).first?
        .data(at: 0)
    }

    func setKeyCheck(_ check: Data, space: String) async throws -> Data {
        try await prepare()
        // One statement keeps the first value when two processes race; the read returns it.
        _ = try await server.execute(
            "INSERT INTO key_checks(space, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
            bindings: [.text(space), .blob(Array(check))])
        return try await keyCheck(space: space) ?? check
    }
}
