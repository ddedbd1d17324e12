import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

@Suite struct SealingTests {
    @Test func aWrongKeyIsRefusedWithNothingApplied() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let a = try await Device.make("a", in: directory, transport: server, key: try SyncKey.random())
        let b = try await Device.make("b", in: directory, transport: server, key: try SyncKey.random())
        try await a.notes.insert([Notes.note("n1", title: "secret")])
        try await a.sync.push()
        await #expect(throws: SyncError.cannotOpen(device: a.sync.device, deviceSequence: 1)) { try await b.sync.pull() }
        #expect(try await b.notes.count() == 0)
        let status = await b.sync.status
        #expect(status.lastPulledSequence == 0)
        #expect(status.lastError == .cannotOpen(device: a.sync.device, deviceSequence: 1))
    }

    @Test func aFlippedPayloadByteIsRefusedWithNothingApplied() async throws {
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
        await #expect(throws: SyncError.cannotOpen(device: a.sync.device, deviceSequence: 1)) { try await b.sync.pull() }
        #expect(try await b.notes.count() == 0)
        #expect(await b.sync.status.lastPulledSequence == 0)
    }

    @Test func theServerSeesNoClearText() async throws {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let a = try await Device.make("a", in: directory, transport: server, key: try SyncKey.random())
        try await a.notes.insert([Notes.note("n1", title: "SENTINEL-7f3a", body: "SENTINEL-7f3a body")])
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
