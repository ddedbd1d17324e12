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
    final class Gate: Sendable {
        private let open = DispatchSemaphore(value: 0)
        private let state = Mutex((entered: false, released: false))
        func enter() {
            state.withLock { $0.entered = true }
            open.wait()
        }
        func release() {
            state.withLock { $0.released = true }
            open.signal()
        }
        var entered: Bool { state.withLock { $0.entered } }
        var released: Bool { state.withLock { $0.released } }
    }

    @Test("vector, text and hybrid searches and reads finish while the writer is busy")
    func searchesDoNotWaitForTheWriter() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("busy.trove"))
        let items = try await db.collection("items", dimension: 4)
        try await items.insertBatch(randomEntries(count: 100, dimension: 4, seed: 5, firstID: 1))
        let gate = Gate()
        try await db.withWritingEngine("items") { engine in
            try engine.connection.registerFunction(named: "gate", argumentCount: 1) { _ in
                gate.enter()
                return 1
            }
        }
        // The writer (the actor's connection) blocks inside this statement until released.
        let busy = Task { try await db.query("SELECT gate(1)") }
        for _ in 0..<1_000 where !gate.entered { try await Task.sleep(for: .milliseconds(5)) }
        #expect(gate.entered)
        // Released after 20 s at the latest, so a regression fails instead of hanging.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(20))
            if !gate.released { gate.release() }
        }
        let vector = try await items.search(vector: [1, 0, 0, 0], topK: 5)
        let text = try await items.searchText(.typed("row"), topK: 5)
        let hybrid = try await items.searchHybrid(text: .typed("row"), vector: [0, 1, 0, 0], topK: 5)
        let count = try await items.count()
        // All of it answered while the writer was still blocked.
        #expect(!gate.released)
        gate.release()
        watchdog.cancel()
        _ = try await busy.value
        #expect(vector.count == 5 && text.count == 5 && hybrid.count == 5 && count == 100)
    }
}
