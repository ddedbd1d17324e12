import Foundation
import Testing
import Trove
import TroveTestSupport

/// Relationship properties of `@Model` classes, with SwiftData's documented behaviour as the
/// oracle: both sides kept in step in memory, related models inserted with a model, to-one
/// relationships stored as foreign keys with the delete rule of the to-many side.
@Suite("@Model relationships")
@MainActor
struct RelationshipPropertyTests {
    @Test("a to-one relationship is a foreign key with the delete rule its inverse declares")
    func foreignKeys() async throws {
        let container = try inMemoryContainer(ZooV1.self)
        let database = container.database
        let animal = try await database.query(
            "SELECT \"table\", \"from\", on_delete FROM pragma_foreign_key_list('Animal')")
        #expect(
            animal.map {
                "\($0[0, as: String.self] ?? "") \($0[1, as: String.self] ?? "") \($0[2, as: String.self] ?? "")"
            }
                == ["AnimalCategory category CASCADE"])
        let book = try await database.query(
            "SELECT \"table\", on_delete FROM pragma_foreign_key_list('Book')")
        #expect(
            book.map { "\($0[0, as: String.self] ?? "") \($0[1, as: String.self] ?? "")" } == [
                "Shelf SET NULL"
            ])
        let columns = try await database.query(
            "SELECT name FROM pragma_table_info('AnimalCategory')"
        ).compactMap {
            $0[0, as: String.self]
        }
        #expect(!columns.contains("animals"), "a to-many relationship has no column")
    }

    @Test("setting either side keeps the other in step in memory")
    func inverseInMemory() {
        let mammals = AnimalCategory(name: "Mammal")
        let birds = AnimalCategory(name: "Bird")
        let cat = Animal(name: "Cat", diet: .carnivorous)
        let owl = Animal(name: "Owl", diet: .carnivorous)
        mammals.animals.append(cat)
        #expect(cat.category === mammals)
        owl.category = mammals
        #expect(mammals.animals.map(\.name) == ["Cat", "Owl"])
        owl.category = birds
        #expect(mammals.animals.map(\.name) == ["Cat"])
        #expect(birds.animals.map(\.name) == ["Owl"])
        mammals.animals.removeAll { $0 === cat }
        #expect(cat.category == nil)
        birds.animals = [cat]
        #expect(cat.category === birds && owl.category == nil)
        let shelf = Shelf(label: "Poetry")
        let book = Book(title: "Odes")
        shelf.books?.append(book)
        #expect(book.shelf === shelf)
        book.shelf = nil
        #expect(shelf.books?.isEmpty == true)
    }

    @Test("inserting a model inserts the models its relationships hold, and links the inverse")
    func insertGraph() async throws {
        let container = try inMemoryContainer(ZooV1.self)
        let database = container.database
        let context = container.mainContext
        let mammals = AnimalCategory(name: "Mammal")
        // set in init: no setter ran
        let cat = Animal(name: "Cat", diet: .carnivorous, category: mammals)
        context.insert(cat)
        #expect(cat.modelContext === context && mammals.modelContext === context)
        #expect(mammals.animals.map(\.name) == ["Cat"])
        let birds = AnimalCategory(name: "Bird")
        birds.animals = [
            Animal(name: "Owl", diet: .carnivorous), Animal(name: "Wren", diet: .omnivorous),
        ]
        context.insert(birds)
        #expect(birds.animals.allSatisfy { $0.modelContext === context })
        try context.save()
        let rows = try await database.query(
            "SELECT a.name, c.name FROM Animal a JOIN AnimalCategory c ON c.id = a.category ORDER BY a.name"
        )
        #expect(
            rows.map { "\($0[0, as: String.self]!) \($0[1, as: String.self]!)" } == [
                "Cat Mammal", "Owl Bird", "Wren Bird",
            ])
    }

    @Test("fetched models resolve their relationships through the context's identity map")
    func resolveTracked() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("zoo.trove")
        do {
            let container = try openContainer(ZooV1.self, at: path)
            let context = container.mainContext
            let mammals = AnimalCategory(name: "Mammal")
            mammals.animals = [
                Animal(name: "Cat", diet: .carnivorous), Animal(name: "Cow", diet: .herbivorous),
            ]
            context.insert(mammals)
            context.insert(Animal(name: "Stray", diet: .omnivorous))
            try context.save()
        }
        let container = try openContainer(ZooV1.self, at: path)
        let context = container.mainContext
        let categories = try context.fetch(FetchDescriptor<AnimalCategory>())
        let animals = try context.fetch(FetchDescriptor<Animal>(sortBy: [SortDescriptor(\.name)]))
        let mammals = try #require(categories.first)
        #expect(animals.map { $0.category?.name } == ["Mammal", "Mammal", nil])
        #expect(animals[0].category === mammals, "one instance per row")
        #expect(Set(mammals.animals.map(\.name)) == ["Cat", "Cow"])
        #expect(animals.allSatisfy { $0.modelContext === context })
    }

    @Test("a moved relationship is saved as the new reference, and rollback puts the old one back")
    func saveAndRollback() async throws {
        let container = try inMemoryContainer(ZooV1.self)
        let database = container.database
        let context = container.mainContext
        let mammals = AnimalCategory(name: "Mammal")
        let birds = AnimalCategory(name: "Bird")
        let bat = Animal(name: "Bat", diet: .omnivorous, category: birds)
        context.insert(mammals)
        context.insert(bat)
        try context.save()
        bat.category = mammals
        #expect(context.hasChanges)
        try context.save()
        let stored = try await database.query("SELECT category FROM Animal")
        #expect(
            stored.first?[0, as: String.self] == mammals.id.uuidString.lowercased()
                || stored.first?[0] == .text(mammals.id.uuidString))
        bat.category = birds
        #expect(birds.animals.contains { $0 === bat })
        context.rollback()
        #expect(bat.category === mammals)
        #expect(!context.hasChanges)
    }

    @Test(
        "deleting a model applies the delete rules: cascade deletes the animals, nullify clears the books' shelf"
    )
    func deleteRules() async throws {
        let container = try inMemoryContainer(ZooV1.self)
        let database = container.database
        let context = container.mainContext
        let mammals = AnimalCategory(name: "Mammal")
        mammals.animals = [
            Animal(name: "Cat", diet: .carnivorous), Animal(name: "Cow", diet: .herbivorous),
        ]
        let shelf = Shelf(label: "Poetry")
        shelf.books = [Book(title: "Odes"), Book(title: "Sonnets")]
        context.insert(mammals)
        context.insert(shelf)
        try context.save()
        context.delete(mammals)
        context.delete(shelf)
        try context.save()
        #expect(
            try await database.query("SELECT count(*) FROM Animal").first?[0, as: Int64.self] == 0)
        #expect(try context.fetch(FetchDescriptor<Animal>()).isEmpty)
        let books = try await database.query("SELECT title, shelf FROM Book ORDER BY title")
        #expect(books.map { $0[0, as: String.self] } == ["Odes", "Sonnets"])
        #expect(books.allSatisfy { $0[1] == .null })
    }
}

