import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveSync

/// Devices syncing through the real PostgreSQL server: SyncSpace over PostgresTransport.
@Suite struct PostgresEndToEndTests {
    /// A role, a space created on the server by it, a key, and one transport per device.
    private func space(devices: Int) throws -> (
        SyncServerFixture.Device, String, SyncKey, [PostgresTransport]
    ) {
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<devices).map { _ in try PostgresTransport(url: role.url) }
        return (role, SyncServerFixture.newSpaceName(), try SyncKey.random(), transports)
    }

    @Test func twoDatabasesConvergeAndSearchTheSameNotes() async throws {
        let directory = try TemporaryDirectory()
        let (_, space, key, transports) = try space(devices: 2)
        defer { transports.forEach { $0.close() } }
        try await transports[0].createSpace(space)
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await Device.make(
            "b", in: directory, transport: transports[1], key: key, space: space)
        try await a.notes.insert([
            Notes.note("a1", title: "Shopping", body: "remember the oat milk", rank: 1),
            Notes.note("a2", title: "Dentist", body: "tuesday at ten"),
        ])
        try await b.notes.insert([Notes.note("b1", title: "Bicycle", body: "repair the brakes")])
        try await a.sync.push()
        try await b.sync.push()
        try await a.sync.pull()
        try await b.sync.pull()
        // Concurrent edits of one note, a delete, then another round.
        _ = try await a.notes.patch("a1", [Field("rank"): 5])
        _ = try await b.notes.patch("a1", [Field("title"): "Groceries"])
        _ = try await b.notes.delete(id: "a2")
        for device in [a, b, a, b] {
            try await device.sync.push()
            try await device.sync.pull()
        }
        #expect(try await a.canonicalDump() == b.canonicalDump())
        #expect(try await b.notes.fetch(id: "a1")?["title"] == .string("Groceries"))
        #expect(try await b.notes.fetch(id: "a1")?["rank"] == .int(5))
        #expect(try await a.notes.fetch(id: "a2") == nil)
        // A note pushed by A is returned by hybrid search on B after its pull.
        let hits = try await b.notes.search(SearchOnArrivalTests.hybrid("oat milk"))
        #expect(hits.first?.record.id == "a1")
        #expect(hits.first?.textRank != nil)
        let status = await b.sync.status
        #expect(status.pendingChanges == 0 && status.unacknowledgedChangeSets == 0)
        let last = try await transports[1].lastSequence(space: space)
        #expect(status.lastPulledSequence == last)
    }

    @Test func runOnBothDevicesDeliversACommitThroughNotify() async throws {
        let directory = try TemporaryDirectory()
        let (_, space, key, transports) = try space(devices: 2)
        defer { transports.forEach { $0.close() } }
        try await transports[0].createSpace(space)
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await Device.make(
            "b", in: directory, transport: transports[1], key: key, space: space)
        // Polling every 10 minutes: only LISTEN/NOTIFY can bring the note in time.
        let runs = [a, b].map { device in
            Task { try await device.sync.run(pollInterval: .seconds(600)) }
        }
        defer { runs.forEach { $0.cancel() } }
        try await Task.sleep(nanoseconds: 300_000_000)
        // Found long before the next poll (10 minutes) can only mean NOTIFY brought it; the
        // latency itself is a benchmark's business, not a test's on a shared machine.
        try await a.notes.insert([
            Notes.note("n1", title: "Harbour", body: "the ferry leaves at noon")
        ])
        let found = await waitUntilAsync(seconds: 180) {
            (try? await b.notes.search(SearchOnArrivalTests.hybrid("ferry noon")).first?.record.id)
                == "n1"
        }
        #expect(found)
    }

    @Test func noClearTextSentinelReachesTheServersFilesOrADump() async throws {
        let server = try SyncServerFixture.server()
        let directory = try TemporaryDirectory()
        let (_, space, key, transports) = try space(devices: 2)
        defer { transports.forEach { $0.close() } }
        try await transports[0].createSpace(space)
        let sentinel = "SENTINEL-\(SyncServerFixture.uniqueSuffix())-PLAINTEXT"
        let a = try await Device.make(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await Device.make(
            "b", in: directory, transport: transports[1], key: key, space: space)
        try await a.notes.insert([
            Notes.note(sentinel, title: sentinel, body: "body \(sentinel) body")
        ])
        try await a.sync.push()
        try await b.sync.pull()
        #expect(
            try await b.notes.fetch(id: .string(sentinel))?["title"] == .string(sentinel),
            "the sentinel was synced")

        // The control: bytes pushed unsealed are found by the same scans, so the scans can see.
        let control = "CONTROL-\(SyncServerFixture.uniqueSuffix())-PLAINTEXT"
        let controlSpace = SyncServerFixture.newSpaceName()
        try await transports[0].createSpace(controlSpace)
        _ = try await transports[0].push(
            [SealedChangeSet(device: "control", deviceSequence: 1, payload: Data(control.utf8))],
            space: controlSpace)
        try server.psql("CHECKPOINT")

        let files = try Self.filesContaining(
            [Data(sentinel.utf8), Data(control.utf8)], under: server.dataDirectory)
        #expect(files[0].isEmpty, "sentinel in \(files[0])")
        #expect(!files[1].isEmpty, "the control was not found: the scan cannot see")
        let dump = try server.dump()
        func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }
        #expect(!dump.contains(sentinel) && !dump.contains(hex(sentinel)))
        #expect(dump.contains(hex(control)))
    }

    /// For each needle, the files under `root` that contain it.
    static func filesContaining(_ needles: [Data], under root: String) throws -> [[String]] {
        var found = [[String]](repeating: [], count: needles.count)
        guard let walker = FileManager.default.enumerator(atPath: root) else { return found }
        while let relative = walker.nextObject() as? String {
            let path = root + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                !isDirectory.boolValue,
                let data = FileManager.default.contents(atPath: path)
            else { continue }
            for (i, needle) in needles.enumerated() where data.range(of: needle) != nil {
                found[i].append(relative)
            }
        }
        return found
    }
}

/// Polls an async `condition` every 10 ms until it holds (true) or `seconds` pass (false).
func waitUntilAsync(seconds: Double, _ condition: () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return await condition()
}
