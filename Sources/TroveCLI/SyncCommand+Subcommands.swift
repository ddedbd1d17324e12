import Foundation

/// The subcommands of `trove sync`, each with its own options and help.
extension SyncCommand {
    /// `trove sync setup-server URL`.
    struct SetupServer: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync setup-server",
            summary: "install Trove's server schema on a PostgreSQL database",
            usage: "sync setup-server URL",
            discussion: """
                Installs Trove's server schema (trove-sync.sql: spaces, members, the change
                feed, row-level security, LISTEN/NOTIFY) on the PostgreSQL database at URL, as a
                role that may create schemas and roles. Safe to run again. Then create one login
                role per person or device:
                    CREATE ROLE alice_laptop LOGIN PASSWORD '...' IN ROLE trove_sync_device;
                """,
            options: Commands.common, positionals: (1, 1),
            examples: [
                (
                    "trove sync setup-server postgresql://admin@db.example.com/trove",
                    "install the server schema"
                )
            ])

        var url: String

        init(parsing arguments: ParsedArguments) throws { url = arguments.positionals[0] }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.setUpServer(url: url, context: context)
            }
        }
    }

    /// `trove sync status`.
    struct Status: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync status",
            summary: "pending changes, queued, quarantined and missing change sets, last error",
            usage: "sync status [--space NAME] [--server URL]",
            discussion: """
                This device's id, pending local changes, change sets not yet acknowledged, the
                last pushed and pulled sequence numbers, change sets queued and why, change sets
                quarantined, change sets of other devices missing (a gap in a writer's sequence
                numbers), whether it is in sync, a snapshot it refused, conflicts and the last
                error (kept in the database when a sync fails); with --server also the server's
                last sequence, the feed's size (change sets and bytes, how far it was pruned),
                the newest snapshot and the pruning horizon. The space is the one the database
                syncs unless --space names it.
                """,
            options: SyncOptions.all,
            examples: [
                (
                    "trove sync status --server postgresql://alice_laptop@db.example.com/trove",
                    "what is pending, queued or failing, and the server's feed"
                ),
                ("trove sync status --json", "the local status, for scripts"),
            ])

        var options: SyncOptions

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.status(options, context: context)
            }
        }
    }

    /// `trove sync snapshot`.
    struct Snapshot: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync snapshot",
            summary: "sync, then upload a snapshot so new devices start from it",
            usage: "sync snapshot --server URL [--space NAME]",
            discussion: """
                Syncs, then uploads a sealed snapshot of this device's state (parts of 4 MB; the
                server sees sizes only) so new devices start from it; the server then prunes the
                change sets at or below both the snapshot and the slowest cursor of the devices
                seen within its horizon (90 days by default; the administrator changes it with
                UPDATE trove_sync.settings SET prune_horizon = '30 days'). A device back after
                the horizon starts again from the snapshot; its own unsent changes are kept and
                sent.
                """,
            options: SyncOptions.all,
            examples: [
                (
                    "trove sync snapshot --server postgresql://alice_laptop@db.example.com/trove",
                    "upload a snapshot now, so new devices start from it and the feed can be pruned"
                )
            ])

        var options: SyncOptions

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.sync(options, context: context, snapshot: true)
            }
        }
    }

    /// `trove sync quarantine`.
    struct Quarantine: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync quarantine",
            summary: "list, delete or forget the change sets that do not open",
            usage: "sync quarantine [--server URL --delete | --forget]",
            discussion: """
                Lists the change sets this device quarantined: server sequence, the device that
                sealed it and its sequence number, and why. With --server URL --delete the
                space's owner (URL's role) deletes them from the server, so new devices never
                pull them, and this device forgets them; --forget only forgets them here (after
                the owner deleted them). In SQL: SELECT trove_sync.delete_change_set(space,
                device, device_sequence).
                """,
            options: [
                OptionSpec(
                    "delete",
                    help: "delete the quarantined change sets from the server (owner only)"),
                OptionSpec("forget", help: "forget the quarantined change sets on this device"),
            ] + SyncOptions.all,
            examples: [
                (
                    "trove sync quarantine --server postgresql://alice@db.example.com/trove --delete",
                    "the space's owner deletes change sets no device can open"
                )
            ])

        var options: SyncOptions
        var delete: Bool
        var forget: Bool

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
            (delete, forget) = (arguments.flag("delete"), arguments.flag("forget"))
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.quarantine(self, context: context)
            }
        }
    }

    /// `trove sync invite`.
    struct Invite: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync invite",
            summary: "on a new device: print its invitation (its id and public key)",
            usage: "sync invite --space NAME",
            discussion: """
                Prints this device's invitation (its id and public key, QR-sized), to give to
                a member's 'trove sync add-device'.
                """,
            options: SyncOptions.all,
            examples: [("trove sync invite --space notes", "on a new device: show its invitation")])

        var options: SyncOptions

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.invite(options, context: context)
            }
        }
    }

    /// `trove sync add-device INVITATION`.
    struct AddDevice: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync add-device",
            summary: "on a member: add the device that showed an invitation",
            usage: "sync add-device INVITATION --server URL",
            discussion: """
                Adds the device that showed INVITATION (the space's key is wrapped for it) and
                prints a confirmation code to enter on the new device.
                """,
            options: SyncOptions.all, positionals: (1, 1),
            examples: [
                (
                    "trove sync add-device trove-device-1:... --server postgresql://alice_laptop@db.example.com/trove",
                    "on a member: add that device; prints the code to enter there"
                )
            ])

        var options: SyncOptions
        var invitation: String

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
            invitation = arguments.positionals[0]
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.addDevice(invitation, options: options, context: context)
            }
        }
    }

    /// `trove sync join --code CODE`.
    struct Join: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync join",
            summary: "on the new device: accept the keys with the member's code, then sync",
            usage: "sync join --server URL --space NAME --code CODE",
            discussion: """
                Accepts the keys with the code the adding device showed (a wrong code keeps
                nothing), then syncs. Later syncs need no passphrase.
                """,
            options: [
                OptionSpec(
                    "code", value: "CODE", help: "the confirmation code the adding device showed")
            ] + SyncOptions.all,
            examples: [
                (
                    "trove sync join --server postgresql://alice_phone@db.example.com/trove --space notes --code K7QMD-2XPRT",
                    "on the new device: accept and sync"
                )
            ])

        var options: SyncOptions
        var code: String

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
            guard let code = arguments.value("code") else {
                throw CLIError.usage(
                    "join needs --code CODE (shown by add-device)", command: "sync join")
            }
            self.code = code
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.join(code: code, options: options, context: context)
            }
        }
    }

    /// `trove sync devices`.
    struct Devices: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync devices",
            summary: "the space's devices: id, role, this device, removed ones",
            usage: "sync devices --server URL", options: SyncOptions.all,
            examples: [
                (
                    "trove sync devices --server postgresql://alice_laptop@db.example.com/trove",
                    "every device of the space, removed ones marked"
                )
            ])

        var options: SyncOptions

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.devices(options, context: context)
            }
        }
    }

    /// `trove sync remove-device DEVICE`.
    struct RemoveDevice: TroveCommand {
        static let configuration = CommandSpec(
            name: "sync remove-device",
            summary: "remove a device: a new key epoch it does not hold",
            usage: "sync remove-device DEVICE --server URL",
            discussion: """
                Removes a device: a new key epoch, wrapped for the remaining devices only; what
                is written from now on is sealed under it, so the removed device reads none of
                it, and the server refuses its pushes (it then fails with exit 1). Joining by
                passphrase keeps working until a device is first removed; after that a member
                adds new devices (the removed one knows the passphrase).
                """,
            options: SyncOptions.all, positionals: (1, 1),
            examples: [
                (
                    "trove sync remove-device 3f2a... --server postgresql://alice_laptop@db.example.com/trove",
                    "remove a lost device: it reads nothing written after"
                )
            ])

        var options: SyncOptions
        var device: String

        init(parsing arguments: ParsedArguments) throws {
            options = SyncOptions(parsing: arguments)
            device = arguments.positionals[0]
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await SyncCommand.reporting(context) {
                try await SyncCommand.removeDevice(device, options: options, context: context)
            }
        }
    }
}
