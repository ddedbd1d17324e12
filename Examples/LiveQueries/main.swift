// Live queries: results that stay current as commits land, from any connection or process.
// Run: swift run example-live-queries [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("live-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

/// A model type (a Codable struct; it need not be Equatable to be observed).
struct Reminder: Model {
    var id: Int64
    var text: String
    var done: Bool
}

let database = try Database(path: path)
let todos = try await database.documents("todos", schema: DocumentSchema(
    fields: [.text("title"), .bool("done", default: false)]))

do {
    // An AsyncSequence: the current count first, then a new one after each commit that changes it.
    // Stepped by hand to show each value (an iterator is a local value, hence the block);
    // `for try await open in todos.observeCount(...)` is the everyday form.
    var openCount = todos.observeCount(where: Field("done") == false).makeAsyncIterator()
    print("open:", try await openCount.next()!)
    try await todos.insert(Document(id: 1, ["title": "Buy oat milk"]))
    print("open:", try await openCount.next()!)
    try await todos.insert(Document(id: 2, ["title": "Call the dentist"]))
    print("open:", try await openCount.next()!)

    // A commit that leaves the count as it was yields nothing; the next real change does.
    try await todos.patch(2, [Field("title"): "Call the dentist at 10"])
    try await todos.patch(1, [Field("done"): true])
    print("open:", try await openCount.next()!)

    // Any read on one snapshot can be observed; here as an @Observable object for UI code.
    let board = LiveResults(database.observe { r in
        try r.documents("todos").fetch(Query().sorted(by: .ascending("title"))).map { todo in
            "\(todo["done"] == true ? "[x]" : "[ ]") \(todo["title"]!.stringValue!)"
        }
    })
    await board.waitForUpdates(1)
    print(board.value!)

    // Commits through another connection (here a second Database on the same file; another
    // process works the same way) reach both observations.
    let elsewhere = try await Database(path: path).documents(named: "todos")
    try await elsewhere.insert(Document(id: 3, ["title": "Book a table"]))
    await board.waitForUpdates(2)
    print(board.value!)
    print("open:", try await openCount.next()!)

    // Typed models: a FetchDescriptor (or a count, or a search) observed the same way.
    let reminders = try await database.models(Reminder.self)
    var pending = reminders.observe(FetchDescriptor(
        predicate: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.text)])).makeAsyncIterator()
    print("pending:", try await pending.next()!.map(\.text))
    try await reminders.insert([Reminder(id: 1, text: "Water the plants", done: false),
                                Reminder(id: 2, text: "Pay the rent", done: true)])
    print("pending:", try await pending.next()!.map(\.text))
}
