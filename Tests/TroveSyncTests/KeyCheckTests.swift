import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveSync

/// The space's key check through the real PostgreSQL server: a device proves it holds the
/// space's key before it sends or applies anything, and a change set nobody can open is
/// quarantined instead of blocking the space.
@Suite struct KeyCheckTests {
    /// A role, a new space created by it, and one transport per device.
    private func space(devices: Int) async throws -> (
        space: String, transports: [PostgresTransport]
    ) {
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<devices).map { _ in try PostgresTransport(url: role.url) }
        let space = SyncServerFixture.newSpaceName()
        try await transports[0].createSpace(space)
        return (space, transports)
    }

    @Test func aWrongPassphraseIsRefusedBeforeAnythingIsSentAndTheSpaceStaysUsable() async throws {
        let directory = try TemporaryDirectory()
        let (space, transports) = try await space(devices: 4)
        defer { transports.forEach { $0.close() } }
        let key = try SyncKey(passphrase: "correct horse battery staple", space: space)
        let typo = try SyncKey(passphrase: "correct horse battery stapel", space: space)
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        try await a.notes.insert([
            Notes.note("a1", title: "from a", body: "the ferry leaves at seven")
        ])
        #expect(try await a.sync.push() == 1)
        #expect(try await transports[0].keyCheck(space: space) != nil)

        let wrongDatabase = try Database(path: directory.path("w.trove"))
        let w = try await Device.make(
            "w", database: wrongDatabase, transport: transports[1], key: typo, space: space)
        try await w.notes.insert([Notes.note("w1", title: "typed on w")])
        await #expect(throws: SyncError.wrongKey(space: space)) { try await w.sync.push() }
        await #expect(throws: SyncError.wrongKey(space: space)) { try await w.sync.pull() }
        // Nothing reached the server, nothing was applied or quarantined, the change still waits.
        #expect(try await transports[1].lastSequence(space: space) == 1)
        let refused = await w.sync.status
        #expect(refused.lastError == .wrongKey(space: space))
        #expect(refused.pendingChanges == 1 && refused.unacknowledgedChangeSets == 0)
        #expect(refused.lastPulledSequence == 0 && refused.quarantined.isEmpty)
        #expect(try await w.notes.count() == 1)

        // Every other device, a new one too, syncs as before.
        let b = try await Device.make(
            "b", in: directory, transport: transports[2], key: key, space: space)
        #expect(try await b.sync.pull() == 1)
        #expect(await b.sync.status.quarantined.isEmpty)

        // W with the right passphrase sends what was written meanwhile.
        let fixed = try await SyncSpace(
            database: wrongDatabase, space: space, key: key, transport: transports[3],
            collections: ["notes"])
        #expect(try await fixed.push() == 1)
        #expect(try await fixed.pull() == 1)
        #expect(await fixed.status.lastError == nil)
        try await b.sync.pull()
        try await a.sync.pull()
        #expect(try await b.notes.fetch(id: "w1")?["title"] == "typed on w")
        #expect(try await a.canonicalDump() == b.canonicalDump())
        #expect(try await a.canonicalDump() == (try await canonicalDump(of: wrongDatabase)))
    }

    /// Issue #41: a device with a mistyped passphrase, on a version without key checks, pushed a
    /// change set sealed with its key after pulling failed; from then on every device's pull
    /// stopped at it ("does not open ... nothing applied"), new devices too.
    @Test func aSpaceAWrongKeyBrokeBeforeKeyChecksSyncsAgain() async throws {
        let directory = try TemporaryDirectory()
        let (space, transports) = try await space(devices: 5)
        defer { transports.forEach { $0.close() } }
        let key = try SyncKey(passphrase: "correct horse battery staple", space: space)
        let typo = try SyncKey(passphrase: "correct horse battery stapel", space: space)
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        try await a.notes.insert([Notes.note("a1", title: "from a")])
        try await a.sync.push()

        // What the old version left behind: after A's change set, one of W sealed with its wrong
        // key (the very bytes a SyncSpace seals, carried over from a server of its own), and no
        // key check on the space.
        let old = InProcessTransport()
        let wrongDatabase = try Database(path: directory.path("w.trove"))
        let w = try await Device.make(
            "w", database: wrongDatabase, transport: old, key: typo, space: space)
        try await w.notes.insert([Notes.note("w1", title: "typed on w")])
        try await w.sync.push()
        #expect(try await transports[1].push(old.feed(space: space), space: space) == [2])
        try await transports[0].resetKeyCheck(space: space)

        // A new device with the right key: its key opens the space's first change set, so it
        // sets the key check; A's note arrives and W's change set is quarantined, not a wall.
        let b = try await Device.make(
            "b", in: directory, transport: transports[2], key: key, space: space)
        #expect(try await b.sync.pull() == 1)
        let quarantined = await b.sync.status.quarantined
        #expect(
            quarantined == [
                QuarantinedChangeSet(
                    serverSequence: 2, device: w.sync.device, deviceSequence: 1, reason: .cannotOpen
                )
            ])
        #expect(try await b.notes.fetch(id: "a1") != nil)
        #expect(try await transports[2].keyCheck(space: space) != nil)
        try await a.notes.insert([Notes.note("a2", title: "after it")])
        try await a.sync.push()
        #expect(try await b.sync.pull() == 1)
        #expect(try await a.sync.pull() == 0)
        #expect(await a.sync.status.quarantined.count == 1)

        // W, still with its typo, is refused now; with the right key it finds its own unreadable
        // change set in the feed and sends its values again.
        let still = try await SyncSpace(
            database: wrongDatabase, space: space, key: typo, transport: transports[3],
            collections: ["notes"])
        await #expect(throws: SyncError.wrongKey(space: space)) { try await still.push() }
        #expect(try await transports[3].lastSequence(space: space) == 3)
        let fixed = try await SyncSpace(
            database: wrongDatabase, space: space, key: key, transport: transports[3],
            collections: ["notes"])
        #expect(try await fixed.pull() == 2)
        #expect(try await fixed.push() == 1)
        try await b.sync.pull()
        #expect(try await b.notes.fetch(id: "w1")?["title"] == "typed on w")
        #expect(try await b.canonicalDump() == (try await canonicalDump(of: wrongDatabase)))

        // Only the owner may delete it from the feed; afterwards a new device never meets it.
        let member = try SyncServerFixture.newDevice()
        try await transports[0].addMember(member.role, toSpace: space)
        let memberTransport = try PostgresTransport(url: member.url)
        defer { memberTransport.close() }
        do {
            try await memberTransport.deleteChangeSet(
                device: w.sync.device, deviceSequence: 1, space: space)
            Issue.record("a member who is not the owner deleted a change set")
        } catch PostgresError.notSpaceOwner {}
        #expect(
            try await transports[0].deleteChangeSet(
                device: w.sync.device, deviceSequence: 1, space: space))
        #expect(
            try await transports[0].deleteChangeSet(
                device: w.sync.device, deviceSequence: 1, space: space) == false)
        let c = try await Device.make(
            "c", in: directory, transport: transports[4], key: key, space: space)
        #expect(try await c.sync.pull() == 3)
        #expect(await c.sync.status.quarantined.isEmpty)
        #expect(try await c.canonicalDump() == b.canonicalDump())
        try await b.sync.forgetQuarantined(quarantined[0])
        #expect(await b.sync.status.quarantined.isEmpty)
    }

    /// What `body` returned or threw.
    private func outcome(_ body: @Sendable () async throws -> Int) async -> Result<Int, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    @Test func twoDevicesWithDifferentKeysRacingOnANewSpaceLeaveOnlyTheWinnersChangeSets()
        async throws
    {
        let directory = try TemporaryDirectory()
        let (space, transports) = try await space(devices: 2)
        defer { transports.forEach { $0.close() } }
        let keys = [try SyncKey.random(), try SyncKey.random()]
        var devices: [Device] = []
        for index in 0..<2 {
            let device = try await Device.make(
                "d\(index)", in: directory, transport: transports[index], key: keys[index],
                space: space)
            try await device.notes.insert([Notes.note("n\(index)", title: "from device \(index)")])
            devices.append(device)
        }
        let (a, b) = (devices[0], devices[1])
        async let first = outcome { try await a.sync.push() }
        async let second = outcome { try await b.sync.push() }
        let results = await [first, second]
        let winners = results.indices.filter { (try? results[$0].get()) == 1 }
        let losers = results.indices.filter {
            if case .failure(let error) = results[$0] {
                return error as? SyncError == .wrongKey(space: space)
            }
            return false
        }
        #expect(winners.count == 1 && losers.count == 1, "\(results)")
        let winner = try #require(winners.first)
        let feed = try await transports[0].pull(space: space, after: 0, limit: 10)
        #expect(feed.map(\.device) == [devices[winner].sync.device])
        #expect(
            try KeyCheck.opens(
                try #require(try await transports[0].keyCheck(space: space)), key: keys[winner],
                space: space))
    }

    @Test func aKeyCheckOnceSetIsKeptAndOnlyItsOwnerResetsIt() async throws {
        let server = try SyncServerFixture.server()
        let (space, transports) = try await space(devices: 1)
        defer { transports.forEach { $0.close() } }
        let key = try SyncKey.random()
        let first = try KeyCheck.seal(key: key, space: space)
        #expect(try await transports[0].setKeyCheck(first, space: space) == first)
        let other = try KeyCheck.seal(key: try SyncKey.random(), space: space)
        #expect(try await transports[0].setKeyCheck(other, space: space) == first)
        #expect(try KeyCheck.opens(first, key: key, space: space))
        #expect(try KeyCheck.opens(first, key: key, space: space + "-elsewhere") == false)

        // A member that is not the owner cannot replace it, even with SQL of its own.
        let member = try SyncServerFixture.newDevice()
        try await transports[0].addMember(member.role, toSpace: space)
        let state = try? server.psql(
            "UPDATE trove_sync.spaces SET key_check = '\\x00' WHERE name = '\(space)'",
            user: member.role,
            password: member.password, sqlStateOnly: true)
        #expect(state == nil)
        let memberTransport = try PostgresTransport(url: member.url)
        defer { memberTransport.close() }
        #expect(try await memberTransport.keyCheck(space: space) == first)
        do {
            try await memberTransport.resetKeyCheck(space: space)
            Issue.record("a member who is not the owner reset the key check")
        } catch PostgresError.notSpaceOwner {}
        try await transports[0].resetKeyCheck(space: space)
        #expect(try await memberTransport.keyCheck(space: space) == nil)
    }
}
