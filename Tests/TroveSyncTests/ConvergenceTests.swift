import Foundation
import Testing
import Trove
import TroveSync
import TroveTestSupport

/// Three devices edit offline at random (inserts, field edits, deletes, re-inserts, links,
/// expiry times) and sync in random orders and interleavings; at the end every device's dump
/// is the same. Many seeds.
@Suite struct ConvergenceTests {
    static let ids = (0..<8).map { "n\($0)" }
    static let words = ["oat", "milk", "tea", "bread", "river", "stone", "lamp", "north"]

    @Test(arguments: 0..<24)
    func threeDevicesConvergeWhateverTheOrder(seed: UInt64) async throws {
        var random = SeededGenerator(seed: 0x5eed_0000 + seed)
        let server = InProcessTransport()
        let key = try SyncKey.random()
        var devices: [Device] = []
        for name in ["a", "b", "c"] {
            devices.append(
                try await Device.make(name, database: Database(), transport: server, key: key))
        }
        for _ in 0..<80 {
            let device = devices[Int.random(in: 0..<devices.count, using: &random)]
            switch Int.random(in: 0..<10, using: &random) {
            case 0: try await device.sync.push()
            case 1: try await device.sync.pull()
            default: try await Self.edit(device, using: &random)
            }
        }
        // Everyone sends everything, then everyone takes everything.
        for _ in 0..<2 {
            for device in devices.shuffled(using: &random) { try await device.sync.push() }
            for device in devices.shuffled(using: &random) { try await device.sync.pull() }
        }
        let reference = try await devices[0].canonicalDump()
        #expect(
            reference.contains { $0.hasPrefix("notes ") },
            "seed \(seed): the edits left no note to compare")
        for device in devices.dropFirst() {
            let dump = try await device.canonicalDump()
            #expect(
                dump == reference,
                "seed \(seed): \(device.name) has \(dump.filter { !reference.contains($0) }), a has \(reference.filter { !dump.contains($0) })"
            )
        }
        for device in devices {
            // What sync wrote, the derived indexes followed (full text, change log, links).
            let report = try await device.database.verify()
            #expect(report.isHealthy, "seed \(seed): \(device.name): \(report.problems)")
            #expect(try await device.database.links.verify().isEmpty)
            let status = try await device.sync.refreshStatus()
            #expect(
                status.pendingChanges == 0 && status.unacknowledgedChangeSets == 0
                    && status.queued.isEmpty)
        }
    }

    static func edit(_ device: Device, using random: inout SeededGenerator) async throws {
        let notes = try await device.notes
        let id = ids[Int.random(in: 0..<ids.count, using: &random)]
        let existing = try await notes.fetch(id: .string(id))
        func sentence() -> String {
            (0..<3).map { _ in words[Int.random(in: 0..<words.count, using: &random)] }.joined(
                separator: " ")
        }
        switch Int.random(in: 0..<8, using: &random) {
        case 0, 1:
            if existing == nil {
                try await notes.insert([
                    Notes.note(
                        id, title: sentence(), body: Bool.random(using: &random) ? sentence() : nil)
                ])
            } else {
                let body = sentence()
                _ = try await notes.patch(
                    .string(id),
                    [
                        Field("body"): .string(body),
                        Field("embedding"): .vector(Notes.embedder.vector(body)),
                    ])
            }
        case 2:
            guard existing != nil else { return }
            _ = try await notes.patch(.string(id), [Field("title"): .string(sentence())])
        case 3:
            guard existing != nil else { return }
            _ = try await notes.patch(
                .string(id),
                [
                    Field("rank"): .int(Int64.random(in: 0..<100, using: &random)),
                    Field("tags"): .array([
                        .string(words[Int.random(in: 0..<words.count, using: &random)])
                    ]),
                ])
        case 4:
            _ = try await notes.delete(id: .string(id))
        case 5, 6:
            let other = ids[Int.random(in: 0..<ids.count, using: &random)]
            guard existing != nil, try await notes.fetch(id: .string(other)) != nil else { return }
            if Bool.random(using: &random) {
                try await device.database.links.link(
                    GraphNode("notes", .string(id)), to: GraphNode("notes", .string(other)),
                    label: "see",
                    weight: Double(Int.random(in: 1...5, using: &random)))
            } else {
                _ = try await device.database.links.unlink(
                    GraphNode("notes", .string(id)), to: GraphNode("notes", .string(other)))
            }
        default:
            guard existing != nil else { return }
            let days = Double(Int.random(in: 30...90, using: &random))
            try await notes.setExpiry(
                id: .string(id), .at(Date(timeIntervalSince1970: 4_000_000_000 + days * 86_400)))
        }
    }
}
