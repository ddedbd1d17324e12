import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

@Suite struct SealingTests {
    @Test func aWrongKeyIsRefusedWithNothingSentOrApplied() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let a = try await Device.make(
            "a", in: directory, transport: server, key: try SyncKey.random())
        let b = try await Device.make(
            "b", in: directory, transport: server, key: try SyncKey.random())
        try await a.notes.insert([Notes.note("n1", title: "secret")])
        try await a.sync.push()
        try await b.notes.insert([Notes.note("n2", title: "unsent")])
        await #expect(throws: SyncError.wrongKey(space: "space")) { try await b.sync.pull() }
        await #expect(throws: SyncError.wrongKey(space: "space")) { try await b.sync.push() }
        #expect(try await b.notes.count() == 1)
        #expect(server.feed(space: "space").count == 1)
        let status = await b.sync.status
        #expect(
            status.lastPulledSequence == 0 && status.quarantined.isEmpty
                && status.pendingChanges == 1)
        #expect(status.lastError == .wrongKey(space: "space"))
    }

    @Test func aFlippedPayloadByteIsQuarantinedAndTheChangeSetsAfterItAreApplied() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "one")])
        try await a.sync.push()
        try await a.notes.insert([Notes.note("n2", title: "two")])
        try await a.sync.push()
        var payload = try #require(server.feed(space: "space").first?.payload)
        payload[payload.count / 2] ^= 0x01
        server.replacePayload(at: 1, space: "space", with: payload)
        #expect(try await b.sync.pull() == 1)
        #expect(try await b.notes.fetch(id: "n1") == nil)
        #expect(try await b.notes.fetch(id: "n2")?["title"] == "two")
        let status = await b.sync.status
        #expect(status.lastPulledSequence == 2 && status.lastError == nil)
        #expect(
            status.quarantined == [
                QuarantinedChangeSet(
                    serverSequence: 1, device: a.sync.device, deviceSequence: 1, reason: .cannotOpen
                )
            ])
        // Skipped for good: pulling again neither applies it nor fails on it; deleted from the
        // feed and forgotten, it is gone from the status.
        #expect(try await b.sync.pull() == 0)
        #expect(server.deleteChangeSet(device: a.sync.device, deviceSequence: 1, space: "space"))
        try await b.sync.forgetQuarantined(status.quarantined[0])
        #expect(await b.sync.status.quarantined.isEmpty)
        let c = try await Device.make("c", in: directory, transport: server, key: key)
        #expect(try await c.sync.pull() == 1)
        #expect(await c.sync.status.quarantined.isEmpty)
    }

    @Test func theServerSeesNoClearText() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let a = try await Device.make(
            "a", in: directory, transport: server, key: try SyncKey.random())
        try await a.notes.insert([
            Notes.note("n1", title: "SENTINEL-7f3a", body: "SENTINEL-7f3a body")
        ])
        try await a.sync.push()
        for set in server.feed(space: "space") {
            #expect(set.payload.range(of: Data("SENTINEL-7f3a".utf8)) == nil)
            #expect(set.payload.range(of: Data("notes".utf8)) == nil)
        }
    }

    @Test func aKeyFromAPassphraseIsTheSameOnEveryDeviceAndExportsRoundTrip() throws {
        let one = try SyncKey(passphrase: "correct horse", space: "notes")
        let two = try SyncKey(passphrase: "correct horse", space: "notes")
        let other = try SyncKey(passphrase: "correct horse", space: "photos")
        #expect(one == two)
        #expect(one != other)
        #expect(try SyncKey(exported: one.exported) == one)
        #expect(!one.description.contains(one.exported))
        var damaged = Array(one.exported)
        damaged[20] = damaged[20] == "A" ? "B" : "A"
        #expect(throws: SyncError.self) { try SyncKey(exported: String(damaged)) }
        #expect(throws: SyncError.self) { try SyncKey(passphrase: "", space: "notes") }
    }
}
