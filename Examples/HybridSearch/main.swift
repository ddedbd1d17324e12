// Hybrid search with filters: a vector leg and a text leg over the rows a filter keeps, fused.
// Run: swift run example-hybrid [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("hybrid-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let chunks = try await database.documents("chunks", schema: DocumentSchema(
    fields: [.text("document", indexed: true), .text("text"), .integer("page"), .vector("embedding", dimension: 4)],
    fullText: FullTextDefinition(fields: ["text"])))

// In an app the vectors come from an Embedder; here they are written out so the output is exact.
try await chunks.insert([
    Document(id: 1, ["document": "manual.pdf", "text": "Reset the router by holding the button", "page": 3, "embedding": [0.9, 0.1, 0.0, 0.1]]),
    Document(id: 2, ["document": "manual.pdf", "text": "The router light blinks when updating", "page": 7, "embedding": [0.8, 0.3, 0.1, 0.0]]),
    Document(id: 3, ["document": "notes.md", "text": "Bought a new router on sale", "page": 1, "embedding": [0.7, 0.0, 0.5, 0.2]]),
    Document(id: 4, ["document": "manual.pdf", "text": "Warranty covers two years", "page": 12, "embedding": [0.0, 0.9, 0.1, 0.3]]),
])

let question: [Float] = [0.85, 0.2, 0.05, 0.05]   // "how do I reset my router?"
let query = Query(Field("document") == "manual.pdf" && Field("page") <= 10)
    .nearest(to: question, in: "embedding")
    .matching(.typed("reset router"))
    .fused(.reciprocalRank(k: 60))
    .limit(3)
for hit in try await chunks.search(query) {
    print(hit.record.id, hit.record["text"]!, "| vector rank", hit.vectorRanks[0].map(String.init) ?? "-",
          "| text rank", hit.textRank.map(String.init) ?? "-")
}
print("plan:")
for line in try await chunks.explain(query) { print(" ", line) }

// Diversity (maximal marginal relevance): a near-copy of chunk 1 arrives, and a plain vector
// search returns both copies. `.diversified(lambda:)` re-ranks by λ·relevance − (1−λ)·similarity
// to the hits already picked (λ = 1: relevance only), so the copy moves down.
try await chunks.insert([
    Document(id: 5, ["document": "faq.md", "text": "To reset the router, hold its button", "page": 1, "embedding": [0.88, 0.12, 0.0, 0.1]]),
])
let nearest = Query().nearest(to: question, in: "embedding").limit(3)
print("relevance:  ", try await chunks.search(nearest).map { "\($0.record.id)" }.joined(separator: ", "))
print("diversified:", try await chunks.search(nearest.diversified(lambda: 0.7)).map { "\($0.record.id)" }.joined(separator: ", "))

// Projection: `.select` reads only the named fields (the id always comes), here leaving the
// text and the vector in the table.
for hit in try await chunks.search(query.select(["document", "page"])) {
    print(hit.record.id, hit.record.fields.keys.sorted(), hit.record["document"]!, "page", hit.record["page"]!)
}
