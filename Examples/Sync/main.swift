// Sync: two devices' databases converge through a transport. A note written on the laptop is
// found by hybrid search on the phone right after its pull (its vector travels as data); two
// concurrent edits of one title pick the same winner on both, and the loser is kept and restored.
// A tablet joins by invitation and confirmation code; the phone is removed and reads nothing new.
// Run: swift run example-sync [folder]
import Foundation
import Trove
import TroveSync

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let stamp = ProcessInfo.processInfo.processIdentifier
let paths = ["laptop", "phone", "tablet"].map { URL(fileURLWithPath: folder).appendingPathComponent("sync-\($0)-\(stamp).trove").path }
defer { for path in paths { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } } }

// Each device keeps its own database. Synced collections need ids no two devices can both make
// (UUID or String ids).
let schema = DocumentSchema(
    id: .string, fields: [.text("title"), .text("body"), .vector("embedding", dimension: 4, optional: true)],
    fullText: FullTextDefinition(fields: ["title", "body"]))
let laptop = try Database(path: paths[0])
let phone = try Database(path: paths[1])
for database in [laptop, phone] { _ = try await database.documents("notes", schema: schema) }

// One key per space, never sent to the server: from a passphrase every device knows, or
// SyncKey.random() on one device and its `exported` string imported on the others.
let key = try SyncKey(passphrase: "correct horse battery staple", space: "notes")
// The transport carries sealed change sets: PostgresTransport, or your own backend. Here the
// in-process one stands in for the server.
let server = InProcessTransport()
let laptopSync = try await SyncSpace(database: laptop, space: "notes", key: key, transport: server, collections: ["notes"])
let phoneSync = try await SyncSpace(database: phone, space: "notes", key: key, transport: server, collections: ["notes"])

let notes = try await laptop.documents(named: "notes")
try await notes.insert([
    Document(id: "groceries", ["title": "Groceries", "body": "oat milk and rye bread", "embedding": .vector([0.9, 0.1, 0, 0])]),
    Document(id: "trip", ["title": "Trip", "body": "train to the coast", "embedding": .vector([0, 0, 0.8, 0.2])]),
])
print("laptop: \(try await laptopSync.refreshStatus().pendingChanges) records to push")
print("laptop pushed \(try await laptopSync.push()) change set(s)")
print("phone pulled \(try await phoneSync.pull()) change set(s)")

// Searchable on the phone at once: full text and the laptop's vectors, nothing embedded again.
let phoneNotes = try await phone.documents(named: "notes")
let hits = try await phoneNotes.search(
    Query().nearest(to: [0.8, 0.2, 0, 0], in: "embedding").matching(.typed("oat milk")).limit(1))
print("phone finds: \(hits.map(\.record.id))")

// Both devices change the same title offline. The later write wins on both devices, whatever
// order their change sets arrive in; the laptop keeps its losing value as a conflict.
_ = try await notes.patch("groceries", [Field("title"): "Groceries for Monday"])
try await Task.sleep(for: .milliseconds(20))
_ = try await phoneNotes.patch("groceries", [Field("title"): "Shopping"])
for sync in [laptopSync, phoneSync] { try await sync.push() }
for sync in [laptopSync, phoneSync] { try await sync.pull() }
print("title on the laptop: \(try await notes.fetch(id: "groceries")?["title"] ?? .null)")
print("title on the phone: \(try await phoneNotes.fetch(id: "groceries")?["title"] ?? .null)")
let conflicts = try await laptopSync.conflicts()
for conflict in conflicts {
    print("conflict on the laptop: \(conflict.field) was \(conflict.losingValue)")
}

// One call brings the losing value back, as a new write that syncs like any other.
try await laptopSync.restore(conflicts[0])
try await laptopSync.push()
try await phoneSync.pull()
print("title on the phone after the restore: \(try await phoneNotes.fetch(id: "groceries")?["title"] ?? .null)")
let status = try await phoneSync.refreshStatus()
print("phone: \(status.pendingChanges) pending, pulled up to \(status.lastPulledSequence), \(status.queued.count) queued")

// Devices are members with keys of their own. A new tablet shows its invitation; the laptop adds
// it and shows a confirmation code, which the tablet enters. The tablet needs no passphrase.
let tablet = try Database(path: paths[2])
_ = try await tablet.documents("notes", schema: schema)
let invitation = try await SyncSpace.invitation(database: tablet, space: "notes")
let code = try await laptopSync.addDevice(invitation: invitation)
let tabletSync = try await SyncSpace(database: tablet, space: "notes", key: nil, transport: server, collections: ["notes"])
try await tabletSync.acceptMembership(confirmationCode: code)
print("tablet pulled \(try await tabletSync.pull()) change set(s)")

// The phone is lost: removing it starts a new key epoch, wrapped for the laptop and the tablet
// only. What is written from now on is sealed under it, and the phone can open none of it.
try await laptopSync.removeDevice(phoneSync.device)
try await notes.insert([Document(id: "safe", ["title": "Safe", "body": "the code is 4711"])])
try await laptopSync.push()
print("tablet pulled \(try await tabletSync.pull()) change set(s) under key epoch \(await tabletSync.keyEpoch)")
do {
    try await phoneSync.pull()
} catch SyncError.removedFromSpace {
    print("phone: removed from the space, nothing applied")
}
