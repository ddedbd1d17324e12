import Foundation
import Testing
import Trove
import TroveTestSupport

/// Not Equatable on purpose: model observations compare the documents underneath.
struct LiveTodo: Model {
    var id: Int64
    var title: String
    var done: Bool
    var priority: Int

    static var modelOptions: ModelOptions { ModelOptions().indexed(\LiveTodo.done) }
}

@Suite("Model observation", .timeLimit(.minutes(10)))
struct ModelObservationTests {
    static func open() async throws -> (TemporaryDirectory, Database, ModelCollection<LiveTodo>) {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("todos.trove"))
        return (dir, db, try await db.models(LiveTodo.self))
    }

    @Test("observe(FetchDescriptor) yields the models now and after each commit that changes them")
    func fetchDescriptor() async throws {
        let (dir, _, todos) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let open = FetchDescriptor<LiveTodo>(
            predicate: #Predicate { !$0.done },
            sortBy: [SortDescriptor(\.priority, order: .reverse)])
        var iterator = todos.observe(open).makeAsyncIterator()
        #expect(try await iterator.next()?.isEmpty == true)
        try await todos.insert([
            LiveTodo(id: 1, title: "milk", done: false, priority: 1),
            LiveTodo(id: 2, title: "dentist", done: false, priority: 3),
        ])
        #expect(try await iterator.next()?.map(\.title) == ["dentist", "milk"])
        // A change outside the selection (a done todo) yields nothing; the next real change does.
        try await todos.insert(LiveTodo(id: 3, title: "taxes", done: true, priority: 9))
        try await todos.save(LiveTodo(id: 1, title: "milk", done: true, priority: 1))
        #expect(try await iterator.next()?.map(\.title) == ["dentist"])
    }

    @Test("observe(id:) and observeCount(where:) follow one model and a predicate count")
    func oneAndCount() async throws {
        let (dir, db, todos) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        var one = todos.observe(id: 7).makeAsyncIterator()
        var openCount = todos.observeCount(where: #Predicate { !$0.done }).makeAsyncIterator()
        #expect(try await one.next().map { $0 == nil } == true)  // delivered: no such model
        #expect(try await openCount.next() == 0)
        try await todos.insert(LiveTodo(id: 7, title: "call", done: false, priority: 2))
        #expect(try await one.next()??.title == "call")
        #expect(try await openCount.next() == 1)
        // Through a transaction and through a second database on the file: the same deliveries.
        _ = try await db.write { tx in
            try tx.models(LiveTodo.self).save(
                LiveTodo(id: 7, title: "call", done: true, priority: 2))
        }
        #expect(try await one.next()??.done == true)
        #expect(try await openCount.next() == 0)
        let elsewhere = try await Database(path: dir.path("todos.trove")).models(LiveTodo.self)
        try await elsewhere.delete(id: 7)
        #expect(try await one.next().map { $0 == nil } == true)
    }

    @Test("an untranslatable predicate ends the observation with the translation error")
    func untranslatable() async throws {
        let (dir, _, todos) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        var iterator = todos.observeCount(where: #Predicate { $0.title.count > 3 })
            .makeAsyncIterator()
        await #expect(throws: TroveError.self) { _ = try await iterator.next() }
    }

    @Test("observeSearch yields ranked models, the query embedded once")
    func typedSearch() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let db = try Database(path: dir.path("search.trove"))
        let notes = try await db.models(SearchNote.self, embedder: HashingEmbedder(dimension: 32))
        try await notes.insert(
            SearchNote(id: "a", title: "Groceries", body: "oat milk and bread", year: 2026))
        var hits = try await notes.observeSearch("dentist", mode: .text, limit: 5)
            .makeAsyncIterator()
        #expect(try await hits.next()?.isEmpty == true)
        try await notes.insert(
            SearchNote(id: "b", title: "Dentist", body: "dentist on tuesday", year: 2026))
        #expect(try await hits.next()?.map(\.record.id) == ["b"])
        var hybrid = try await notes.observeSearch(
            "dentist", where: #Predicate { $0.year >= 2020 }, limit: 5
        )
        .makeAsyncIterator()
        #expect(try await hybrid.next()?.first?.record.id == "b")
    }
}
