import Foundation
import Trove
import TroveSync

/// The options every sync subcommand reads the same way: where the server is, the space and
/// the collections.
struct SyncOptions: Sendable, Equatable {
    /// `--server`: the PostgreSQL server (libpq URL).
    var server: String?
    /// `--space` (nil: the one the database syncs).
    var space: String?
    /// `--collection` (empty: notes and the vectors of further models).
    var collections: [String]

    init(parsing arguments: ParsedArguments) {
        server = arguments.value("server")
        space = arguments.value("space").flatMap { $0.isEmpty ? nil : $0 }
        collections = arguments.all("collection")
    }

    static let server = OptionSpec(
        "server", value: "URL", help: "the PostgreSQL server (libpq URL)")
    static let space = OptionSpec(
        "space", value: "NAME",
        help: "the space's name (the same on every device; default: the database's space)")
    static let collection = OptionSpec(
        "collection", value: "NAME", repeatable: true,
        help: "a collection to sync (repeat for several; default: notes)")
    /// What every subcommand that opens the space accepts.
    static let all = [server, space, collection] + Commands.database + Commands.common

    /// The server's URL. - Throws: a usage error naming `command` when `--server` is missing.
    func serverURL(for command: String) throws -> String {
        guard let server else {
            throw CLIError.usage("\(command) needs --server URL", command: command)
        }
        return server
    }
}

/// `trove sync`: push this database's changes to its space and pull everyone else's; the
/// subcommands set up the server, show the status, and manage snapshots, quarantined change
/// sets and devices.
struct SyncCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "sync",
        summary: "sync collections with other devices through PostgreSQL (end-to-end encrypted)",
        usage: "sync [--server URL] [--space NAME] [options] | trove sync SUBCOMMAND [options]",
        discussion: """
            Pushes this database's changes to the space and pulls everyone else's (the space is
            created, owned by URL's role, the first time). Change sets are sealed with a key
            made from the space's passphrase: $TROVE_SYNC_PASSWORD_FILE (its first line), else
            $TROVE_SYNC_PASSWORD, else a prompt. The server never sees the passphrase or a
            clear-text field. --space may be left out once the database has synced: it keeps
            its space's name.
            The first device that syncs a space stores a key check with it (a constant sealed
            with the key); every device opens it before it sends or applies anything, so a
            wrong passphrase is refused (exit 6) with nothing sent, and the changes made
            meanwhile go out at the next sync with the right one.
            A change set that does not open (altered on the server, or sealed with another key
            by an older version) is quarantined: skipped, never applied in part, the ones after
            it applied as usual (see sync quarantine).
            Synced collections need UUID or String ids (--collection; default: notes and the
            vectors of further models). Notes databases of older versions, whose ids were
            whole numbers, get UUID ids the first time this version opens them.
            A chunk's id comes from its collection's name, its file's path below the
            collection's folder (the folder's name, then the rest: notes/2026/march.md) and its
            position in the file, so machines that index the same notes (a shared folder, or a
            copy) write the same ids and sync keeps one copy of each; give the collection the
            same name and its folder the same name on every machine. A changed file is
            rewritten in place and the last writer's version wins.
            A new device starts from the space's newest snapshot (when the server has one) and
            pulls only the change sets after it; one it cannot use (does not open, an unknown
            format or a newer schema, older than what it has) is refused and the feed pulled
            instead. After syncing, a device uploads a snapshot when 10,000 change sets or 64 MB
            arrived since the newest one. A device that tracks each writer's sequence numbers
            says which change sets are missing when a later one of the same device arrived
            (status), and is not in sync until they arrive.

            Devices are members with keys of their own: each has an X25519 key pair, and the
            space's key is wrapped for each member device on the server (invite, add-device,
            join, devices, remove-device).

            A URL is libpq's: postgresql://ROLE[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...].
            A host other than this machine is reached over TLS unless the URL sets sslmode.
            """,
        options: SyncOptions.all,
        examples: [
            (
                "trove sync setup-server postgresql://admin@db.example.com/trove",
                "install the server schema"
            ),
            (
                "TROVE_SYNC_PASSWORD_FILE=~/.notes-sync trove sync --server postgresql://alice_laptop@db.example.com/trove --space notes",
                "push and pull the space 'notes'"
            ),
            ("trove sync status --json", "the local status, for scripts"),
        ])
    static let subcommands: [any TroveCommand.Type] = [
        SetupServer.self, Status.self, Snapshot.self, Quarantine.self, Invite.self,
        AddDevice.self, Join.self, Devices.self, RemoveDevice.self,
    ]

    var options: SyncOptions

    init(parsing arguments: ParsedArguments) throws { options = SyncOptions(parsing: arguments) }

    func run(_ context: CommandContext) async throws -> Int32 {
        try await Self.reporting(context) { try await Self.sync(options, context: context) }
    }
}

