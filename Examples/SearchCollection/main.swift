// A search collection is a preset document schema: search it, then query, aggregate, patch and
// write it in a transaction with the same query value and engine as document collections.
// Run: swift run example-search-collection [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("search-collection-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let notes = try await SearchCollection("notes", in: database, dimension: 3)
// In an app an Embedder fills them (an entry inserted without a vector); here they are written out.
try await notes.insert([
    VectorEntry(id: 1, content: "Call the plumber about the sink", source: "home", metadata: #"{"priority": 2}"#, vector: [1, 0, 0]),
    VectorEntry(id: 2, content: "Quarterly report due Friday", source: "work", metadata: #"{"priority": 1}"#, vector: [0, 1, 0]),
    VectorEntry(id: 3, content: "Buy oat milk and bread", source: "home", metadata: #"{"priority": 3}"#, vector: [0.9, 0.1, 0]),
    VectorEntry(id: 4, content: "Book the plumber's invoice", source: "work", metadata: #"{"priority": 2}"#, vector: [0.2, 0.8, 0.1]),
])

// Ranked: a vector leg and a text leg over the rows a filter keeps.
let hits = try await notes.search(Query(Field("metadata", path: "$.priority") >= 2)
    .nearest(to: [1, 0, 0], in: "embedding").matching(.typed("plumber")).limit(2))
print("search:", hits.map(\.id))

// Unranked: order, projection and a cursor, as on any document collection.
let byPriority = Query().sorted(by: SortKey(Field("metadata", path: "$.priority"), descending: true)).select(["content"]).limit(2)
let first = try await notes.page(byPriority)
for row in first.documents { print(row.id, row["content"]!) }
let second = try await notes.page(byPriority.after(first.next))
for row in second.documents { print(row.id, row["content"]!) }

// Aggregates, grouped.
for group in try await notes.aggregate([.count(), .maximum("id")], groupBy: [Field("source")]) {
    print(group.group["source"]!, "count", group.values["count"]!, "max id", group.values["max_id"]!)
}

// A patch of one JSON path; the version goes up, the text and vector indexes follow.
let patched = try await notes.patch(2, [Field("metadata", path: "$.priority"): 5, Field("content"): "Quarterly report moved to Monday"])
print("patched:", patched["metadata"]!, "version", patched.version)
print("monday:", try await notes.search(Query().matching(.typed("monday"))).map(\.id))

// One transaction over the search collection, a document collection and raw SQL.
let done = try await database.documents("done", schema: DocumentSchema(fields: [.text("what")]))
try await database.write { tx in
    let row = try tx.documents("notes").fetch(id: 1)!
    try tx.documents("done").insert(Document(id: 1, ["what": row["content"]!]))
    _ = try tx.documents("notes").delete(ids: [1])
}
print("notes left:", try await notes.count(), "done:", try await done.count())
print("plumber now:", try await notes.search(Query().matching(.typed("plumber"))).map(\.id))

// An entry without an id gets one (the next integer here, a UUIDv7 in a `.uuid` collection);
// one without a vector is embedded by the collection's embedder (`SearchCollection(_:in:embedder:)`).
let added = try await notes.insert(VectorEntry(content: "Renew the passport", source: "travel", vector: [0, 0, 1]))
print("added:", added, try await notes.fetch(id: added)!.content)
