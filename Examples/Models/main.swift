// Typed models: a Codable struct stored, fetched with #Predicate, sorted, paged and searched.
// Run: swift run example-models [folder]
import Foundation
import Trove

struct Note: Model {
    var id: Int64
    var title: String
    var body: String
    var tags: [String]
    var due: Date?
    var done = false
    var embedding: [Float]? = nil

    static var modelOptions: ModelOptions {
        ModelOptions()
            .indexed(\Note.due)
            .fullText(\Note.title, weight: 2).fullText(\Note.body)
            .vector(\Note.embedding, dimension: 16)
            .embedding(of: \Note.body, into: \Note.embedding)   // embedded on every save
    }
}

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("notes-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let notes = try await database.models(Note.self, embedder: ToyEmbedder())   // in an app: BERTEmbedder
let day = 86_400.0
try await notes.insert([
    Note(id: 1, title: "Dentist", body: "dentist appointment tuesday morning", tags: ["health"], due: Date(timeIntervalSince1970: 3 * day)),
    Note(id: 2, title: "Groceries", body: "oat milk bread apples", tags: ["home"], due: Date(timeIntervalSince1970: 1 * day)),
    Note(id: 3, title: "Taxes", body: "send the tax forms", tags: ["admin", "home"], due: nil),
    Note(id: 4, title: "Old dentist bill", body: "pay the dentist bill", tags: ["health", "admin"], due: Date(timeIntervalSince1970: 2 * day), done: true),
])

// #Predicate runs as SQL (an untranslatable node is an error, never a scan in memory).
let open = try await notes.fetch(FetchDescriptor(
    predicate: #Predicate { !$0.done && ($0.tags.contains("home") || $0.title.starts(with: "Dent")) },
    sortBy: [SortDescriptor(\.due)]))
print("open:", open.map(\.title))

let deadline = Date(timeIntervalSince1970: 2.5 * day), never = Date.distantFuture
print("due soon:", try await notes.count(where: #Predicate { ($0.due ?? never) < deadline }))

// Search by meaning and words, among the models a predicate keeps.
for hit in try await notes.search("dentist", where: #Predicate { !$0.done }, limit: 2) {
    print("hit:", hit.model.title, String(format: "%.4f", hit.score))
}

// Models, documents and SQL in one transaction.
try await database.write { tx in
    let notes = try tx.models(Note.self)
    guard var taxes = try notes.fetch(id: 3) else { return }
    taxes.done = true
    try notes.update(taxes)
    try notes.delete(where: #Predicate { $0.done && $0.tags.contains("health") })
}
print("left:", try await notes.fetch(FetchDescriptor(sortBy: [SortDescriptor(\.title)])).map { "\($0.title)\($0.done ? " (done)" : "")" })
