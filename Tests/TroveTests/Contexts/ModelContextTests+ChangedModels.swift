import Foundation
import Testing
import TroveTestSupport

@testable import Trove

/// A save compares only the models listed as changed since the last save (their setters list
/// them): each way a stored value can change must list its model, or the change is not saved.
extension ModelContextTests {
    /// The ids of the models a context's next save will compare.
    static func listed(_ context: ModelContext) throws -> [Int64] {
        try context.store.table(Article.self).changedModels.map(\.id)
    }

    @Test("a save compares only the models changed or deleted since the last save, each once")
    func listsChangedModels() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 50)
        let context = ModelContext(container)
        context.autosaveEnabled = false
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)]))
        #expect(try Self.listed(context).isEmpty)
        articles[9].rating += 1
        articles[9].title = "Ten"
        articles[19].stats.likes = 4
        context.delete(articles[29])
        articles[29].body = "deleted and changed"
        #expect(try Self.listed(context) == [10, 20, 30])
        try context.save()
        #expect(try Self.listed(context).isEmpty)
        let rows = try await container.database.query(
            "SELECT id FROM \"Article\" WHERE _version > 1 ORDER BY id")
        #expect(rows.map { $0.int64("id")! } == [10, 20])
        #expect(
            try await container.database.query("SELECT count(*) AS n FROM \"Article\"").first?
                .int64("n") == 49)
        articles[0].title = "rolled back"
        context.rollback()
        #expect(try Self.listed(context).isEmpty)
        #expect(!context.hasChanges)
    }

    @Test("a change of a tracked model's id alone is refused at save; a rollback puts it back")
    func idAloneIsFound() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 3)
        let context = ModelContext(container)
        context.autosaveEnabled = false
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)]))
        articles[1].id = 99
        #expect(try Self.listed(context) == [99])
        await #expect(throws: TroveError.self) { try context.save() }
        context.rollback()
        #expect(articles[1].id == 2)
        try context.save()
        let rows = try await container.database.query(
            "SELECT id, _version FROM \"Article\" ORDER BY id")
        #expect(rows.map { $0.int64("id")! } == [1, 2, 3])
        #expect(rows.allSatisfy { $0.int64("_version") == 1 })
    }

    @Test(
        "changes through every path are saved: setters, a to-one object property, the implicit id, a delete"
    )
    func everyPathIsSaved() throws {
        let container = try inMemoryContainer(ZooV1.self)
        let context = container.mainContext
        context.autosaveEnabled = false
        let (top, bottom) = (Shelf(label: "top"), Shelf(label: "bottom"))
        let books = (0..<6).map { Book(title: "Book \($0)", shelf: top) }
        context.insert(bottom)
        for book in books { context.insert(book) }
        try context.save()

        // A second context reads the rows: its models are tracked by fetches, not inserts.
        let editor = ModelContext(container)
        editor.autosaveEnabled = false
        let fetched = try editor.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        let shelves = try editor.fetch(FetchDescriptor<Shelf>(sortBy: [SortDescriptor(\.label)]))
        fetched[0].title = "Retitled"
        fetched[1].shelf = shelves[0]  // "bottom"
        fetched[2].shelf = nil
        editor.delete(fetched[3])
        try editor.save()

        let checker = ModelContext(container)
        let stored = try checker.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]))
        #expect(stored.map(\.title) == ["Book 1", "Book 2", "Book 4", "Book 5", "Retitled"])
        #expect(stored[0].shelf?.label == "bottom")
        #expect(stored[1].shelf == nil)
        #expect(stored[2].shelf?.label == "top")

        // The implicit id (a UUID the macro declares) is refused when changed, as a declared one.
        fetched[4].id = UUID()
        #expect(throws: TroveError.self) { try editor.save() }
    }

    @Test(
        "an update that takes a unique value another row has fails naming the field and the value, and writes nothing"
    )
    func updateOntoTakenUniqueValueNamesIt() async throws {
        let container = try inMemoryContainer(ZooV1.self)
        let context = container.mainContext
        context.autosaveEnabled = false
        let (mammals, birds) = (AnimalCategory(name: "Mammal"), AnimalCategory(name: "Bird"))
        context.insert(mammals)
        context.insert(birds)
        try context.save()
        // A loop's updates of the same column share a statement: the failing one is not first.
        mammals.name = "Mammals"
        birds.name = "Mammals"
        await #expect(throws: TroveError.uniqueViolation(field: "name", value: "'Mammals'")) {
            try context.save()
        }
        let stored = try await container.database.query(
            "SELECT name, _version FROM \"AnimalCategory\" ORDER BY name")
        #expect(stored.map { $0[0, as: String.self] ?? "" } == ["Bird", "Mammal"])
        #expect(stored.allSatisfy { $0[1, as: Int64.self] == 1 })
        // The models keep their changes: set apart, they save.
        birds.name = "Birds"
        try context.save()
        let saved = try await container.database.query(
            "SELECT name FROM \"AnimalCategory\" ORDER BY name")
        #expect(saved.map { $0[0, as: String.self] ?? "" } == ["Birds", "Mammals"])
    }
}
