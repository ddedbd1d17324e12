import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@testable import TroveSync

/// Gaps in a writer's sequence numbers: noticed, named in the status, and no "in sync" past them.
@Suite struct WithheldChangeSetTests {
    @Test func aWithheldChangeSetIsReportedUntilItArrives() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let b = try await Device.make("b", database: Database(), transport: server, key: key)
        for i in 1...3 {
            try await a.notes.insert([Notes.note("n\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        // The server withholds a's second change set.
        let withheld = try #require(server.feed(space: "space").first { $0.deviceSequence == 2 })
        server.deleteChangeSet(device: withheld.device, deviceSequence: 2, space: "space")
        try await b.sync.pull()
        let status = await b.sync.status
        #expect(!status.isInSync)
        let missing = try #require(status.missing.first)
        #expect(status.missing.count == 1)
        #expect(
            missing.device == a.sync.device && missing.firstMissing == 2 && missing.lastMissing == 2
                && missing.highestReceived == 3)
        // Pulling again does not make it go away.
        try await b.sync.pull()
        #expect(await b.sync.status.missing.count == 1)
        // It arrives (the server hands it over late): the gap closes.
        _ = try await server.push([withheld], space: "space")
        try await b.sync.pull()
        #expect(await b.sync.status.missing.isEmpty)
        #expect(await b.sync.status.isInSync)
    }

    @Test func aQuarantinedChangeSetCountsAsReceived() async throws {
        let server = InProcessTransport()
        let key = try SyncKey.random()
        let a = try await Device.make("a", database: Database(), transport: server, key: key)
        let b = try await Device.make("b", database: Database(), transport: server, key: key)
        for i in 1...3 {
            try await a.notes.insert([Notes.note("n\(i)", title: "note \(i)")])
            try await a.sync.push()
        }
        server.replacePayload(at: 2, space: "space", with: Data(repeating: 1, count: 40))
        try await b.sync.pull()
        let status = await b.sync.status
        #expect(status.quarantined.count == 1)
        #expect(status.missing.isEmpty)
        #expect(status.isInSync)
    }

    /// A pull's byte budget: change sets within it come together, one over it comes alone.
    @Test func pullsCarryAByteBudget() async throws {
        let server = InProcessTransport()
        let sets = [10, 10, 100, 10].enumerated().map { index, size in
            SealedChangeSet(
                device: "d", deviceSequence: Int64(index + 1),
                payload: Data(repeating: 0, count: size))
        }
        _ = try await server.push(sets, space: "s")
        #expect(
            try await server.pull(space: "s", after: 0, limit: 10, maxBytes: 25).map(
                \.deviceSequence) == [1, 2])
        #expect(
            try await server.pull(space: "s", after: 2, limit: 10, maxBytes: 25).map(
                \.deviceSequence) == [3])
        #expect(
            try await server.pull(space: "s", after: 3, limit: 10, maxBytes: 25).map(
                \.deviceSequence) == [4])
        #expect(
            try await server.pull(space: "s", after: 0, limit: 2, maxBytes: 1_000).map(
                \.deviceSequence) == [1, 2])
    }
}
