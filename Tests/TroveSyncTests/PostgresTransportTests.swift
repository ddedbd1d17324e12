import Foundation
import Testing
import TroveTestSupport

@testable import TroveSync

@Suite struct PostgresTransportTests {
    /// A device role with a space of its own and a transport on it.
    private func openSpace() async throws -> (SyncServerFixture.Device, String, PostgresTransport) {
        let device = try SyncServerFixture.newDevice()
        let space = SyncServerFixture.newSpaceName()
        let transport = try PostgresTransport(url: device.url)
        #expect(try await transport.createSpace(space))
        return (device, space, transport)
    }

    private func randomPayload(_ rng: inout SeededGenerator, size: Int) -> Data {
        Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &rng) })
    }

    @Test func pushThenPullReturnsEveryChangeSetInOrderWithItsBytes() async throws {
        let (_, space, transport) = try await openSpace()
        defer { transport.close() }
        var rng = SeededGenerator(seed: 26)
        var pushed: [SealedChangeSet] = []
        for batch in 0..<5 {
            let device = batch % 2 == 0 ? "laptop" : "phone"
            let start = Int64(pushed.filter { $0.device == device }.count) + 1
            let sets = (0..<(batch + 1) * 3).map { i in
                SealedChangeSet(
                    device: device, deviceSequence: start + Int64(i),
                    payload: randomPayload(&rng, size: Int.random(in: 0...700, using: &rng)))
            }
            let sequences = try await transport.push(sets, space: space)
            let expectedStart = Int64(pushed.count) + 1
            #expect(sequences == Array(expectedStart..<expectedStart + Int64(sets.count)))
            for (set, sequence) in zip(sets, sequences) {
                var stored = set
                stored.serverSequence = sequence
                pushed.append(stored)
            }
        }
        #expect(try await transport.pull(space: space, after: 0, limit: 10_000) == pushed)
        // Paging: after a cursor, at most `limit`, ascending.
        var paged: [SealedChangeSet] = []
        var cursor: Int64 = 0
        while true {
            let page = try await transport.pull(space: space, after: cursor, limit: 7)
            #expect(page.count <= 7)
            guard let last = page.last?.serverSequence else { break }
            paged += page
            cursor = last
        }
        #expect(paged == pushed)
        #expect(try await transport.lastSequence(space: space) == Int64(pushed.count))
        #expect(
            try await transport.pull(space: space, after: Int64(pushed.count), limit: 10).isEmpty)
        #expect(try await transport.pull(space: space, after: 0, limit: 0).isEmpty)
        #expect(try await transport.push([], space: space).isEmpty)
    }

    @Test func theServerStoresThePayloadBytesVerbatim() async throws {
        let server = try SyncServerFixture.server()
        let (_, space, transport) = try await openSpace()
        defer { transport.close() }
        var rng = SeededGenerator(seed: 7)
        let payloads = (0..<20).map { _ in randomPayload(&rng, size: 300) }
        _ = try await transport.push(
            payloads.enumerated().map {
                SealedChangeSet(device: "d", deviceSequence: Int64($0 + 1), payload: $1)
            },
            space: space)
        // Spaces before changes, the order in which push, pull and a re-install of the schema
        // (run by other tests on this server at the same time) lock them: PostgreSQL locks a
        // query's tables in the order it names them, and the other order deadlocks.
        let stored = try server.psql(
            "SELECT encode(c.payload, 'hex') || ':' || c.size FROM trove_sync.spaces s "
                + "JOIN trove_sync.changes c ON s.id = c.space_id WHERE s.name = '\(space)' ORDER BY c.server_sequence"
        )
        let expected = payloads.map {
            $0.map { String(format: "%02x", $0) }.joined() + ":\($0.count)"
        }
        #expect(stored.split(separator: "\n").map(String.init) == expected)
    }

    @Test func aRetriedPushAfterALostAcknowledgementStoresNothingTwice() async throws {
        let server = try SyncServerFixture.server()
        let (device, space, transport) = try await openSpace()
        defer { transport.close() }
        let first = (1...4).map {
            SealedChangeSet(device: "laptop", deviceSequence: Int64($0), payload: Data([UInt8($0)]))
        }
        let acknowledged = try await transport.push(first, space: space)
        #expect(acknowledged == [1, 2, 3, 4])

        // The acknowledgement was lost: the device (another process, a new connection) sends the
        // same change sets again, with two new ones after them and one repeated inside the batch.
        let retry = try PostgresTransport(url: device.url)
        defer { retry.close() }
        let again =
            first + [
                SealedChangeSet(device: "laptop", deviceSequence: 5, payload: Data([5])),
                SealedChangeSet(device: "laptop", deviceSequence: 5, payload: Data([5])),
                SealedChangeSet(device: "laptop", deviceSequence: 6, payload: Data([6])),
            ]
        #expect(try await retry.push(again, space: space) == [1, 2, 3, 4, 5, 5, 6])
        let count = try server.psql(
            "SELECT count(*) FROM trove_sync.spaces s JOIN trove_sync.changes c ON s.id = c.space_id "
                + "WHERE s.name = '\(space)'")
        #expect(count.trimmingCharacters(in: .whitespacesAndNewlines) == "6")
        #expect(try await transport.lastSequence(space: space) == 6)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func batchesMixingStoredNewAndRepeatedChangeSetsGetTheSequencesOfAModel(seed: UInt64)
        async throws
    {
        // The model: a change set keeps the sequence it was first stored under; new ones are
        // numbered in the order of their first occurrence in the batch.
        var rng = SeededGenerator(seed: seed)
        let (_, space, transport) = try await openSpace()
        defer { transport.close() }
        var stored: [String: Int64] = [:]
        var payloads: [String: Data] = [:]
        for _ in 0..<12 {
            let batch = (0..<Int.random(in: 1...40, using: &rng)).map { _ in
                SealedChangeSet(
                    device: ["laptop", "phone", "desk"][Int.random(in: 0..<3, using: &rng)],
                    deviceSequence: Int64.random(in: 1...30, using: &rng),
                    payload: randomPayload(&rng, size: Int.random(in: 1...64, using: &rng)))
            }
            var expected: [Int64] = []
            for set in batch {
                let key = "\(set.device)/\(set.deviceSequence)"
                if stored[key] == nil {
                    stored[key] = Int64(stored.count + 1)
                    payloads[key] = set.payload
                }
                expected.append(stored[key]!)
            }
            #expect(try await transport.push(batch, space: space) == expected)
        }
        // The feed holds each change set once, gapless, with the payload it was first sent with.
        let feed = try await transport.pull(space: space, after: 0, limit: 10_000)
        #expect(feed.map(\.serverSequence) == (1...Int64(stored.count)).map { Optional($0) })
        for set in feed {
            let key = "\(set.device)/\(set.deviceSequence)"
            #expect(stored[key] == set.serverSequence && payloads[key] == set.payload)
        }
        #expect(try await transport.lastSequence(space: space) == Int64(stored.count))
    }

    /// A pull is planned a few times per connection, then run from one plan (PostgreSQL's
    /// generic plan): a pull planned again each time spent a fifth of the server's time on it.
    /// The feed is as a device meets it (20,000 change sets of 512 bytes, analysed) and the
    /// pulls read its first half, where a plan for the call's cursor and count looks cheaper
    /// than a generic plan with either bound: with the count bound, or the cursor compared
    /// directly, this test finds every pull planned again.
    @Test func pullsRunFromOnePlanPerConnection() async throws {
        let server = try SyncServerFixture.server()
        let (_, space, transport) = try await openSpace()
        defer { transport.close() }
        let total: Int64 = 20_000
        let payload = Data(repeating: 7, count: 512)
        for first in stride(from: Int64(1), through: total, by: 1_000) {
            _ = try await transport.push(
                (first..<(first + 1_000)).map {
                    SealedChangeSet(device: "d", deviceSequence: $0, payload: payload)
                },
                space: space)
        }
        _ = try server.psql("ANALYZE trove_sync.changes")
        for after in stride(from: Int64(1_000), to: 9_000, by: 400) {
            #expect(try await transport.pull(space: space, after: after, limit: 200).count == 200)
            #expect(
                try await transport.pull(space: space, after: after, limit: 200, maxBytes: 1 << 20)
                    .count == 200)
        }
        let plans = try await transport.session.run { connection in
            let result = try connection.execute(
                "SELECT generic_plans, custom_plans FROM pg_prepared_statements "
                    + "WHERE statement LIKE '%trove_sync.pull(%' ORDER BY statement")
            return try (0..<result.count).map {
                (
                    generic: try result.integer($0, 0, as: Int64.self),
                    custom: try result.integer($0, 1, as: Int64.self)
                )
            }
        }
        #expect(plans.count == 2)
        for plan in plans {
            #expect(plan.custom <= 5)
            #expect(plan.generic >= 15)
        }
    }

    @Test func aConnectionCutByTheServerIsReopenedForTheNextRequest() async throws {
        let server = try SyncServerFixture.server()
        let (device, space, transport) = try await openSpace()
        defer { transport.close() }
        _ = try await transport.push(
            [SealedChangeSet(device: "d", deviceSequence: 1, payload: Data([1]))], space: space)
        let killed = try server.psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = '\(device.role)'"
        )
        #expect(killed.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
        #expect(
            try await transport.push(
                [SealedChangeSet(device: "d", deviceSequence: 2, payload: Data([2]))], space: space)
                == [2])
    }

    @Test func concurrentPushersGetGaplessSequencesAndPullsNeverSeeAGap() async throws {
        let (device, space, transport) = try await openSpace()
        defer { transport.close() }
        let pushers = try (0..<4).map { _ in try PostgresTransport(url: device.url) }
        defer { pushers.forEach { $0.close() } }
        let batches = 15
        let perBatch = 5
        let total = pushers.count * batches * perBatch
        // Pulls while the pushes run: each must see a gapless prefix 1...k of the feed.
        let watcher = Task {
            var gaps = 0
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let sequences = try await transport.pull(space: space, after: 0, limit: 100_000)
                    .compactMap(
                        \.serverSequence)
                if sequences != (0..<sequences.count).map({ Int64($0 + 1) }) { gaps += 1 }
                if sequences.count >= total { break }
            }
            return gaps
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, pusher) in pushers.enumerated() {
                group.addTask {
                    for batch in 0..<batches {
                        let sets = (0..<perBatch).map { i in
                            SealedChangeSet(
                                device: "device-\(index)",
                                deviceSequence: Int64(batch * perBatch + i + 1),
                                payload: Data("\(index)/\(batch)/\(i)".utf8))
                        }
                        _ = try await pusher.push(sets, space: space)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await watcher.value == 0)
        let all = try await transport.pull(space: space, after: 0, limit: 100_000)
        #expect(all.compactMap(\.serverSequence) == Array(1...Int64(total)))
        for index in 0..<pushers.count {
            let own = all.filter { $0.device == "device-\(index)" }.map(\.deviceSequence)
            #expect(own == Array(1...Int64(batches * perBatch)))
        }
    }

    @Test func aPushWakesAWaitingDeviceAtOnce() async throws {
        let (device, space, transport) = try await openSpace()
        defer { transport.close() }
        let other = try PostgresTransport(url: device.url)
        defer { other.close() }
        let wakeups = Wakeups(other.notifications(space: space))
        // The first wake-up comes when the listener is ready (a device pulls then, to catch up).
        #expect(await wakeups.wait(forAtLeast: 1))
        // The transport never polls: a second wake-up can only be the push's NOTIFY. (How fast it
        // comes is measured by trove-bench, not here: a test run shares the cores with the suite.)
        _ = try await transport.push(
            [SealedChangeSet(device: "a", deviceSequence: 1, payload: Data([1]))], space: space)
        #expect(await wakeups.wait(forAtLeast: 2, seconds: 120))
        other.close()
        #expect(await waitUntil(seconds: 60) { wakeups.isFinished })
    }

    @Test func typedErrorsForUnknownSpacesTakenNamesOwnersAndRoles() async throws {
        let (_, space, transport) = try await openSpace()
        defer { transport.close() }
        let stranger = try SyncServerFixture.newDevice()
        let strangerTransport = try PostgresTransport(url: stranger.url)
        defer { strangerTransport.close() }
        #expect(try await transport.createSpace(space) == false)
        await #expect { try await strangerTransport.createSpace(space) } throws: { error in
            if case PostgresError.spaceNameTaken = error { return true } else { return false }
        }
        await #expect {
            try await strangerTransport.pull(space: "no-such-space", after: 0, limit: 1)
        } throws: {
            error in
            if case PostgresError.noSuchSpace = error { return true } else { return false }
        }
        await #expect {
            try await strangerTransport.addMember(stranger.role, toSpace: space)
        } throws: { error in
            if case PostgresError.notSpaceOwner = error { return true } else { return false }
        }
        await #expect {
            try await transport.addMember(
                "no_such_role_\(SyncServerFixture.uniqueSuffix())", toSpace: space)
        } throws: { error in
            if case PostgresError.noSuchRole = error { return true } else { return false }
        }
        // A bad change set (sequence 0) is refused by the server with nothing stored.
        await #expect {
            try await transport.push(
                [
                    SealedChangeSet(device: "d", deviceSequence: 1, payload: Data()),
                    SealedChangeSet(device: "d", deviceSequence: 0, payload: Data()),
                ], space: space)
        } throws: { error in
            (error as? PostgresError)?.sqlState == "23514"
        }
        #expect(try await transport.lastSequence(space: space) == 0)
    }

    @Test func rolesAuthenticateWithSCRAMAndAWrongPasswordIsRefused() async throws {
        let server = try SyncServerFixture.server()
        let device = try SyncServerFixture.newDevice()
        let stored = try server.psql(
            "SELECT left(rolpassword, 14) FROM pg_authid WHERE rolname = '\(device.role)'")
        #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "SCRAM-SHA-256$")
        let hba = try server.psql(
            "SELECT string_agg(DISTINCT auth_method, ',') FROM pg_hba_file_rules")
        #expect(hba.trimmingCharacters(in: .whitespacesAndNewlines) == "scram-sha-256")
        let wrong = try PostgresTransport(url: server.url(user: device.role, password: "wrong"))
        defer { wrong.close() }
        await #expect { try await wrong.createSpace(SyncServerFixture.newSpaceName()) } throws: {
            error in
            if case PostgresError.connectionFailed = error { return true } else { return false }
        }
    }

    @Test func aHostOtherThanThisMachineWithoutTLSIsRefusedByDefault() async throws {
        let server = try SyncServerFixture.server()
        guard let address = server.externalAddress else {
            Issue.record("this machine has no non-loopback IPv4 address to test TLS-by-default on")
            return
        }
        let device = try SyncServerFixture.newDevice()
        // The test server has no TLS: by default the connection is refused before any password is sent.
        let refused = try PostgresTransport(
            url: server.url(user: device.role, password: device.password, host: address))
        defer { refused.close() }
        await #expect { try await refused.createSpace(SyncServerFixture.newSpaceName()) } throws: {
            error in
            guard case PostgresError.connectionFailed(let message) = error else { return false }
            return message.contains("SSL")
        }
        // The URL may say otherwise, explicitly.
        let allowed = try PostgresTransport(
            url: server.url(
                user: device.role, password: device.password, host: address,
                extra: "sslmode=disable"))
        defer { allowed.close() }
        #expect(try await allowed.createSpace(SyncServerFixture.newSpaceName()))
    }
}
