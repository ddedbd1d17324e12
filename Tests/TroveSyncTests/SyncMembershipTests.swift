import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@testable import TroveSync

/// Devices as members with keys of their own, through the real PostgreSQL server: removing a
/// device starts a key epoch it holds no key of, and a member adds a device by its invitation
/// and a confirmation code.
@Suite struct SyncMembershipTests {
    /// A role, a space created by it, a passphrase key, and one transport per device.
    private func space(devices: Int) async throws -> (String, SyncKey, [PostgresTransport]) {
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<devices).map { _ in try PostgresTransport(url: role.url) }
        let space = SyncServerFixture.newSpaceName()
        try await transports[0].createSpace(space)
        return (space, try SyncKey.random(), transports)
    }

    @Test func aRemovedDeviceOpensNothingWrittenAfterItsRemovalAndTheOthersConverge() async throws {
        let directory = try TemporaryDirectory()
        let (space, key, transports) = try await space(devices: 3)
        defer { transports.forEach { $0.close() } }
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await Device.make(
            "b", in: directory, transport: transports[1], key: key, space: space)
        let x = try await Device.make(
            "x", in: directory, transport: transports[2], key: key, space: space)
        try await a.notes.insert([Notes.note("before", title: "Before", body: "written by all")])
        for device in [a, b, x, a, b, x] {
            try await device.sync.push()
            try await device.sync.pull()
        }
        #expect(try await x.notes.fetch(id: "before") != nil)
        #expect(try await a.sync.devices().count == 3)
        let before = try await transports[0].lastSequence(space: space)

        // A removes X: epoch 1, wrapped for A and B only.
        #expect(try await a.sync.removeDevice(x.sync.device) == 1)
        try await a.notes.insert([Notes.note("after-a", title: "Secret", body: "harbour code")])
        try await a.sync.push()
        // B learns the new epoch from the first change set sealed under it, in a pull.
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "after-a") != nil)
        #expect(await b.sync.keyEpoch == 1)
        try await b.notes.insert([Notes.note("after-b", title: "Plan", body: "lighthouse at six")])
        for device in [b, a, b] {
            try await device.sync.push()
            try await device.sync.pull()
        }
        #expect(try await a.canonicalDump() == b.canonicalDump())
        #expect(try await a.notes.fetch(id: "after-b") != nil)
        #expect(await b.sync.keyEpoch == 1)
        #expect(try await b.sync.refreshStatus().keyEpoch == 1)
        let snapshot = try await a.sync.uploadSnapshot()

        // X's real key material: its private key and every epoch key it holds.
        let xKeys = await x.sync.keys
        let xIdentity = x.sync.identity
        #expect(xKeys.byEpoch.keys.sorted() == [0])
        let feed = try await transports[2].pull(space: space, after: before, limit: 1_000)
        #expect(feed.count >= 2)
        let bKeys = await b.sync.keys
        for sealed in feed {
            #expect(SpaceKeys.epoch(of: Array(sealed.payload)) == 1)
            #expect(throws: SyncError.self) { try Sealing.open(sealed, keys: xKeys, space: space) }
            // The remaining devices' keys open it.
            #expect(try Sealing.opens(sealed, keys: bKeys, space: space))
        }
        var parts: [Data] = []
        for part in 0..<snapshot.parts {
            parts.append(
                try #require(try await transports[2].snapshotPart(part, of: snapshot, space: space))
            )
        }
        #expect(throws: (any Error).self) {
            try Snapshot.open(parts, descriptor: snapshot, keys: xKeys, space: space)
        }
        // No wrapped key of epoch 1 opens with X's private key, with the key X held before.
        let records = try await transports[2].devices(space: space)
        #expect(records.first { $0.device == x.sync.device }?.removedIn == 1)
        for record in records {
            for wrapped in try await transports[2].wrappedKeys(for: record.device, space: space)
            where wrapped.epoch == 1 {
                #expect(wrapped.device != x.sync.device)
                for wrapper in records {
                    #expect(
                        try KeyWrap.unwrap(
                            wrapped, bound: key.bytes, space: space, identity: xIdentity,
                            wrapperKey: Array(wrapper.publicKey)) == nil)
                }
            }
        }

        // X is refused with a clear error and sends nothing; the server refuses it too.
        try await x.notes.insert([Notes.note("from-x", title: "Late", body: "after removal")])
        let last = try await transports[0].lastSequence(space: space)
        await #expect(throws: SyncError.removedFromSpace(space: space, device: x.sync.device)) {
            try await x.sync.push()
        }
        await #expect(throws: SyncError.removedFromSpace(space: space, device: x.sync.device)) {
            try await x.sync.pull()
        }
        await #expect(throws: PostgresError.self) {
            try await transports[2].push(
                [SealedChangeSet(device: x.sync.device, deviceSequence: 99, payload: Data([1]))],
                space: space)
        }
        // Nor can it write under another device id with a key it kept: the space's epoch is newer.
        let forged = try Sealing.seal(
            ChangeSet(schemaVersion: 0, collections: []), keys: xKeys, space: space,
            device: "forged", sequence: 1)
        let refusal = await #expect(throws: PostgresError.self) {
            try await transports[2].push([forged], space: space)
        }
        #expect(refusal?.sqlState == "TS009", "\(String(describing: refusal))")
        #expect(try await transports[0].lastSequence(space: space) == last)
        #expect(try await x.notes.fetch(id: "after-a") == nil)
        #expect(try await a.notes.fetch(id: "from-x") == nil)
    }

    @Test func aDeviceAddedByCodeSyncsWithoutThePassphraseAndReadsEveryEpoch() async throws {
        let directory = try TemporaryDirectory()
        let (space, key, transports) = try await space(devices: 3)
        defer { transports.forEach { $0.close() } }
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let x = try await Device.make(
            "x", in: directory, transport: transports[1], key: key, space: space)
        try await a.notes.insert([Notes.note("old", title: "Epoch zero", body: "first words")])
        for device in [a, x, a] {
            try await device.sync.push()
            try await device.sync.pull()
        }
        try await a.sync.removeDevice(x.sync.device)
        try await a.notes.insert([Notes.note("new", title: "Epoch one", body: "later words")])
        try await a.sync.push()

        // The new device: no passphrase, only its invitation and the code A shows.
        let phone = try Database(path: directory.path("phone.trove"))
        _ = try await phone.documents("notes", schema: Notes.schema())
        let invitation = try await SyncSpace.invitation(database: phone, space: space)
        let sync = try await SyncSpace(
            database: phone, space: space, key: nil, transport: transports[2],
            collections: ["notes"])
        #expect(sync.invitation == invitation)
        await #expect(throws: SyncError.awaitingMembership(space: space, device: sync.device)) {
            try await sync.pull()
        }
        #expect(throws: SyncError.self) {
            try KeyWrap.parseInvitation(String(invitation.dropLast(3)) + "AAA")
        }
        let code = try await a.sync.addDevice(invitation: invitation)
        await #expect(throws: SyncError.wrongConfirmationCode) {
            try await sync.acceptMembership(confirmationCode: "AAAAA-AAAAA")
        }
        #expect(try await SyncSpace.holdsSpaceKeys(phone) == false)
        try await sync.acceptMembership(confirmationCode: code.lowercased())
        #expect(try await SyncSpace.holdsSpaceKeys(phone))
        try await sync.pull()
        let notes = try await phone.documents(named: "notes")
        #expect(try await notes.fetch(id: "old")?["title"] == .string("Epoch zero"))
        #expect(try await notes.fetch(id: "new")?["title"] == .string("Epoch one"))

        // Another instance opens with the keys kept in the file; its writes reach A.
        let again = try await SyncSpace(
            database: phone, space: space, key: nil, transport: transports[2],
            collections: ["notes"])
        try await notes.insert([Notes.note("phone", title: "From the phone", body: "hello")])
        try await again.push()
        try await a.sync.pull()
        #expect(try await a.notes.fetch(id: "phone")?["title"] == .string("From the phone"))
        #expect(try await a.canonicalDump() == TroveSyncTests.canonicalDump(of: phone))
        #expect(await again.keyEpoch == 1)
    }

    @Test func changeSetsSealedBeforeARemovalAndNotYetSentAreSealedAgainUnderTheNewEpoch()
        async throws
    {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        let x = try await Device.make("x", in: directory, transport: server, key: key)
        for device in [a, b, x] {
            try await device.sync.push()
            try await device.sync.pull()
        }
        // B seals a change set under epoch 0, but the server is down: it stays in the outbox.
        try await b.notes.insert([Notes.note("offline", title: "Offline", body: "sealed early")])
        server.failure = SyncError.transport("down")
        await #expect(throws: SyncError.self) { try await b.sync.push() }
        server.failure = nil
        #expect(await b.sync.status.unacknowledgedChangeSets == 1)
        try await a.sync.removeDevice(x.sync.device)
        try await b.sync.push()
        let sent = try #require(try await server.pull(space: "space", after: 0, limit: 100).last)
        #expect(sent.device == b.sync.device)
        #expect(SpaceKeys.epoch(of: Array(sent.payload)) == 1)
        let xKeys = await x.sync.keys
        #expect(throws: SyncError.self) { try Sealing.open(sent, keys: xKeys, space: "space") }
        try await a.sync.pull()
        #expect(try await a.notes.fetch(id: "offline") != nil)
    }

    /// Found by the fault harness (RELIABILITY.md, "Sync under faults"): a device that last asked
    /// for the key epoch before a removal, and whose next change sets were pruned, must learn the
    /// new epoch to open the snapshot it starts again from; it refused the snapshot and pulled on
    /// past the pruned change sets, which it then never had.
    @Test func aDeviceThatMissedARemovalStartsAgainFromASnapshotSealedUnderTheNewEpoch()
        async throws
    {
        let directory = try TemporaryDirectory()
        let (space, key, transports) = try await space(devices: 3)
        defer { transports.forEach { $0.close() } }
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await Device.make(
            "b", in: directory, transport: transports[1], key: key, space: space)
        let x = try await Device.make(
            "x", in: directory, transport: transports[2], key: key, space: space)
        try await a.notes.insert([Notes.note("before", title: "Before", body: "written first")])
        try await a.sync.push()
        // B and X register (a push asks for the epoch) but report no cursor: they hold no
        // pruning back, as a device killed before the end of its first pull does not.
        try await b.sync.push()
        try await x.sync.push()
        #expect(try await a.sync.removeDevice(x.sync.device) == 1)
        try await a.notes.insert([Notes.note("after", title: "After", body: "under epoch 1")])
        try await a.sync.push()
        try await a.sync.pull()
        let snapshot = try await a.sync.uploadSnapshot()
        #expect(snapshot.upToSequence == 2)
        _ = try await transports[0].reportCursor(2, device: a.sync.device, space: space)
        #expect(try await transports[0].feedState(space: space, fullSize: false).prunedUpTo == 2)

        // B still holds epoch 0 alone; the feed below the snapshot is gone.
        #expect(await b.sync.keyEpoch == 0)
        try await b.sync.pull()
        #expect(await b.sync.keyEpoch == 1)
        #expect(try await b.sync.refreshStatus().refusedSnapshot == nil)
        #expect(try await b.notes.fetch(id: "before") != nil)
        #expect(try await b.notes.fetch(id: "after") != nil)
        #expect(try await a.canonicalDump() == b.canonicalDump())
    }

    @Test func anotherPersonsDevicesJoinUnderTheirOwnRoleAndCanBeRemoved() async throws {
        let directory = try TemporaryDirectory()
        let alice = try SyncServerFixture.newDevice(prefix: "alice")
        let bob = try SyncServerFixture.newDevice(prefix: "bob")
        let aliceTransport = try PostgresTransport(url: alice.url)
        let bobTransport = try PostgresTransport(url: bob.url)
        defer { [aliceTransport, bobTransport].forEach { $0.close() } }
        let space = SyncServerFixture.newSpaceName()
        try await aliceTransport.createSpace(space)
        let laptop = try await Device.make(
            "laptop", in: directory, transport: aliceTransport, key: try SyncKey.random(),
            space: space)
        try await laptop.notes.insert([Notes.note("shared", title: "Trip", body: "ferry at nine")])
        try await laptop.sync.push()

        // Alice lets Bob's role in; Bob's device joins by invitation and code, with no key.
        try await aliceTransport.addMember(bob.role, toSpace: space)
        let bobDatabase = try Database(path: directory.path("bob.trove"))
        _ = try await bobDatabase.documents("notes", schema: Notes.schema())
        let bobSync = try await SyncSpace(
            database: bobDatabase, space: space, key: nil, transport: bobTransport,
            collections: ["notes"])
        let code = try await laptop.sync.addDevice(invitation: bobSync.invitation)
        try await bobSync.acceptMembership(confirmationCode: code)
        try await bobSync.pull()
        let bobNotes = try await bobDatabase.documents(named: "notes")
        #expect(try await bobNotes.fetch(id: "shared")?["title"] == .string("Trip"))
        try await bobNotes.insert([Notes.note("reply", title: "Reply", body: "I will be there")])
        try await bobSync.push()
        try await laptop.sync.pull()
        #expect(try await laptop.notes.fetch(id: "reply") != nil)
        let roles = try await laptop.sync.devices().map(\.role)
        #expect(Set(roles) == [alice.role, bob.role])

        // Alice removes Bob's device: it is refused, and reads nothing Alice writes after.
        try await laptop.sync.removeDevice(bobSync.device)
        try await laptop.notes.insert([Notes.note("later", title: "Later", body: "new plan")])
        try await laptop.sync.push()
        await #expect(throws: SyncError.removedFromSpace(space: space, device: bobSync.device)) {
            try await bobSync.pull()
        }
        #expect(try await bobNotes.fetch(id: "later") == nil)
    }

    @Test func aServerWhoseSchemaPredatesDevicesStillSyncsUnderTheFirstKey() async throws {
        let server = try SyncServerFixture.server()
        let database = "predates_\(SyncServerFixture.uniqueSuffix())"
        try server.psql("CREATE DATABASE \(database)", database: "postgres")
        func onDatabase(_ url: String) -> String {
            guard let range = url.range(of: "/\(server.database)", options: .backwards) else {
                return url
            }
            return url.replacingCharacters(in: range, with: "/\(database)")
        }
        try await PostgresTransport.installServerSchema(url: onDatabase(server.adminURL))
        // The functions a version 3 server lacks.
        try server.psql(
            "DROP FUNCTION trove_sync.key_epoch(text); DROP FUNCTION trove_sync.devices(text); "
                + "DROP FUNCTION trove_sync.start_epoch(text, bigint, text[], text[], text[], bytea[])",
            database: database)
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<2).map { _ in try PostgresTransport(url: onDatabase(role.url)) }
        defer { transports.forEach { $0.close() } }
        let space = SyncServerFixture.newSpaceName()
        try await transports[0].createSpace(space)
        let directory = try TemporaryDirectory()
        let key = try SyncKey.random()
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await Device.make(
            "b", in: directory, transport: transports[1], key: key, space: space)
        try await a.notes.insert([Notes.note("n", title: "Still syncing", body: "first key")])
        try await a.sync.push()
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "n")?["title"] == .string("Still syncing"))
        let refusal = await #expect(throws: SyncError.self) {
            try await a.sync.removeDevice(b.sync.device)
        }
        #expect(refusal?.description.contains("setup-server") == true)
    }
}
