import Foundation
import Trove
import TroveSQLite

/// Devices as members, with keys of their own (Documentation/SYNC.md, "Membership and keys").
///
/// Each device has an X25519 key pair; the space's key of each epoch is wrapped for each member
/// device and kept by the transport beside the space. A member adds a device by the device's
/// invitation (shown on the new device, entered on the member) and a confirmation code (shown on
/// the member, entered on the new device); removing a device starts a new key epoch whose key is
/// wrapped for the remaining devices only.
///
/// ```swift
/// // On the new device (no passphrase):
/// let invitation = try await SyncSpace.invitation(database: phone, space: "notes")
/// // On a member:
/// let code = try await laptopSync.addDevice(invitation: invitation)
/// // On the new device:
/// let phoneSync = try await SyncSpace(
///     database: phone, space: "notes", key: nil, transport: transport, collections: ["notes"])
/// try await phoneSync.acceptMembership(confirmationCode: code)
/// // Later, on any member: the phone reads nothing written after this.
/// try await laptopSync.removeDevice(phoneSync.device)
/// ```
extension SyncSpace {
    /// The invitation of the device whose database is `database`: its id and public key, which
    /// a member enters in ``addDevice(invitation:)``. Binds the database to `space` (as a first
    /// ``SyncSpace`` does) and makes the device's key pair on first use.
    ///
    /// - Throws: ``SyncError/invalidSpace(_:reason:)``,
    ///   ``SyncError/spaceMismatch(bound:requested:)``.
    public static func invitation(database: Database, space: String) async throws -> String {
        guard !space.isEmpty, space.utf8.count <= 200 else {
            throw SyncError.invalidSpace(space, reason: "a space name has 1 to 200 bytes")
        }
        let identity = try await database.syncWrite { connection in
            try DeviceIdentity.load(
                connection, device: try SyncTables.prepare(connection, space: space))
        }
        return KeyWrap.invitation(device: identity.device, publicKey: identity.publicKey)
    }

    /// This device's invitation (see ``invitation(database:space:)``).
    public nonisolated var invitation: String {
        KeyWrap.invitation(device: identity.device, publicKey: identity.publicKey)
    }

    /// Whether `database` holds keys a member gave it (it was added by code, so it syncs without
    /// the passphrase).
    public static func holdsSpaceKeys(_ database: Database) async throws -> Bool {
        try await database.syncWrite { connection in
            guard try SyncTables.boundSpace(connection) != nil else { return false }
            return try DeviceIdentity.storedKeys(connection)[0] != nil
        }
    }

    /// The key epoch new change sets are sealed under (0 until a device is first removed).
    public var keyEpoch: Int64 { keys.current }

    /// A transport failure of a membership request, saying what to do when the server's schema
    /// predates devices.
    static func membershipError(_ error: any Error) -> SyncError {
        if case .server(let state, _)? = error as? PostgresError, state == "42883" {
            return .transport(
                "the server's Trove schema predates devices with keys of their own: run "
                    + "`trove sync setup-server URL` (or trove-sync.sql) again as its administrator"
            )
        }
        return transportError(error)
    }

    func membershipTransport() throws -> any MembershipTransport {
        guard let members = transport as? any MembershipTransport else {
            throw SyncError.membershipUnavailable
        }
        return members
    }

    /// Learns the space's key epoch and unwraps the epoch keys wrapped for this device since it
    /// last looked; registers this device (with a certificate under the newest key) the first
    /// time. With `force` false, once per instance; with `force`, asks the server for the epoch
    /// again (one request) and refreshes only when it moved.
    ///
    /// - Throws: ``SyncError/removedFromSpace(space:device:)``,
    ///   ``SyncError/awaitingMembership(space:device:)``, ``SyncError/transport(_:)``.
    func refreshMembership(force: Bool) async throws {
        guard let members = transport as? any MembershipTransport else {
            guard keys.first != nil else {
                throw SyncError.awaitingMembership(space: space, device: device)
            }
            return
        }
        if membershipChecked, !force { return }
        let current: Int64
        do {
            current = try await members.keyEpoch(space: space)
        } catch PostgresError.server(let state, _) where state == "42883" && keys.first != nil {
            // A server whose schema predates devices (version 3 or older) keeps the space at
            // its first key: sync goes on as before; adding and removing devices say to upgrade.
            membershipChecked = true
            return
        } catch {
            throw Self.transportError(error)
        }
        if membershipChecked, current == keys.current { return }
        let records: [SyncDeviceRecord]
        do { records = try await members.devices(space: space) } catch {
            throw Self.transportError(error)
        }
        var held = keys.byEpoch
        let mine = records.first { $0.device == device }
        if held[current] == nil {
            let wrapped: [WrappedSpaceKey]
            do { wrapped = try await members.wrappedKeys(for: device, space: space) } catch {
                throw Self.transportError(error)
            }
            let learnt = try unwrap(wrapped, records: records, holding: held, code: nil)
            held.merge(learnt) { old, _ in old }
            if !learnt.isEmpty {
                try await database.syncWrite { try DeviceIdentity.store(learnt, on: $0) }
            }
        }
        guard held[current] != nil else {
            if mine?.removedIn != nil {
                throw SyncError.removedFromSpace(space: space, device: device)
            }
            throw SyncError.awaitingMembership(space: space, device: device)
        }
        let moved = current != keys.current
        keys = SpaceKeys(byEpoch: held, current: current)
        if moved {
            let (newKeys, name, this) = (keys, space, device)
            _ = try await database.syncWrite { connection in
                try Outbox.reseal(on: connection, keys: newKeys, space: name, device: this)
            }
        }
        if mine == nil {
            let certificate = try KeyWrap.certificate(
                space: space, device: device, publicKey: identity.publicKey, keys: keys)
            do {
                try await members.putDevice(
                    SyncDeviceRecord(
                        device: device, publicKey: Data(identity.publicKey),
                        certificate: certificate),
                    keys: [], space: space)
            } catch {
                throw Self.transportError(error)
            }
        }
        membershipChecked = true
    }

