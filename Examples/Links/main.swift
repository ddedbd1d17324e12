// Links between records: a document and its chunks, a RAG question restricted to the chunks of one
// document, traversal, shortest path, and links deleted with their record.
// Run: swift run example-links [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("links-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let docs = try await database.documents("docs", schema: DocumentSchema(fields: [.text("title")]))
let chunks = try await database.documents("chunks", schema: DocumentSchema(
    fields: [.text("text")], fullText: FullTextDefinition(fields: ["text"])))
try await docs.insert([Document(id: 1, ["title": "Router manual"]), Document(id: 2, ["title": "Kitchen notes"])])
try await chunks.insert([
    Document(id: 10, ["text": "Reset the router by holding the button"]),
    Document(id: 11, ["text": "The router light blinks while updating"]),
    Document(id: 20, ["text": "Reset the oven clock after a power cut"]),
])

// Directed, labelled links; weights default to 1. A link may point at an id that is no record.
let links = database.links
let manual = GraphNode("docs", 1), kitchen = GraphNode("docs", 2)
try await links.link([
    Link(from: manual, label: "has", to: GraphNode("chunks", 10)),
    Link(from: manual, label: "has", to: GraphNode("chunks", 11)),
    Link(from: kitchen, label: "has", to: GraphNode("chunks", 20)),
    Link(from: GraphNode("chunks", 10), label: "next", to: GraphNode("chunks", 11), weight: 0.5),
    Link(from: manual, label: "cites", to: GraphNode("urls", "https://example.com/firmware")),
])

// A RAG question: chunks linked to the manual that also match the words.
let question = Query(.linked(from: manual, labels: ["has"])).matching(.typed("reset")).limit(3)
for hit in try await chunks.search(question) { print("chunk", hit.record.id, hit.record["text"]!) }
print("plan:")
for line in try await chunks.explain(question) { print(" ", line) }

for link in try await links.neighbours(of: manual) { print("link:", link) }
for reached in try await links.traverse(from: GraphNode("chunks", 10), maxHops: 2, direction: .both) {
    print("reached:", reached.node, "at depth", reached.depth)
}
if let path = try await links.shortestPath(from: manual, to: GraphNode("chunks", 11)) {
    print("shortest:", path.nodes.map(\.description).joined(separator: " -> "), "weight", path.totalWeight)
}

// Deleting a record deletes its links in the same transaction (raw SQL deletes too).
try await chunks.delete(id: 10)
print("after deleting chunk 10:", try await links.neighbours(of: manual, labels: ["has"]).map(\.to.description))
