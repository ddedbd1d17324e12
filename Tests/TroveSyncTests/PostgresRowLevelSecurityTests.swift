import Foundation
import Testing
import TroveTestSupport

@testable import TroveSync

/// Row-level security: a role reads and writes only the spaces it is a member of, through
/// Trove's functions and through any SQL it sends with its own credentials (psql).
@Suite struct PostgresRowLevelSecurityTests {
    @Test func aRoleOfSpaceACannotReadOrWriteSpaceB() async throws {
        let server = try SyncServerFixture.server()
        let alice = try SyncServerFixture.newDevice(prefix: "alice")
        let bob = try SyncServerFixture.newDevice(prefix: "bob")
        let spaceA = SyncServerFixture.newSpaceName()
        let spaceB = SyncServerFixture.newSpaceName()
        let aliceTransport = try PostgresTransport(url: alice.url)
        let bobTransport = try PostgresTransport(url: bob.url)
        defer {
            aliceTransport.close()
            bobTransport.close()
        }
        try await aliceTransport.createSpace(spaceA)
        try await bobTransport.createSpace(spaceB)
        let alicePayload = Data("alice-bytes-\(SyncServerFixture.uniqueSuffix())".utf8)
        let bobSets = (1...3).map {
            SealedChangeSet(
                device: "bob-phone", deviceSequence: Int64($0), payload: Data("bob-\($0)".utf8))
        }
        _ = try await aliceTransport.push(
            [SealedChangeSet(device: "alice-laptop", deviceSequence: 1, payload: alicePayload)],
            space: spaceA)
        _ = try await bobTransport.push(bobSets, space: spaceB)
        let spaceBID = try server.psql("SELECT id FROM trove_sync.spaces WHERE name = '\(spaceB)'")
            .trimmingCharacters(in: .whitespacesAndNewlines)

        // Through the transport.
        await #expect {
            try await aliceTransport.pull(space: spaceB, after: 0, limit: 100)
        } throws: { error in
            if case PostgresError.noSuchSpace = error { return true } else { return false }
        }
        await #expect {
            try await aliceTransport.push(
                [SealedChangeSet(device: "x", deviceSequence: 1, payload: Data([0]))], space: spaceB
            )
        } throws: { error in
            if case PostgresError.noSuchSpace = error { return true } else { return false }
        }

        // Through psql with alice's own credentials: reads see nothing of B.
        func asAlice(_ sql: String) throws -> String {
            try server.psql(sql, user: alice.role, password: alice.password, sqlStateOnly: true)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        func refusedAsAlice(_ sql: String) -> String? {
            do {
                _ = try asAlice(sql)
                return nil
            } catch TestPostgresError.command(_, _, let output) {
                return output.components(separatedBy: "ERROR:").last?.trimmingCharacters(
                    in: .whitespacesAndNewlines)
            } catch {
                return "\(error)"
            }
        }
        #expect(
            try asAlice("SELECT count(*) FROM trove_sync.changes WHERE space_id = \(spaceBID)")
                == "0")
        #expect(
            try asAlice("SELECT encode(payload, 'escape') FROM trove_sync.changes")
                == String(decoding: alicePayload, as: UTF8.self))
        #expect(
            try asAlice("SELECT count(*) FROM trove_sync.spaces WHERE name = '\(spaceB)'") == "0")
        #expect(
            try asAlice("SELECT count(*) FROM trove_sync.members WHERE space_id = \(spaceBID)")
                == "0")
        #expect(refusedAsAlice("SELECT * FROM trove_sync.pull('\(spaceB)', 0, 100)") == "TS001")
        #expect(refusedAsAlice("SELECT trove_sync.last_sequence('\(spaceB)')") == "TS001")
        #expect(refusedAsAlice("SELECT trove_sync.channel('\(spaceB)')") == "TS001")
        // Writes: every way in is closed (42501: row-level security or no privilege at all).
        #expect(
            refusedAsAlice(
                "SELECT * FROM trove_sync.push('\(spaceB)', ARRAY['x'], ARRAY[9]::bigint[], ARRAY['\\x00']::bytea[])"
            )
                == "TS001")
        #expect(
            refusedAsAlice(
                "INSERT INTO trove_sync.changes (space_id, server_sequence, device, device_sequence, payload) "
                    + "VALUES (\(spaceBID), 99, 'x', 9, '\\x00')") == "42501")
        #expect(
            refusedAsAlice(
                "INSERT INTO trove_sync.members (space_id, role_name) VALUES (\(spaceBID), '\(alice.role)')"
            )
                == "42501")
        #expect(
            refusedAsAlice("SELECT trove_sync.add_member('\(spaceB)', '\(alice.role)')") == "TS003")
        #expect(refusedAsAlice("UPDATE trove_sync.changes SET payload = '\\x00'") == "42501")
        // Deleting change sets is for a space's owner (quarantined ones): none of B's go.
        #expect(
            try asAlice(
                "WITH gone AS (DELETE FROM trove_sync.changes WHERE space_id = \(spaceBID) RETURNING 1) SELECT count(*) FROM gone"
            ) == "0")
        #expect(
            refusedAsAlice("SELECT trove_sync.delete_change_set('\(spaceB)', 'x', 1)") == "TS003")
        #expect(
            try asAlice(
                "WITH changed AS (UPDATE trove_sync.spaces SET key_check = '\\x00' WHERE id = \(spaceBID) RETURNING 1) "
                    + "SELECT count(*) FROM changed") == "0")
        #expect(refusedAsAlice("DELETE FROM trove_sync.spaces") == "42501")
        #expect(refusedAsAlice("TRUNCATE trove_sync.changes") == "42501")
        _ = try asAlice("UPDATE trove_sync.spaces SET last_sequence = 0 WHERE id = \(spaceBID)")
        #expect(
            refusedAsAlice("UPDATE trove_sync.spaces SET name = 'stolen' WHERE id = \(spaceBID)")
                == "42501")

        // B is untouched.
        #expect(try await bobTransport.lastSequence(space: spaceB) == 3)
        #expect(
            try await bobTransport.pull(space: spaceB, after: 0, limit: 100).map(\.payload)
                == bobSets.map(\.payload))

        // Membership is the switch: once bob adds alice, she reads B.
        try await bobTransport.addMember(alice.role, toSpace: spaceB)
        #expect(
            try await aliceTransport.pull(space: spaceB, after: 0, limit: 100).map(\.payload)
                == bobSets.map(\.payload))
        #expect(
            try asAlice("SELECT count(*) FROM trove_sync.changes WHERE space_id = \(spaceBID)")
                == "3")
    }

    @Test func aRoleOutsideTroveSyncDeviceCannotTouchTheSchema() throws {
        let server = try SyncServerFixture.server()
        let role = "outsider_\(SyncServerFixture.uniqueSuffix())"
        try server.createRole(role, password: "pw")
        do {
            _ = try server.psql(
                "SELECT count(*) FROM trove_sync.changes", user: role, password: "pw",
                sqlStateOnly: true)
            Issue.record("a role outside trove_sync_device read the feed")
        } catch TestPostgresError.command(_, _, let output) {
            #expect(output.contains("42501"))
        }
    }
}