extension SyncCommand {
    /// Runs `body`, turning the server's and the space's errors into the tool's.
    static func reporting(_ context: CommandContext, _ body: () async throws -> Int32)
        async throws -> Int32
    {
        do {
            return try await body()
        } catch let error as PostgresError {
            throw CLIError.failure(error.description)
        } catch let error as SyncError {
            if case .wrongKey = error {
                throw CLIError.wrongPassphrase(
                    "\(error.description) (passphrase from \(passphraseSource(context)))")
            }
            throw CLIError.failure(error.description)
        }
    }

    static func setUpServer(url: String, context: CommandContext) async throws -> Int32 {
        let version = try await PostgresTransport.installServerSchema(url: url)
        if context.json {
            try context.printJSON(SyncSchemaResult(schemaVersion: Int(version)))
        } else {
            context.console.out.write(
                "installed Trove's sync schema (version \(version)); devices log in with roles IN ROLE trove_sync_device\n"
            )
        }
        return ExitCode.success
    }

    /// `trove sync` (and `trove sync snapshot`: a snapshot whether due or not).
    static func sync(_ options: SyncOptions, context: CommandContext, snapshot: Bool = false)
        async throws -> Int32
    {
        let url = try options.serverURL(for: snapshot ? "sync snapshot" : "sync")
        let transport = try PostgresTransport(url: url)
        defer { transport.close() }
        let database = try EncryptionPassphrase.openDatabase(
            path: try context.databasePath(), context: context)
        try await Notebook.migrate(database, context: context)
        let sync = try await openSpace(
            options, context: context, database: database, transport: transport)
        let space = sync.space
        do {
            try await transport.createSpace(space)
        } catch {
            // Kept for `trove sync status`, as a failed push or pull keeps its own.
            try? await sync.recordFailure(error)
            throw error
        }
        var pushed = try await sync.push()
        let pulled = try await sync.pull()
        // A pull can leave changes to send: this device's own, marked again when it found one of
        // its change sets unreadable (pushed with a wrong key by an older version).
        if try await sync.refreshStatus().pendingChanges > 0 { pushed += try await sync.push() }
        let uploaded = snapshot ? try await sync.uploadSnapshot() : try await sync.snapshotIfDue()
        let status = try await sync.refreshStatus()
        if context.json {
            try context.printJSON(
                SyncRunResult(
                    pushed: pushed, pulled: pulled, status: SyncStatusResult(status),
                    snapshot: uploaded.map(SnapshotResult.init)))
        } else {
            context.console.out.write(
                "pushed \(pushed) change set\(pushed == 1 ? "" : "s"), pulled \(pulled); "
                    + "space \(space) at sequence \(status.lastPulledSequence)\n")
            if let uploaded {
                context.console.out.write(
                    "uploaded a snapshot up to sequence \(uploaded.upToSequence) (\(uploaded.bytes) bytes in \(uploaded.parts) "
                        + "part\(uploaded.parts == 1 ? "" : "s"))\n")
            }
            if !status.queued.isEmpty {
                context.warn(
                    "\(status.queued.count) change sets queued: \(Set(status.queued.map(\.reason.description)).sorted().joined(separator: "; "))"
                )
            }
        }
        if !status.quarantined.isEmpty {
            context.warn(
                "\(status.quarantined.count) change set\(status.quarantined.count == 1 ? "" : "s") quarantined "
                    + "(they do not open: altered, or sealed with another key); see trove sync quarantine"
            )
        }
        return ExitCode.success
    }

    /// The database's sync space with its key: the passphrase's, unless a member added this
    /// device (it then holds keys of its own and no passphrase is asked).
    static func openSpace(
        _ options: SyncOptions, context: CommandContext, database: Database,
        transport: PostgresTransport
    ) async throws -> SyncSpace {
        let space = try await spaceName(options, database)
        let key =
            try await SyncSpace.holdsSpaceKeys(database)
            ? nil : try SyncKey(passphrase: try passphrase(context, space: space), space: space)
        return try await SyncSpace(
            database: database, space: space, key: key, transport: transport,
            collections: try await collections(options, database))
    }

