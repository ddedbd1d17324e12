import Foundation
import Synchronization
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// Searches of search collections run on reader connections, beside the writer.
@Suite("Search collections on the reader pool")
struct PresetReaderTests {
    /// A gate the writer's connection blocks on (inside a SQL function) until the test opens it.
    /// A watchdog on its own thread opens it four minutes after the writer entered it, so a regression fails instead of
    /// hanging.
    final class Gate: Sendable {
        private let open = DispatchSemaphore(value: 0)
        private let state = Mutex((entered: false, released: false, byWatchdog: false))

        func enter() {
            // SQLite may call the function again; once open, the gate stays open.
            let (released, first) = state.withLock { s in
                defer { s.entered = true }
                return (s.released, !s.entered)
            }
            if released { return }
            if first {
                Thread.detachNewThread { [self] in
                    Thread.sleep(forTimeInterval: 240)
                    release(byWatchdog: true)
                }
            }
            open.wait()
        }

        func release(byWatchdog: Bool = false) {
            let first = state.withLock { s in
                defer { s.released = true }
                if !s.released { s.byWatchdog = byWatchdog }
                return !s.released
            }
            if first { open.signal() }
        }

        var entered: Bool { state.withLock { $0.entered } }
        var openedByWatchdog: Bool { state.withLock { $0.byWatchdog } }
    }

    @Test("vector, text and hybrid searches and reads finish while the writer is busy")
    func searchesDoNotWaitForTheWriter() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("busy.trove"))
        let items = try await SearchCollection("items", in: db, dimension: 4)
        try await items.insert(randomEntries(count: 100, dimension: 4, seed: 5, firstID: 1))
        let gate = Gate()
        try await db.withWriter { connection in
            try connection.registerFunction(named: "gate", argumentCount: 1) { _ in
                gate.enter()
                return 1
            }
        }
        // The writer (the actor's connection) blocks inside this statement until released.
        let busy = Task { try await db.query("SELECT gate(1)") }
        // From here nothing may need the database's actor (blocked in the gate) or the cooperative
        // pool: with one of its threads in the gate, the others may be held for minutes by other
        // suites' CPU-bound tests, and this task would not even resume from its wait for the gate
        // before the watchdog. So the wait, the searches and the gate's opening all run on a
        // thread of their own.
        let (vector, text, hybrid, count) = try await withTaskExecutorPreference(
            OwnThreadExecutor()
        ) {
            // Up to 10 minutes for the writer to get a cooperative thread and enter the gate.
            for _ in 0..<120_000 where !gate.entered { try await Task.sleep(for: .milliseconds(5)) }
            #expect(gate.entered)
            defer { gate.release() }
            return (
                try await items.search(vector: [1, 0, 0, 0], limit: 5),
                try await items.search(Query().matching(.typed("row")).limit(5)),
                try await items.search(
                    Query().nearest(to: [0, 1, 0, 0], in: "embedding").matching(.typed("row"))
                        .limit(5)),
                try await items.count()
            )
        }
        _ = try await busy.value
        // All of it was answered while the writer was still blocked, not after the watchdog.
        #expect(!gate.openedByWatchdog)
        #expect(vector.count == 5 && text.count == 5 && hybrid.count == 5 && count == 100)
    }
}
