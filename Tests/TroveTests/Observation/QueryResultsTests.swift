import Foundation
import Testing
import Trove
import TroveTestSupport

/// The observable result set under `@Query`: current after each commit that changes it,
/// whoever commits.
@Suite("Query results")
@MainActor
struct QueryResultsTests {
    /// Waits (up to five seconds) until `condition` holds.
    func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            guard ContinuousClock.now < deadline else { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    @Test(
        "follows saves of this context, of another context and raw SQL, in the descriptor's order")
    func followsCommits() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ZooV1.self, at: dir.path("zoo.trove"))
        let context = container.mainContext
        context.autosaveEnabled = false
        context.insert(AnimalCategory(name: "Fish"))
        try context.save()
        let results = QueryResults(
            FetchDescriptor<AnimalCategory>(sortBy: [SortDescriptor(\.name)]), in: context)
        try await eventually { results.models.count == 1 }
        #expect(results.models.map(\.name) == ["Fish"])

        context.insert(AnimalCategory(name: "Bird"))
        try context.save()
        try await eventually { results.models.count == 2 }
        #expect(results.models.map(\.name) == ["Bird", "Fish"])

        let other = ModelContext(container)
        other.insert(AnimalCategory(name: "Mammal"))
        try other.save()
        try await eventually { results.models.count == 3 }
        #expect(results.models.map(\.name) == ["Bird", "Fish", "Mammal"])
        #expect(
            results.models.allSatisfy { $0.modelContext === context },
            "the bound context's instances")

        try await container.database.execute("DELETE FROM AnimalCategory WHERE name = 'Fish'")
        try await eventually { results.models.count == 2 }
        #expect(results.models.map(\.name) == ["Bird", "Mammal"])
        #expect(results.fetchError == nil)
    }

    @Test("a new descriptor is followed from then on; the same one again reads nothing new")
    func rebinds() async throws {
        let container = try inMemoryContainer(ZooV1.self)
        let context = container.mainContext
        for name in ["Ant", "Bee", "Cod"] { context.insert(Animal(name: name, diet: .omnivorous)) }
        try context.save()
        let results = QueryResults<Animal>()
        #expect(results.models.isEmpty)
        results.update(
            FetchDescriptor(
                predicate: #Predicate { $0.name != "Bee" }, sortBy: [SortDescriptor(\.name)]),
            in: context)
        try await eventually { results.models.count == 2 }
        #expect(results.models.map(\.name) == ["Ant", "Cod"])
        results.update(
            FetchDescriptor(sortBy: [SortDescriptor(\.name, order: .reverse)]), in: context)
        try await eventually { results.models.count == 3 }
        #expect(results.models.map(\.name) == ["Cod", "Bee", "Ant"])
    }

    @Test("a value model is an error the results keep, not a crash")
    func valueModel() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let results = QueryResults(FetchDescriptor<ExpeditionValue>(), in: container.mainContext)
        #expect(results.models.isEmpty)
        #expect(results.fetchError is TroveError)
    }
}
