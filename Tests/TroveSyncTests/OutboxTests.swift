import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@testable import TroveSync

@Suite struct OutboxTests {
    @Test func aPushTakesTheOldestChangeSetsUpToItsCountAndItsBytes() async throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("outbox.trove"))
        let picked = try await database.syncWrite { connection in
            try connection.execute(
                "CREATE TABLE \(SyncTables.outbox) (sequence INTEGER PRIMARY KEY, payload BLOB NOT NULL)"
            )
            // Inserted out of order: the outbox is read by sequence.
            for (sequence, size) in [(3, 30), (1, 10), (5, 50), (2, 20), (4, 40)] {
                try connection.execute(
                    "INSERT INTO \(SyncTables.outbox) (sequence, payload) VALUES (?, ?)",
                    [
                        .integer(Int64(sequence)),
                        .blob([UInt8](repeating: UInt8(sequence), count: size)),
                    ])
            }
            func sequences(limit: Int, bytes: Int) throws -> [Int64] {
                try Outbox.unacknowledged(on: connection, device: "d", limit: limit, bytes: bytes)
                    .map(\.deviceSequence)
            }
            return [
                try sequences(limit: 10, bytes: 60),  // 10 + 20 + 30 reach the budget: no fourth
                try sequences(limit: 10, bytes: 61),  // the fourth starts below it
                try sequences(limit: 2, bytes: 1_000),  // the count binds first
                try sequences(limit: 10, bytes: 1),  // the oldest goes whatever its size
            ]
        }
        #expect(picked == [[1, 2, 3], [1, 2, 3, 4], [1, 2], [1]])
        let payload = try await database.syncWrite { connection in
            try Outbox.unacknowledged(on: connection, device: "d", limit: 1, bytes: 1).first
        }
        #expect(payload?.device == "d" && payload?.payload == Data(repeating: 1, count: 10))
    }
}
