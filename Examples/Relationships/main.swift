// Relationships: reference fields between document collections, enforced by SQLite.
// Run: swift run example-relationships [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("relationships-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
// A referenced collection exists before the collections that reference it.
let authors = try await database.documents("authors", schema: DocumentSchema(fields: [.text("name")]))
let books = try await database.documents("books", schema: DocumentSchema(fields: [
    .text("title"), .integer("year"),
    .reference("author", to: "authors", onDelete: .cascade),   // a foreign key, indexed
]))
let loans = try await database.documents("loans", schema: DocumentSchema(fields: [
    .text("borrower"),
    .reference("book", to: "books", onDelete: .deny),
]))
try await authors.insert([
    Document(id: 1, ["name": "Ursula K. Le Guin"]), Document(id: 2, ["name": "Frank Herbert"]),
    Document(id: 3, ["name": "Octavia E. Butler"]),
])
try await books.insert([
    Document(id: 1, ["title": "A Wizard of Earthsea", "year": 1968, "author": 1]),
    Document(id: 2, ["title": "The Dispossessed", "year": 1974, "author": 1]),
    Document(id: 3, ["title": "Dune", "year": 1965, "author": 2]),
    Document(id: 4, ["title": "Kindred", "year": 1979, "author": 3]),
])

// A reference to a document that does not exist is a typed error; nothing is written.
do {
    try await books.insert(Document(id: 5, ["title": "Unknown", "year": 2000, "author": 42]))
} catch TroveError.missingReference(let field, let value, let collection) {
    print("refused: \(field) = \(value), no such document in \(collection)")
}

// The books of several authors in one query, grouped by author.
let byAuthor = try await books.children(of: [1, 2, 3], via: "author", Query().sorted(by: .ascending("year")))
for author in try await authors.fetch() {
    let titles = byAuthor[author.id, default: []].map { $0["title"]!.stringValue! }
    print(author["name"]!.stringValue!, "->", titles.joined(separator: ", "))
}

// Prefetch: each book's author comes with the fetch (one more query, not one per book).
let recent = try await books.fetch(Query(Field("year") >= 1970).sorted(by: .ascending("year")),
                                   prefetching: [.referenced("author")])
for book in recent.documents {
    print(book["title"]!.stringValue!, "by", recent.referenced("author", of: book)!["name"]!.stringValue!)
}

// Delete rules: a book on loan cannot go, so neither can its author (the cascade would reach it).
try await loans.insert(Document(id: 1, ["borrower": "Sam", "book": 2]))
do {
    try await authors.delete(id: 1)
} catch TroveError.deleteDenied(let collection, let id, let referencedBy) {
    print("refused: \(collection) \(id) is referenced by \(referencedBy)")
}
try await loans.delete(id: 1)
try await authors.delete(id: 1)                      // cascades to both of her books
print("books left:", try await books.count())
// Raw SQL follows the same rules: SQLite enforces them.
try await database.execute("DELETE FROM authors WHERE id = 2")
print("books left:", try await books.count(), "- verify:", try await books.verify().isEmpty ? "ok" : "problems")

// The same through typed models: a to-one reference declared in ModelOptions, to-many through it.
struct Shelf: Model { var id: Int64; var label: String }
struct Volume: Model {
    var id: Int64
    var title: String
    var shelfID: Int64
    static var modelOptions: ModelOptions {
        ModelOptions().reference(\Volume.shelfID, to: Shelf.self, onDelete: .cascade)
    }
}
let volumes = try await database.models(Volume.self)    // creates Shelf's collection first
let shelves = try await database.models(Shelf.self)
try await shelves.insert([Shelf(id: 1, label: "fiction"), Shelf(id: 2, label: "poetry")])
try await volumes.insert([Volume(id: 1, title: "Kindred", shelfID: 1), Volume(id: 2, title: "Odes", shelfID: 2),
                          Volume(id: 3, title: "Dune", shelfID: 1)])
let perShelf = try await volumes.children(of: [1, 2], via: \Volume.shelfID, FetchDescriptor(sortBy: [SortDescriptor(\.title)]))
print("fiction:", perShelf[1]!.map(\.title).joined(separator: ", "), "- poetry:", perShelf[2]!.map(\.title).joined(separator: ", "))
let listed = try await volumes.fetch(FetchDescriptor(sortBy: [SortDescriptor(\.title)]), prefetching: [.referenced(\Volume.shelfID)])
for volume in listed.models {
    print(volume.title, "on", try listed.referenced(\.shelfID, of: volume, as: Shelf.self)!.label)
}
try await shelves.delete(id: 1)
print("volumes left:", try await volumes.fetch().map(\.title))
