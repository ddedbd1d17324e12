import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@testable import TroveSync

/// Change sets that open with the space's key but do not decode (a later version's format, or
/// bytes sealed wrongly): quarantined like those that do not open, and tried again before every
/// pull.
@Suite struct QuarantineTests {
    /// `plaintext` sealed with `key` as device `device`'s change set `sequence` of "space".
    func sealed(_ plaintext: [UInt8], key: SyncKey, device: String, sequence: Int64) throws
        -> SealedChangeSet
    {
        let payload = try AuthenticatedEncryption.seal(
            plaintext, key: key.bytes,
            associatedData: Sealing.associatedData(
                space: "space", device: device, sequence: sequence))
        return SealedChangeSet(device: device, deviceSequence: sequence, payload: Data(payload))
    }

    @Test func aChangeSetThatOpensButDoesNotDecodeIsQuarantinedAndTriedAgainBeforeEachPull()
        async throws
    {
        let directory = try TemporaryDirectory()
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", in: directory, transport: server, key: key)
        let b = try await Device.make("b", in: directory, transport: server, key: key)
        try await a.notes.insert([Notes.note("n1", title: "before")])
        try await a.sync.push()
        let later = "0123456789abcdef0123456789abcdef"
        _ = try await server.push(
            [try sealed(Array("TSC9 a later format".utf8), key: key, device: later, sequence: 1)],
            space: "space")
        try await a.notes.insert([Notes.note("n2", title: "after")])
        try await a.sync.push()

        #expect(try await b.sync.pull() == 2)
        let status = await b.sync.status
        #expect(status.lastError == nil)
        let quarantined = try #require(status.quarantined.first)
        #expect(status.quarantined.count == 1)
        #expect(
            quarantined.serverSequence == 2 && quarantined.device == later
                && quarantined.deviceSequence == 1)
        guard case .malformed = quarantined.reason else {
            Issue.record("a change set that opened is quarantined as \(quarantined.reason)")
            return
        }
        // Still unreadable: it stays, and pulls go on.
        #expect(try await b.sync.pull() == 0)
        #expect(await b.sync.status.quarantined.count == 1)

        // What a later version would read in the same bytes: here, a valid change set put in
        // their place in the quarantine. The next pull applies it and lets it go.
        let readable = ChangeSet(
            schemaVersion: 0,
            collections: [
                ChangeSet.Collection(
                    name: "notes", manifests: [:],
                    records: [
                        ChangeSet.Record(
                            id: .text("late"), cl: 1,
                            fields: [
                                ChangeSet.FieldChange(
                                    name: "title", cl: 1, hlc: 1 << 50,
                                    value: .text("read at last"), baseHLC: nil,
                                    baseDevice: nil)
                            ])
                    ])
            ])
        let resealed = try Sealing.seal(
            readable, key: key, space: "space", device: later, sequence: 1)
        try await b.database.syncWrite { connection in
            try connection.execute(
                "UPDATE \(SyncTables.quarantine) SET payload = ? WHERE server_sequence = 2",
                [.blob(Array(resealed.payload))])
        }
        #expect(try await b.sync.pull() == 1)
        #expect(try await b.notes.fetch(id: "late")?["title"] == "read at last")
        #expect(await b.sync.status.quarantined.isEmpty)
    }
}
