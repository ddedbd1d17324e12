import Foundation
import Trove
import TroveSync

/// `trove sync invite | add-device | join | devices | remove-device`: devices as members of a
/// space, each with a key of its own.
extension SyncCommand {
    /// `trove sync invite`: this device's invitation (binds the database to the space).
    static func invite(_ options: SyncOptions, context: CommandContext) async throws -> Int32 {
        guard let space = options.space else {
            throw CLIError.usage("invite needs --space NAME", command: "sync")
        }
        let database = try EncryptionPassphrase.openDatabase(
            path: try context.databasePath(), context: context)
        let invitation = try await SyncSpace.invitation(database: database, space: space)
        if context.json {
            try context.printJSON(InvitationResult(invitation: invitation))
        } else {
            context.console.out.write(invitation + "\n")
            context.warn(
                "enter it on a device of space \(space): trove sync add-device INVITATION --server URL"
            )
        }
        return ExitCode.success
    }

    /// `trove sync add-device INVITATION`: wraps the space's keys for the new device.
    static func addDevice(_ invitation: String, options: SyncOptions, context: CommandContext)
        async throws -> Int32
    {
        let (transport, database) = try await serverAndDatabase(
            options, context: context, action: "add-device")
        defer { transport.close() }
        let sync = try await openSpace(
            options, context: context, database: database, transport: transport)
        let code = try await sync.addDevice(invitation: invitation)
        if context.json {
            try context.printJSON(DeviceCodeResult(code: code))
        } else {
            context.console.out.write(code + "\n")
            context.warn(
                "on the new device: trove sync join --server URL --space \(sync.space) --code \(code)"
            )
        }
        return ExitCode.success
    }

    /// `trove sync join --code CODE`: accepts the keys a member wrapped, then syncs.
    static func join(code: String, options: SyncOptions, context: CommandContext) async throws
        -> Int32
    {
        let (transport, database) = try await serverAndDatabase(
            options, context: context, action: "join")
        defer { transport.close() }
        let space = try await spaceName(options, database)
        let sync = try await SyncSpace(
            database: database, space: space, key: nil, transport: transport,
            collections: try await collections(options, database))
        try await sync.acceptMembership(confirmationCode: code)
        return try await Self.sync(options, context: context)
    }

    /// `trove sync devices`: the space's devices.
    static func devices(_ options: SyncOptions, context: CommandContext) async throws -> Int32 {
        let (transport, database) = try await serverAndDatabase(
            options, context: context, action: "devices")
        defer { transport.close() }
        let space = try await spaceName(options, database)
        let sync = try await SyncSpace(
            database: database, space: space, key: try SyncKey.random(), transport: transport,
            collections: try await collections(options, database))
        let records = try await sync.devices()
        if context.json {
            try context.printJSON(
                DeviceListResult(
                    devices: records.map {
                        DeviceListResult.Device(
                            device: $0.device, role: $0.role, thisDevice: $0.device == sync.device,
                            removedIn: $0.removedIn)
                    }))
        } else {
            for record in records {
                context.console.out.write(
                    "\(record.device)  \(record.role)"
                        + (record.device == sync.device ? "  (this device)" : "")
                        + (record.removedIn.map { "  removed (key epoch \($0))" } ?? "") + "\n")
            }
        }
        return ExitCode.success
    }

    /// `trove sync remove-device DEVICE`: a new key epoch without that device.
    static func removeDevice(_ removed: String, options: SyncOptions, context: CommandContext)
        async throws -> Int32
    {
        let (transport, database) = try await serverAndDatabase(
            options, context: context, action: "remove-device")
        defer { transport.close() }
        let sync = try await openSpace(
            options, context: context, database: database, transport: transport)
        let epoch = try await sync.removeDevice(removed)
        if context.json {
            try context.printJSON(DeviceRemovedResult(removed: removed, keyEpoch: epoch))
        } else {
            context.console.err.write(
                "removed device \(removed); key epoch \(epoch) is wrapped for the others only\n")
        }
        return ExitCode.success
    }
}