    /// The epoch keys of `wrapped` this device can open, in epoch order: epoch 0's with the
    /// confirmation code, each later one with the key of the epoch before it.
    private func unwrap(
        _ wrapped: [WrappedSpaceKey], records: [SyncDeviceRecord], holding: [Int64: SyncKey],
        code: String?
    ) throws -> [Int64: SyncKey] {
        let publicKeys = Dictionary(
            records.map { ($0.device, Array($0.publicKey)) },
            uniquingKeysWith: { first, _ in first })
        var held = holding
        var learnt: [Int64: SyncKey] = [:]
        for wrap in wrapped.sorted(by: { $0.epoch < $1.epoch }) where held[wrap.epoch] == nil {
            let bound: [UInt8]
            if wrap.epoch == 0 {
                guard let code else { continue }
                bound = KeyWrap.normalized(code: code)
            } else {
                guard let previous = held[wrap.epoch - 1] else { continue }
                bound = previous.bytes
            }
            guard let wrapperKey = publicKeys[wrap.wrappedBy],
                let key = try KeyWrap.unwrap(
                    wrap, bound: bound, space: space, identity: identity, wrapperKey: wrapperKey)
            else { continue }
            held[wrap.epoch] = key
            learnt[wrap.epoch] = key
        }
        return learnt
    }

    /// The space's devices, removed ones included, in the order they were added.
    ///
    /// - Throws: ``SyncError/membershipUnavailable``, ``SyncError/transport(_:)``.
    public func devices() async throws -> [SyncDeviceRecord] {
        let members = try membershipTransport()
        do { return try await members.devices(space: space) } catch {
            throw Self.membershipError(error)
        }
    }

    /// Adds the device that showed `invitation`: wraps every epoch's key for its public key
    /// (epoch 0's bound to a new confirmation code) and registers it. The new device enters the
    /// returned code in ``acceptMembership(confirmationCode:)``: the invitation proves its key to
    /// this device, the code proves this device's wrapping to it, so the server can substitute
    /// neither.
    ///
    /// - Parameter invitation: the new device's ``invitation``.
    /// - Returns: the confirmation code to show (for example `K7QMD-2XPRT`).
    /// - Throws: ``SyncError/invalidInvitation(reason:)`` (nothing sent),
    ///   ``SyncError/removedFromSpace(space:device:)`` for a removed device's invitation,
    ///   ``SyncError/wrongKey(space:)``, ``SyncError/transport(_:)``.
    public func addDevice(invitation: String) async throws -> String {
        let (newDevice, newKey) = try KeyWrap.parseInvitation(invitation)
        guard newDevice != device else {
            throw SyncError.invalidInvitation(reason: "it is this device's own")
        }
        let members = try membershipTransport()
        try await verifyKey()
        try await refreshMembership(force: true)
        let records = try await devices()
        if let known = records.first(where: { $0.device == newDevice }) {
            guard known.removedIn == nil else {
                throw SyncError.removedFromSpace(space: space, device: newDevice)
            }
            guard Array(known.publicKey) == newKey else {
                throw SyncError.invalidInvitation(
                    reason: "device \(newDevice) is registered with another key")
            }
        }
        let code = try KeyWrap.newConfirmationCode()
        var wraps: [WrappedSpaceKey] = []
        for epoch in 0...keys.current {
            guard let key = keys.byEpoch[epoch] else {
                throw SyncError.missingEpochKey(epoch: epoch)
            }
            let bound =
                epoch == 0 ? KeyWrap.normalized(code: code) : keys.byEpoch[epoch - 1]!.bytes
            wraps.append(
                try KeyWrap.wrap(
                    key, epoch: epoch, bound: bound, space: space, wrapper: identity,
                    recipient: newDevice, recipientKey: newKey))
        }
        let certificate = try KeyWrap.certificate(
            space: space, device: newDevice, publicKey: newKey, keys: keys)
        do {
            try await members.putDevice(
                SyncDeviceRecord(
                    device: newDevice, publicKey: Data(newKey), certificate: certificate),
                keys: wraps, space: space)
        } catch {
            throw Self.membershipError(error)
        }
        return code
    }

