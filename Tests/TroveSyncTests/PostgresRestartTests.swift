import Foundation
import Testing
import TroveTestSupport

@testable import TroveSync

/// A server of its own, stopped and restarted while two devices push and pull.
@Suite struct PostgresRestartTests {
    @Test func clientsRetryThroughAServerRestartAndConverge() async throws {
        let server = try TestPostgresServer()
        try server.psql(file: SyncServerFixture.schemaFile)
        let role = try SyncServerFixture.newDevice(on: server)
        let space = SyncServerFixture.newSpaceName()
        let writer = try PostgresTransport(url: role.url)
        let reader = try PostgresTransport(url: role.url)
        defer {
            writer.close()
            reader.close()
        }
        try await writer.createSpace(space)
        let wakeups = Wakeups(reader.notifications(space: space))
        #expect(await wakeups.wait(forAtLeast: 1))

        let batches = 40
        let perBatch = 5
        let outages = Counter()
        let stopped = Counter()
        // The writer pushes batch after batch; a batch that fails (server down) is retried until
        // acknowledged, as the sync loop does.
        let pushing = Task {
            var pushed: [SealedChangeSet] = []
            for batch in 0..<batches {
                // Half way, wait for the server to go down, so that the writer meets the outage
                // however the suite's load schedules this task.
                if batch == batches / 2 {
                    while stopped.value == 0 { try await Task.sleep(nanoseconds: 10_000_000) }
                }
                let sets = (0..<perBatch).map { i in
                    SealedChangeSet(
                        device: "writer", deviceSequence: Int64(batch * perBatch + i + 1),
                        payload: Data("\(batch).\(i)".utf8))
                }
                while true {
                    do {
                        _ = try await writer.push(sets, space: space)
                        break
                    } catch PostgresError.connectionFailed {
                        outages.increment()
                        try await Task.sleep(nanoseconds: 50_000_000)
                    }
                }
                pushed += sets
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            return pushed
        }
        // The reader pulls from its cursor until it has everything, retrying the same way. It
        // gives up only after two minutes without progress: a loaded suite can stretch the
        // whole exchange over several minutes (seen: 110 of 200 after a fixed two minutes).
        let pulling = Task {
            var received: [SealedChangeSet] = []
            var deadline = Date().addingTimeInterval(120)
            while received.count < batches * perBatch, Date() < deadline {
                do {
                    let page = try await reader.pull(
                        space: space, after: received.last?.serverSequence ?? 0, limit: 7)
                    if !page.isEmpty { deadline = Date().addingTimeInterval(120) }
                    received += page
                } catch PostgresError.connectionFailed {
                    outages.increment()
                }
                try await Task.sleep(nanoseconds: 10_000_000)
            }
            return received
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        try server.stop()
        stopped.increment()
        // The server stays down until a client has met the outage (then it must retry).
        #expect(await waitUntil(seconds: 120) { outages.value > 0 }, "the outage was met")
        let wakeupsBeforeRestart = wakeups.value
        try server.start()

        let pushed = try await pushing.value
        let received = try await pulling.value
        #expect(outages.value > 0, "the restart was noticed")
        #expect(received.map(\.deviceSequence) == pushed.map(\.deviceSequence))
        #expect(received.map(\.payload) == pushed.map(\.payload))
        #expect(received.compactMap(\.serverSequence) == Array(1...Int64(batches * perBatch)))
        // The listener came back by itself (it yields once on listening again).
        #expect(await wakeups.wait(forAtLeast: wakeupsBeforeRestart + 1))
    }
}

/// A counter several tasks increment.
final class Counter: @unchecked Sendable {
    // @unchecked Sendable: `count` is guarded by `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }

    var value: Int { lock.withLock { count } }
}
