import Foundation
import Trove
import TroveSync

extension Commands {
    static let sync = CommandSpec(
        name: "sync",
        summary: "sync collections with other devices through PostgreSQL (end-to-end encrypted)",
        usage: "sync setup-server URL | sync --server URL --space NAME [options] | sync status --space NAME [options]",
        discussion: """
            trove sync setup-server URL
                Installs Trove's server schema (trove-sync.sql: spaces, members, the change
                feed, row-level security, LISTEN/NOTIFY) on the PostgreSQL database at URL, as
                a role that may create schemas and roles. Safe to run again. Then create one
                login role per person or device:
                    CREATE ROLE alice_laptop LOGIN PASSWORD '...' IN ROLE trove_sync_device;

            trove sync --server URL --space NAME
                Pushes this database's changes to the space and pulls everyone else's (the
                space is created, owned by URL's role, the first time). Change sets are sealed
                with a key made from the space's passphrase: $TROVE_SYNC_PASSWORD_FILE (its
                first line), else $TROVE_SYNC_PASSWORD, else a prompt. The server never sees
                the passphrase or a clear-text field. Synced collections need UUID or String
                ids (--collection; default: notes and the vectors of further models). Notes
                databases of older versions, whose ids were whole numbers, get UUID ids the
                first time this version opens them.
                A chunk's id comes from its collection's name, its file's path below the
                collection's folder (the folder's name, then the rest: notes/2026/march.md) and
                its position in the file, so machines that index the same notes (a shared
                folder, or a copy) write the same ids and sync keeps one copy of each; give the
                collection the same name and its folder the same name on every machine. A
                changed file is rewritten in place and the last writer's version wins.

            trove sync status --space NAME [--server URL]
                This device's id, pending local changes, change sets not yet acknowledged, the
                last pushed and pulled sequence numbers, change sets queued and why, conflicts
                and the last error; with --server also the server's last sequence.

            A URL is libpq's: postgresql://ROLE[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...].
            A host other than this machine is reached over TLS unless the URL sets sslmode.
            """,
        options: [
            OptionSpec("server", value: "URL", help: "the PostgreSQL server (libpq URL)"),
            OptionSpec("space", value: "NAME", help: "the space's name (the same on every device)"),
            OptionSpec(
                "collection", value: "NAME", repeatable: true,
                help: "a collection to sync (repeat for several; default: notes)"),
        ] + database + common,
        positionals: (0, 2),
        examples: [
            ("trove sync setup-server postgresql://admin@db.example.com/trove", "install the server schema"),
            ("TROVE_SYNC_PASSWORD_FILE=~/.notes-sync trove sync --server postgresql://alice_laptop@db.example.com/trove --space notes",
             "push and pull the space 'notes'"),
            ("trove sync status --space notes --server postgresql://alice_laptop@db.example.com/trove",
             "what is pending, queued or failing"),
            ("trove sync status --space notes --json", "the local status, for scripts"),
        ])
}

/// `trove sync`: install the server schema, sync a space, show its status.
enum SyncCommand {
    static func run(_ context: CommandContext) async throws -> Int32 {
        let positionals = context.arguments.positionals
        do {
            switch positionals.first {
            case "setup-server":
                guard positionals.count == 2 else {
                    throw CLIError.usage("setup-server needs the server's URL", command: "sync")
                }
                return try await setUpServer(url: positionals[1], context: context)
            case "status":
                guard positionals.count == 1 else { throw CLIError.usage("status takes no argument", command: "sync") }
                return try await status(context)
            case nil:
                return try await sync(context)
            case let word?:
                throw CLIError.usage("unknown sync action '\(word)' (setup-server, status, or none)", command: "sync")
            }
        } catch let error as PostgresError {
            throw CLIError.failure(error.description)
        } catch let error as SyncError {
            if case .cannotOpen = error {
                throw CLIError.wrongPassphrase("\(error.description) (passphrase from \(passphraseSource(context)))")
            }
            throw CLIError.failure(error.description)
        }
    }

    static func setUpServer(url: String, context: CommandContext) async throws -> Int32 {
        let version = try await PostgresTransport.installServerSchema(url: url)
        if context.json {
            context.console.out.write(JSONValue.object([("schemaVersion", .int(Int64(version)))]).serialized() + "\n")
        } else {
            context.console.out.write(
                "installed Trove's sync schema (version \(version)); devices log in with roles IN ROLE trove_sync_device\n")
        }
        return ExitCode.success
    }

    static func sync(_ context: CommandContext) async throws -> Int32 {
        guard let url = context.arguments.value("server") else {
            throw CLIError.usage("--server URL is needed", command: "sync")
        }
        let space = try spaceName(context)
        let transport = try PostgresTransport(url: url)
        defer { transport.close() }
        let database = try EncryptionPassphrase.openDatabase(path: try context.databasePath(), context: context)
        try await Notebook.migrateIDs(database, context: context)
        let key = try SyncKey(passphrase: try passphrase(context, space: space), space: space)
        try await transport.createSpace(space)
        let sync = try await SyncSpace(
            database: database, space: space, key: key, transport: transport, collections: try await collections(context, database))
        let pushed = try await sync.push()
        let pulled = try await sync.pull()
        let status = try await sync.refreshStatus()
        if context.json {
            context.console.out.write(
                JSONValue.object([("pushed", .int(Int64(pushed))), ("pulled", .int(Int64(pulled))), ("status", json(status))])
                    .serialized() + "\n")
        } else {
            context.console.out.write(
                "pushed \(pushed) change set\(pushed == 1 ? "" : "s"), pulled \(pulled); "
                    + "space \(space) at sequence \(status.lastPulledSequence)\n")
            if !status.queued.isEmpty {
                context.warn("\(status.queued.count) change sets queued: \(Set(status.queued.map(\.reason.description)).sorted().joined(separator: "; "))")
            }
        }
        return ExitCode.success
    }

