// Expiry (time to live): a document vanishes from every read at its expiry second.
// Run: swift run example-expiry [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("expiry-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

// A clock the example controls (the system clock when none is given).
let clock = ManualClock(Date(timeIntervalSince1970: 1_700_000_000))
let database = try Database(path: path, clock: clock)
let sessions = try await database.documents("sessions", schema: DocumentSchema(
    id: .string, fields: [.text("user"), .vector("taste", dimension: 3)],
    fullText: FullTextDefinition(fields: ["user"]), allowsExpiry: true))

try await sessions.insert([Document(id: "s1", ["user": "ada lovelace", "taste": [1, 0, 0]])], expiry: .after(.seconds(60)))
try await sessions.insert([Document(id: "s2", ["user": "ada byron", "taste": [0.9, 0.1, 0]])], expiry: .after(.seconds(3600)))
try await sessions.insert([Document(id: "s3", ["user": "bo", "taste": [0, 1, 0]])])  // never expires
print("s1 expires at", try await sessions.expiry(of: "s1")!)

func show(_ label: String) async throws {
    let ids = try await sessions.fetch().map(\.id.description)
    let nearest = try await sessions.search(Query().nearest(to: [1, 0, 0], in: "taste").limit(1))
    let named = try await sessions.search(Query().matching(.typed("ada")).limit(10))
    print(label, "fetch:", ids, "count:", try await sessions.count(),
          "nearest:", nearest.map(\.record.id.description), "text:", named.map(\.record.id.description))
}

clock.advance(by: .seconds(59))
try await show("after 59 s")
clock.advance(by: .seconds(1))
try await show("after 60 s")   // s1 is gone from every read, before any purge

try await sessions.setExpiry(id: "s2", .never)
print("s2 expires:", try await sessions.expiry(of: "s2").map { "\($0)" } ?? "never")
print("purged:", try await sessions.purgeExpired())

// In an app: purge in the background (expired documents are invisible either way).
await database.startPurgingExpired(every: .seconds(60))
await database.stopPurgingExpired()
