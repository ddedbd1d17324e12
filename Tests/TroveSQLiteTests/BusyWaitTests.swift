import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

/// `Connection.onBusyWait(_:)`: told each time the connection waits for a lock another
/// connection holds, within the busy timeout it was opened with.
@Suite("Waiting for a lock")
struct BusyWaitTests {
    @Test("called while another connection holds the write lock; the busy timeout still applies")
    func calledWithinTimeout() throws {
        let dir = try TemporaryDirectory()
        let holder = try Connection(.file(dir.path("db.sqlite")))
        try holder.execute("CREATE TABLE t(x)")
        let waiter = try Connection(
            .file(dir.path("db.sqlite")), options: .init(busyTimeout: .milliseconds(300)))
        var calls = 0
        waiter.onBusyWait { calls += 1 }
        try holder.execute(script: "BEGIN IMMEDIATE")
        let start = ContinuousClock.now
        #expect(throws: SQLiteError.self) {
            try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (1)") }
        }
        #expect(ContinuousClock.now - start >= .milliseconds(250))
        #expect(calls >= 5)  // SQLite's schedule: 1, 2, 5, 10, 15, 20, 25, ... ms
        try holder.execute(script: "COMMIT")
        try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (2)") }
        #expect(try waiter.scalar("SELECT count(*) FROM t")?.int64Value == 1)
    }

    @Test("a holder that gives way when told lets the waiter in at its next try")
    func holderGivesWay() throws {
        let dir = try TemporaryDirectory()
        let holder = try Connection(.file(dir.path("db.sqlite")))
        try holder.execute("CREATE TABLE t(x)")
        let waiter = try Connection(
            .file(dir.path("db.sqlite")), options: .init(busyTimeout: .milliseconds(300)))
        var calls = 0
        // The holder is idle while the waiter waits, so the waiter's thread may end its
        // transaction (what the text-index merger does at its next step).
        waiter.onBusyWait {
            calls += 1
            try? holder.execute(script: "COMMIT")
        }
        try holder.execute(script: "BEGIN IMMEDIATE")
        try waiter.transaction(.immediate) { try waiter.execute("INSERT INTO t VALUES (1)") }
        #expect(calls == 1)
        #expect(try holder.scalar("SELECT count(*) FROM t")?.int64Value == 1)
    }
}
