// A notes app: Codable models, a #Predicate fetch, a relationship, search by meaning and words,
// a migration from the app's first version, and a live query.
// Run: swift run example-models [folder]
import Foundation
import Trove

struct Folder: Model {
    var id: Int64
    var name: String
}

/// The app's note today (version 2): it lives in a folder.
struct Note: Model {
    var id: Int64
    var folderID: Int64?
    var title: String
    var body: String
    var done = false
    var embedding: [Float]? = nil

    static var modelOptions: ModelOptions {
        ModelOptions()
            .reference(\Note.folderID, to: Folder.self, onDelete: .cascade)   // a foreign key, indexed
            .fullText(\Note.title, weight: 2).fullText(\Note.body)
            .vector(\Note.embedding, dimension: 16)
            .embedding(of: \Note.body, into: \Note.embedding)                  // embedded on every save
    }
}

/// The first version of the app had no folders; its files move to version 2 when they open.
enum NotesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Note.self]
    struct Note: Model {
        var id: Int64
        var title: String
        var body: String
        var done = false
        var embedding: [Float]? = nil
        static var modelOptions: ModelOptions {
            ModelOptions().fullText(\Note.title, weight: 2).fullText(\Note.body)
                .vector(\Note.embedding, dimension: 16).embedding(of: \Note.body, into: \Note.embedding)
        }
    }
}
enum NotesV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static let models: [any PersistentModel.Type] = [Folder.self, Note.self]
}
enum NotesPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [NotesV1.self, NotesV2.self]
    static let stages: [MigrationStage] = [
        .custom(fromVersion: NotesV1.self, toVersion: NotesV2.self, willMigrate: nil, didMigrate: { context in
            // Value models and raw SQL: the migration's own handle, in the same transaction.
            guard let migration = context.migrationContext else { return }
            try migration.execute("INSERT INTO Folder (id, name) VALUES (1, 'Inbox')")
            try migration.execute("UPDATE Note SET folderID = 1")   // every old note goes to the inbox
        }),
    ]
}

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("notes-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
let database = try Database(path: path)
let embedder = ToyEmbedder()   // in an app: BERTEmbedder or E5Embedder
let plan = try Migrator(plan: NotesPlan.self)

// A file the first version wrote ...
try await plan.migrate(database, upTo: "1.0.0")
try await database.models(NotesV1.Note.self, embedder: embedder).insert([
    NotesV1.Note(id: 1, title: "Dentist", body: "dentist appointment tuesday morning"),
    NotesV1.Note(id: 2, title: "Groceries", body: "oat milk bread apples"),
])
// ... opened by this version: one transaction per version, recorded in the file.
try await plan.migrate(database)
print("versions:", try await plan.appliedMigrations(in: database).map(\.name))

let folders = try await database.models(Folder.self)
let notes = try await database.models(Note.self, embedder: embedder)
try await folders.insert(Folder(id: 2, name: "Work"))
try await notes.insert([
    Note(id: 3, folderID: 2, title: "Quarterly report", body: "draft the quarterly report"),
    Note(id: 4, folderID: 2, title: "Dentist invoice", body: "forward the dentist invoice", done: true),
])

do {   // a block: the live query's iterator is a local value
    // A live query: the open notes now, then again after every commit that changes them.
    var open = notes.observe(FetchDescriptor(predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)]))
        .makeAsyncIterator()
    print("open:", try await open.next()!.map(\.title))

    // #Predicate runs as SQL (an untranslatable node is an error, never a scan in memory).
    let inbox = try await notes.fetch(FetchDescriptor(
        predicate: #Predicate { $0.folderID == 1 && ($0.title.starts(with: "Den") || $0.body.contains("milk")) },
        sortBy: [SortDescriptor(\.title)]))
    print("inbox:", inbox.map(\.title))

    // Each folder's notes in one query (no query per folder).
    let perFolder = try await notes.children(of: [1, 2], via: \Note.folderID, FetchDescriptor(sortBy: [SortDescriptor(\.id)]))
    for folder in try await folders.fetch(FetchDescriptor(sortBy: [SortDescriptor(\.id)])) {
        print(folder.name, "->", perFolder[folder.id, default: []].map(\.title))
    }

    // Search by meaning and words, among the notes a predicate keeps, with scores.
    for hit in try await notes.search("dentist", where: #Predicate { !$0.done }, limit: 2) {
        print("hit:", hit.record.title, String(format: "%.4f", hit.score))
    }

    // Finishing a note and deleting a folder (its notes go with it, enforced by SQLite) both reach
    // the live query.
    guard var groceries = try await notes.fetch(id: 2) else { fatalError("note 2 is missing") }
    groceries.done = true
    try await notes.update(groceries)
    print("open:", try await open.next()!.map(\.title))
    _ = try await folders.delete(id: 2)
    print("open:", try await open.next()!.map(\.title), "- notes left:", try await notes.count())
}