    /// A server transport and the database, for the membership actions.
    static func serverAndDatabase(
        _ options: SyncOptions, context: CommandContext, action: String
    ) async throws -> (PostgresTransport, Database) {
        let url = try options.serverURL(for: "sync \(action)")
        let transport = try PostgresTransport(url: url)
        let database = try EncryptionPassphrase.openDatabase(
            path: try context.databasePath(), context: context)
        try await Notebook.migrate(database, context: context)
        return (transport, database)
    }

    /// The database's sync space without its key: the status and the quarantine open no change
    /// set, so no passphrase is asked and a random key stands in.
    static func localSpace(
        _ options: SyncOptions, context: CommandContext, server: PostgresTransport?
    ) async throws -> SyncSpace {
        let database = try EncryptionPassphrase.openDatabase(
            path: try context.databasePath(), context: context)
        try await Notebook.migrate(database, context: context)
        let space = try await spaceName(options, database)
        return try await SyncSpace(
            database: database, space: space, key: try SyncKey.random(),
            transport: server ?? InProcessTransport(),
            collections: try await collections(options, database))
    }

    static func status(_ options: SyncOptions, context: CommandContext) async throws -> Int32 {
        let server = try options.server.map { try PostgresTransport(url: $0) }
        defer { server?.close() }
        let sync = try await localSpace(options, context: context, server: server)
        let space = sync.space
        let status = try await sync.refreshStatus()
        var serverSequence: Int64?
        var feed: FeedState?
        var serverError: String?
        if let server {
            do {
                serverSequence = try await server.lastSequence(space: space)
                feed = try await server.feedState(space: space, fullSize: true)
            } catch { serverError = "\(error)" }
        }
        if context.json {
            try context.printJSON(
                SyncStatusReport(
                    space: space, status: SyncStatusResult(status),
                    serverSequence: serverSequence, feed: feed.map(FeedResult.init),
                    serverError: serverError))
            return ExitCode.success
        }
        var lines = [
            "space:              \(space)",
            "device:             \(status.device)",
            "pending changes:    \(status.pendingChanges)",
            "unacknowledged:     \(status.unacknowledgedChangeSets) change sets",
            "last pushed:        \(status.lastPushedSequence)",
            "last pulled:        \(status.lastPulledSequence)",
            "queued:             \(status.queued.count)",
            "quarantined:        \(status.quarantined.count)",
            "missing:            \(status.missing.count == 0 ? "none" : status.missing.map(\.description).joined(separator: "; "))",
            "in sync:            \(status.isInSync ? "yes" : "no")",
            "conflicts:          \(status.conflicts)",
            "key epoch:          \(status.keyEpoch)",
        ]
        if let refused = status.refusedSnapshot { lines.append("refused snapshot:   \(refused)") }
        for queued in status.queued {
            lines.append("  queued \(queued.serverSequence): \(queued.reason)")
        }
        for set in status.quarantined { lines.append("  quarantined \(describe(set))") }
        if let error = status.lastError { lines.append("last error:         \(error)") }
        if let serverSequence { lines.append("server sequence:    \(serverSequence)") }
        if let feed {
            lines.append(
                "feed:               \(feed.changeSets ?? 0) change sets, \(feed.bytes ?? 0) bytes, pruned up to \(feed.prunedUpTo)"
            )
            if let snapshot = feed.snapshot {
                lines.append(
                    "snapshot:           up to \(snapshot.upToSequence), \(snapshot.bytes) bytes in \(snapshot.parts) parts, "
                        + "by device \(snapshot.device); \(feed.changeSetsSinceSnapshot) change sets since"
                )
            } else {
                lines.append("snapshot:           none")
            }
            lines.append("horizon:            \(feed.horizon.components.seconds / 86_400) days")
        }
        if let serverError { lines.append("server:             unreachable (\(serverError))") }
        context.console.out.write(lines.joined(separator: "\n") + "\n")
        return ExitCode.success
    }

