// Migrations: a notes app's schema over three versions, the timeline recorded in the file.
// Run: swift run example-migrations [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("migrations.trove").path
try? FileManager.default.removeItem(atPath: path)

// Version 1 of the app: notes with a title, a body and a due date kept as text.
var migrator = Migrator()
migrator.registerMigration("v1 notes", steps: [
    .createCollection("notes", schema: DocumentSchema(
        fields: [.text("title"), .text("body"), .text("due", optional: true)],
        fullText: FullTextDefinition(["title": 2, "body": 1]))),
])
let database = try Database(path: path)
try await migrator.migrate(database)
try await database.documents(named: "notes").insert([
    Document(id: 1, ["title": "Dentist", "body": "Tuesday at nine", "due": "2026-12-08T09:00:00Z"]),
    Document(id: 2, ["title": "Groceries", "body": "oat milk and bread"]),
])

// Version 2: a priority with an index, `body` renamed to `text`, `due` becomes a date.
migrator.registerMigration("v2 priorities", steps: [
    .addField(.integer("priority", default: 0), to: "notes"),
    .addIndex(IndexDefinition([Field("priority")]), to: "notes"),
    .renameField("body", to: "text", in: "notes"),
    .changeField("due", in: "notes", to: .date("due", optional: true)) { old in
        old.stringValue.flatMap { ISO8601DateFormatter().date(from: $0) }.map(Value.date) ?? .null
    },
    .custom { context in
        try context.execute("UPDATE notes SET priority = 1 WHERE due IS NOT NULL")
    },
])
try await migrator.migrate(database)

let notes = try await database.documents(named: "notes")
for note in try await notes.fetch(Query().sorted(by: .descending("priority"))) {
    print(note.id, note["title"]!, note["text"]!, note["priority"]!, note["due"]!)
}
let hits = try await notes.search(Query().matching(.typed("milk"), in: ["text"]))
print("text search:", hits.map(\.record.id))
print("applied:", try await migrator.appliedMigrations(in: database).map(\.name))

// A failing migration changes nothing: the file stays at v2.
migrator.registerMigration("v3 owners", steps: [.addField(.text("owner"), to: "notes")])
do {
    try await migrator.migrate(database)
} catch let error as MigrationError {
    print(error)
}
print("pending:", try await migrator.pendingMigrations(in: database))

// An older build of the app refuses the file instead of misreading it.
var older = Migrator()
older.registerMigration("v1 notes", steps: [])
do {
    try await older.migrate(database)
} catch MigrationError.fileIsNewer(let unknown) {
    print("older build refuses the file; unknown migrations:", unknown)
}

// Models: version 1's types write, the plan migrates, version 2's types read.
let tasksPath = URL(fileURLWithPath: folder).appendingPathComponent("tasks.trove").path
try? FileManager.default.removeItem(atPath: tasksPath)
let tasksDatabase = try Database(path: tasksPath)
let plan = try Migrator(plan: TasksPlan.self)
try await plan.migrate(tasksDatabase, upTo: "1.0.0")
try await tasksDatabase.models(ModelsV1.Task.self).insert([
    ModelsV1.Task(id: 1, title: "Write the report", done: false),
    ModelsV1.Task(id: 2, title: "Book flights", done: true),
])
try await plan.migrate(tasksDatabase)
for task in try await tasksDatabase.models(ModelsV2.Task.self).fetch() {
    print(task.id, task.name, task.done, task.estimate.map(String.init) ?? "none")
}