    /// Accepts the keys a member wrapped for this device (``addDevice(invitation:)``), with the
    /// confirmation code that member showed; they are kept in the database, so later syncs need
    /// no passphrase.
    ///
    /// - Parameter confirmationCode: the code shown on the adding device (case and dashes do not
    ///   matter).
    /// - Throws: ``SyncError/wrongConfirmationCode`` (nothing kept),
    ///   ``SyncError/awaitingMembership(space:device:)`` when no member added it yet,
    ///   ``SyncError/transport(_:)``.
    public func acceptMembership(confirmationCode: String) async throws {
        let members = try membershipTransport()
        let records: [SyncDeviceRecord]
        let wrapped: [WrappedSpaceKey]
        do {
            records = try await members.devices(space: space)
            wrapped = try await members.wrappedKeys(for: device, space: space)
        } catch {
            throw Self.membershipError(error)
        }
        guard wrapped.contains(where: { $0.epoch == 0 }) else {
            throw SyncError.awaitingMembership(space: space, device: device)
        }
        let learnt = try unwrap(wrapped, records: records, holding: [:], code: confirmationCode)
        guard learnt[0] != nil else { throw SyncError.wrongConfirmationCode }
        try await database.syncWrite { try DeviceIdentity.store(learnt, on: $0) }
        var held = keys.byEpoch
        held.merge(learnt) { _, given in given }
        keys = SpaceKeys(byEpoch: held, current: held.keys.max() ?? 0)
        membershipChecked = false
        // Registers itself: the server then records the role this device syncs as.
        do {
            try await members.putDevice(
                SyncDeviceRecord(
                    device: device, publicKey: Data(identity.publicKey),
                    certificate: try KeyWrap.certificate(
                        space: space, device: device, publicKey: identity.publicKey, keys: keys)),
                keys: [], space: space)
        } catch {
            throw Self.membershipError(error)
        }
    }

    /// Removes a device from the space: starts a new key epoch whose key is wrapped for the
    /// remaining member devices only (those whose certificate this device can open). Change sets
    /// and snapshots are sealed under it from now on; the removed device opens nothing sealed
    /// after this, and the server refuses its pushes. Devices that device added stay members:
    /// remove them too (``devices()`` lists them).
    ///
    /// - Parameter removed: the device's id (``devices()``, ``SyncStatus/device``).
    /// - Returns: the new key epoch.
    /// - Throws: ``SyncError/unknownDevice(_:)`` for this device or a device that is not a
    ///   member (nothing sent), ``SyncError/transport(_:)`` (nothing changed: another device
    ///   started the epoch first, say).
    @discardableResult
    public func removeDevice(_ removed: String) async throws -> Int64 {
        guard removed != device else { throw SyncError.unknownDevice(removed) }
        let members = try membershipTransport()
        try await verifyKey()
        try await refreshMembership(force: true)
        let records = try await devices()
        guard records.contains(where: { $0.device == removed && $0.removedIn == nil }) else {
            throw SyncError.unknownDevice(removed)
        }
        let epoch = keys.current + 1
        let key = try SyncKey.random()
        let previous = try keys.currentKey()
        let wraps = try records.filter {
            $0.removedIn == nil && $0.device != removed
                && ($0.device == device || KeyWrap.isCertified($0, space: space, keys: keys))
        }.map { record in
            try KeyWrap.wrap(
                key, epoch: epoch, bound: previous.bytes, space: space, wrapper: identity,
                recipient: record.device, recipientKey: Array(record.publicKey))
        }
        do {
            try await members.startEpoch(epoch, removing: [removed], keys: wraps, space: space)
        } catch {
            throw Self.membershipError(error)
        }
        keys.byEpoch[epoch] = key
        keys.current = epoch
        let (newKeys, name, this) = (keys, space, device)
        try await database.syncWrite { connection in
            try DeviceIdentity.store([epoch: key], on: connection)
            try Outbox.reseal(on: connection, keys: newKeys, space: name, device: this)
        }
        return epoch
    }
}