    /// `trove sync quarantine`: lists the quarantined change sets; `--delete` (with `--server`)
    /// deletes them from the server as the space's owner and forgets them, `--forget` forgets them.
    static func quarantine(_ command: Quarantine, context: CommandContext) async throws -> Int32 {
        let options = command.options
        let delete = command.delete
        let server = try options.server.map { try PostgresTransport(url: $0) }
        defer { server?.close() }
        if delete && server == nil {
            throw CLIError.usage(
                "quarantine --delete needs --server URL (the space owner's role)",
                command: "sync quarantine")
        }
        let sync = try await localSpace(options, context: context, server: server)
        let quarantined = try await sync.refreshStatus().quarantined
        var deleted: [Bool] = []
        if delete, let server {
            for set in quarantined {
                deleted.append(
                    try await server.deleteChangeSet(
                        device: set.device, deviceSequence: set.deviceSequence, space: sync.space))
                try await sync.forgetQuarantined(set)
            }
        } else if command.forget {
            for set in quarantined { try await sync.forgetQuarantined(set) }
        }
        if context.json {
            try context.printJSON(
                QuarantineResult(
                    space: sync.space,
                    quarantined: quarantined.map {
                        QuarantineResult.ChangeSet(
                            serverSequence: $0.serverSequence, device: $0.device,
                            deviceSequence: $0.deviceSequence, reason: $0.reason.description)
                    },
                    deleted: delete ? deleted.filter { $0 }.count : nil))
            return ExitCode.success
        }
        var lines =
            quarantined.isEmpty
            ? ["no change set quarantined in space \(sync.space)"]
            : [
                "\(quarantined.count) change set\(quarantined.count == 1 ? "" : "s") quarantined in space \(sync.space):"
            ]
                + quarantined.map { "  \(describe($0))" }
        if delete {
            lines.append(
                "deleted \(deleted.filter { $0 }.count) from the server (the others were gone already)"
            )
        } else if command.forget {
            lines.append("forgotten on this device")
        }
        context.console.out.write(lines.joined(separator: "\n") + "\n")
        return ExitCode.success
    }

    static func describe(_ set: QuarantinedChangeSet) -> String {
        "\(set.serverSequence): change set \(set.deviceSequence) of device \(set.device), \(set.reason)"
    }

    /// `--space`, else the space the database syncs (it keeps its name from its first sync).
    static func spaceName(_ options: SyncOptions, _ database: Database) async throws
        -> String
    {
        if let space = options.space { return space }
        guard let bound = try await SyncSpace.boundSpace(of: database) else {
            throw CLIError.usage(
                "--space NAME is needed (this database has not synced a space yet)", command: "sync"
            )
        }
        return bound
    }

    /// The collections to sync: those named, else the notes (with every model's vectors, so
    /// another device searches with every model at once) and the
    /// collections' definitions (name, context, mask), so their contexts travel with the notes.
    static func collections(_ options: SyncOptions, _ database: Database) async throws
        -> [String]
    {
        let named = options.collections
        guard named.isEmpty else { return named }
        try await Notebook.prepareDefinitions(database)
        return [Notebook.collectionName, Notebook.definitionsName]
    }

    /// The space's passphrase: `TROVE_SYNC_PASSWORD_FILE` (first line), `TROVE_SYNC_PASSWORD`, or
    /// a prompt with echo off, as the database passphrase is read.
    static func passphrase(_ context: CommandContext, space: String) throws -> String {
        let environment = context.console.environment
        if let file = environment["TROVE_SYNC_PASSWORD_FILE"] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CLIError.wrongPassphrase("cannot read TROVE_SYNC_PASSWORD_FILE (\(file))")
            }
            var line =
                String(decoding: data, as: UTF8.self).split(
                    separator: "\n", omittingEmptySubsequences: false
                )
                .first.map(String.init) ?? ""
            if line.hasSuffix("\r") { line.removeLast() }
            guard !line.isEmpty else {
                throw CLIError.wrongPassphrase("TROVE_SYNC_PASSWORD_FILE (\(file)) is empty")
            }
            return line
        }
        if let passphrase = environment["TROVE_SYNC_PASSWORD"] {
            guard !passphrase.isEmpty else {
                throw CLIError.wrongPassphrase("TROVE_SYNC_PASSWORD is empty")
            }
            return passphrase
        }
        guard context.console.stdinIsTerminal,
            let typed = EncryptionPassphrase.prompt("Passphrase for sync space \(space): "),
            !typed.isEmpty
        else {
            throw CLIError.wrongPassphrase(
                "sync needs the space's passphrase: set TROVE_SYNC_PASSWORD_FILE or TROVE_SYNC_PASSWORD, or run on a terminal"
            )
        }
        return typed
    }

    static func passphraseSource(_ context: CommandContext) -> String {
        let environment = context.console.environment
        if environment["TROVE_SYNC_PASSWORD_FILE"] != nil { return "TROVE_SYNC_PASSWORD_FILE" }
        if environment["TROVE_SYNC_PASSWORD"] != nil { return "TROVE_SYNC_PASSWORD" }
        return "the terminal"
    }
}
