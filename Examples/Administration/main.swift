// Backup, compaction, dump and load: a database you can copy, shrink and move.
// Run: swift run example-admin [folder]
import Foundation
import Trove

let folder = URL(fileURLWithPath: CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory())
    .appendingPathComponent("admin-\(ProcessInfo.processInfo.processIdentifier)")
try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: folder) }
func file(_ name: String) -> String { folder.appendingPathComponent(name).path }

let database = try Database(path: file("app.trove"))
let items = try await database.documents("items", schema: DocumentSchema(
    fields: [.text("title"), .integer("year", indexed: true), .vector("embedding", dimension: 4)],
    fullText: FullTextDefinition(fields: ["title"])))
func item(_ i: Int64) -> Document {
    let vector: [Float] = [1, Float(i % 7), Float(i % 3), 0.5]
    return Document(id: .int(i), ["title": .string("item \(i)"), "year": .int(1950 + i % 70), "embedding": .vector(vector)])
}
try await items.insert((1...1_000).map(item))

// Online backup: the app may keep writing meanwhile; an existing target is refused.
try await database.backup(to: file("backup.trove"))
let backup = try Database(path: file("backup.trove"))
print("backup:", try await backup.documents(named: "items").count(), "items")
do {
    try await database.backup(to: file("backup.trove"))
} catch TroveError.fileExists {
    print("backup refused: the target exists (pass overwrite: true)")
}

// Compaction gives the space of deleted records back.
try await items.delete(where: Field("year") < 2000)
let compacted = try await database.compact()
print("compacted smaller:", compacted.bytesAfter < compacted.bytesBefore, "items left:", try await items.count())

// Dump to portable JSON lines, load into a new file under another name, dump again.
let dumped = try await database.dump(to: file("app.trove-dump"))
print("dumped:", dumped.records)
let restored = try Database(path: file("restored.trove"))
let loaded = try await restored.load(
    from: file("app.trove-dump"),
    renaming: DumpRenames(collections: ["items": "catalog"], fields: ["items": ["title": "name"]]))
print("loaded:", loaded.records, "problems:", loaded.problems)
let catalog = try await restored.documents(named: "catalog")
print("first:", try await catalog.fetch(id: 60)!["name"]!)
print("text search:", try await catalog.search(Query().matching(.typed("item 60")).limit(1)).map(\.record.id))