extension RelationshipPropertyTests {
    @Test("a relationship not read yet resolves from the file on first access: one read each side")
    func resolveFromStore() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("zoo.trove")
        do {
            let container = try openContainer(ZooV1.self, at: path)
            let birds = AnimalCategory(name: "Bird")
            birds.animals = [
                Animal(name: "Owl", diet: .carnivorous), Animal(name: "Wren", diet: .omnivorous),
            ]
            container.mainContext.insert(birds)
            try container.mainContext.save()
        }
        let container = try openContainer(ZooV1.self, at: path)
        let context = ModelContext(container)
        let owl = try #require(
            try context.fetch(FetchDescriptor<Animal>(predicate: #Predicate { $0.name == "Owl" }))
                .first)
        let birds = try #require(owl.category)
        #expect(birds.name == "Bird" && birds.modelContext === context)
        #expect(Set(birds.animals.map(\.name)) == ["Owl", "Wren"])
        #expect(birds.animals.contains { $0 === owl }, "the identity map's instance")
        let wren = try #require(birds.animals.first { $0.name == "Wren" })
        #expect(wren.category === birds)
        // Moving a child in memory shows on the other side before any save.
        let fish = AnimalCategory(name: "Fish")
        wren.category = fish
        #expect(birds.animals.map(\.name) == ["Owl"] && fish.animals.map(\.name) == ["Wren"])
        #expect(
            fish.modelContext === context, "a model a tracked model now holds joins its context")
        try context.save()
        let other = ModelContext(container)
        let stored = try other.fetch(
            FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)]))
        #expect(
            stored.map { "\($0.name): \($0.animals.map(\.name).sorted())" } == [
                "Bird: [\"Owl\"]", "Fish: [\"Wren\"]",
            ])
    }
}