    static func status(_ context: CommandContext) async throws -> Int32 {
        let space = try spaceName(context)
        let database = try EncryptionPassphrase.openDatabase(path: try context.databasePath(), context: context)
        try await Notebook.migrateIDs(database, context: context)
        let server = try context.arguments.value("server").map { try PostgresTransport(url: $0) }
        defer { server?.close() }
        // The status opens no change set, so no passphrase is asked: a random key stands in.
        let sync = try await SyncSpace(
            database: database, space: space, key: try SyncKey.random(),
            transport: server ?? InProcessTransport(), collections: try await collections(context, database))
        let status = try await sync.refreshStatus()
        var serverSequence: Int64?
        var serverError: String?
        if let server {
            do { serverSequence = try await server.lastSequence(space: space) } catch { serverError = "\(error)" }
        }
        if context.json {
            var fields = [("space", JSONValue.string(space)), ("status", json(status))]
            if let serverSequence { fields.append(("serverSequence", .int(serverSequence))) }
            if let serverError { fields.append(("serverError", .string(serverError))) }
            context.console.out.write(JSONValue.object(fields).serialized() + "\n")
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
            "conflicts:          \(status.conflicts)",
        ]
        for queued in status.queued { lines.append("  queued \(queued.serverSequence): \(queued.reason)") }
        if let error = status.lastError { lines.append("last error:         \(error)") }
        if let serverSequence { lines.append("server sequence:    \(serverSequence)") }
        if let serverError { lines.append("server:             unreachable (\(serverError))") }
        context.console.out.write(lines.joined(separator: "\n") + "\n")
        return ExitCode.success
    }

    private static func spaceName(_ context: CommandContext) throws -> String {
        guard let space = context.arguments.value("space"), !space.isEmpty else {
            throw CLIError.usage("--space NAME is needed", command: "sync")
        }
        return space
    }

    /// The collections to sync: those named, else the notes with the vectors of every further
    /// model (`notes_vectors_N`), so another device searches with every model at once.
    private static func collections(_ context: CommandContext, _ database: Database) async throws -> [String] {
        let named = context.arguments.all("collection")
        guard named.isEmpty else { return named }
        var names = [Notebook.collectionName]
        while try await database.configuration(of: Notebook.companionName(names.count)) != nil {
            names.append(Notebook.companionName(names.count))
        }
        return names
    }

    private static func json(_ status: SyncStatus) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("device", .string(status.device)), ("pendingChanges", .int(Int64(status.pendingChanges))),
            ("unacknowledgedChangeSets", .int(Int64(status.unacknowledgedChangeSets))),
            ("lastPushedSequence", .int(status.lastPushedSequence)),
            ("lastPulledSequence", .int(status.lastPulledSequence)),
            ("queued", .array(status.queued.map { .string("\($0.serverSequence): \($0.reason)") })),
            ("conflicts", .int(Int64(status.conflicts))),
        ]
        if let error = status.lastError { fields.append(("lastError", .string(error.description))) }
        return .object(fields)
    }

    /// The space's passphrase: `TROVE_SYNC_PASSWORD_FILE` (first line), `TROVE_SYNC_PASSWORD`, or
    /// a prompt with echo off, as the database passphrase is read.
    static func passphrase(_ context: CommandContext, space: String) throws -> String {
        let environment = context.console.environment
        if let file = environment["TROVE_SYNC_PASSWORD_FILE"] {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CLIError.wrongPassphrase("cannot read TROVE_SYNC_PASSWORD_FILE (\(file))")
            }
            var line = String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                .first.map(String.init) ?? ""
            if line.hasSuffix("\r") { line.removeLast() }
            guard !line.isEmpty else { throw CLIError.wrongPassphrase("TROVE_SYNC_PASSWORD_FILE (\(file)) is empty") }
            return line
        }
        if let passphrase = environment["TROVE_SYNC_PASSWORD"] {
            guard !passphrase.isEmpty else { throw CLIError.wrongPassphrase("TROVE_SYNC_PASSWORD is empty") }
            return passphrase
        }
        guard context.console.stdinIsTerminal,
            let typed = EncryptionPassphrase.prompt("Passphrase for sync space \(space): "), !typed.isEmpty
        else {
            throw CLIError.wrongPassphrase(
                "sync needs the space's passphrase: set TROVE_SYNC_PASSWORD_FILE or TROVE_SYNC_PASSWORD, or run on a terminal")
        }
        return typed
    }

    private static func passphraseSource(_ context: CommandContext) -> String {
        let environment = context.console.environment
        if environment["TROVE_SYNC_PASSWORD_FILE"] != nil { return "TROVE_SYNC_PASSWORD_FILE" }
        if environment["TROVE_SYNC_PASSWORD"] != nil { return "TROVE_SYNC_PASSWORD" }
        return "the terminal"
    }
}
