import Foundation
import Testing
import Trove
import TroveTestSupport

/// A one-to-many relationship whose inverse only the child names; the trail's array has no
/// `@Relationship` (nullify, SwiftData's default). Arrays of values stay columns.
@Model final class Trail {
    var name: String
    var stops: [Waypoint] = []
    var scores: [Int] = []
    var marks: [TrailMark] = []
    init(name: String, stops: [Waypoint] = []) {
        self.name = name
        self.stops = stops
    }
}

@Model final class Waypoint {
    var name: String
    @Relationship(inverse: \Trail.stops) var trail: Trail?
    init(name: String, trail: Trail? = nil) {
        self.name = name
        self.trail = trail
    }
}

/// A value stored in a column (JSON), not a model.
struct TrailMark: Codable, Hashable {
    var colour: String
}

/// The parent marks its array with a delete rule and leaves the inverse to the child.
@Model final class Folio {
    var name: String
    @Relationship(deleteRule: .cascade) var leaves: [Leaf] = []
    init(name: String) { self.name = name }
}

@Model final class Leaf {
    var title: String
    @Relationship(inverse: \Folio.leaves) var folio: Folio?
    init(title: String) { self.title = title }
}

/// A many-to-many relationship whose other side is a bare array.
@Model final class Hike {
    var name: String
    @Relationship(inverse: \Hiker.hikes) var hikers: [Hiker] = []
    init(name: String, hikers: [Hiker] = []) {
        self.name = name
        self.hikers = hikers
    }
}

@Model final class Hiker {
    var name: String
    var hikes: [Hike] = []
    init(name: String) { self.name = name }
}

/// An optional array whose inverse only the child names.
@Model final class Ridge {
    var name: String
    var cairns: [Cairn]?
    init(name: String) { self.name = name }
}

@Model final class Cairn {
    var label: String
    @Relationship(inverse: \Ridge.cairns) var ridge: Ridge?
    init(label: String) { self.label = label }
}

/// Arrays whose inverse neither side names: ambiguous.
@Model final class Crew {
    var members: [Member] = []
    init() {}
}

@Model final class Member {
    var crew: Crew?
    init() {}
}

/// Relationships whose inverse only one side names, with SwiftData's behaviour as the oracle:
/// the other side's array needs no `@Relationship`; both sides are kept in step in memory,
/// saved once, read back from either side, with the delete rules declared.
@Suite("Relationships named on one side")
@MainActor
struct OneSidedRelationshipTests {
    private func makeContainer(_ folder: TemporaryDirectory) throws -> ModelContainer {
        try ModelContainer(
            for: Trail.self, Waypoint.self, Folio.self, Leaf.self, Hike.self, Hiker.self,
            configurations: ModelConfiguration(
                url: folder.url.appendingPathComponent("trails.trove")))
    }

    private func names(_ stops: [Waypoint]) -> [String] { stops.map(\.name).sorted() }

    @Test("a one-to-many inverse named on the child side keeps both sides in step in memory")
    func oneToManyInMemory() {
        let ridge = Trail(name: "Ridge")
        let valley = Trail(name: "Valley")
        let cairn = Waypoint(name: "Cairn")
        let hut = Waypoint(name: "Hut")
        cairn.trail = ridge
        #expect(names(ridge.stops) == ["Cairn"])
        ridge.stops.append(hut)
        #expect(hut.trail === ridge)
        hut.trail = valley
        #expect(names(ridge.stops) == ["Cairn"] && names(valley.stops) == ["Hut"])
        ridge.stops = []
        #expect(cairn.trail == nil)
        valley.stops.removeAll()
        #expect(hut.trail == nil)
    }

    @Test("the child's reference is a foreign key, the array has no column, value arrays do")
    func columns() async throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        let keys = try await container.database.query(
            "SELECT \"table\", \"from\", on_delete FROM pragma_foreign_key_list('Waypoint')")
        #expect(
            keys.map {
                "\($0[0, as: String.self] ?? "") \($0[1, as: String.self] ?? "") \($0[2, as: String.self] ?? "")"
            } == ["Trail trail SET NULL"])
        let leafKeys = try await container.database.query(
            "SELECT on_delete FROM pragma_foreign_key_list('Leaf')")
        #expect(leafKeys.map { $0[0, as: String.self] } == ["CASCADE"])
        // Trove's own columns start with an underscore.
        let columns = try await container.database.query(
            "SELECT name FROM pragma_table_info('Trail') WHERE name NOT LIKE '\\_%' ESCAPE '\\'"
        ).compactMap { $0[0, as: String.self] }
        #expect(Set(columns) == ["id", "name", "scores", "marks"])
        let hikerColumns = try await container.database.query(
            "SELECT name FROM pragma_table_info('Hiker') WHERE name NOT LIKE '\\_%' ESCAPE '\\'"
        ).compactMap { $0[0, as: String.self] }
        #expect(Set(hikerColumns) == ["id", "name"])
    }

    @Test("children saved from either side are read back from both sides in a fresh context")
    func oneToManySavedAndReadBack() throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        let context = ModelContext(container)
        // Set in the initializer: no setter ran, the children learn their trail on insert.
        let ridge = Trail(name: "Ridge", stops: [Waypoint(name: "Cairn"), Waypoint(name: "Hut")])
        ridge.scores = [3, 5]
        ridge.marks = [TrailMark(colour: "red")]
        context.insert(ridge)
        #expect(ridge.stops.allSatisfy { $0.trail === ridge && $0.modelContext === context })
        context.insert(Waypoint(name: "Lake", trail: Trail(name: "Valley")))
        try context.save()

        let fresh = ModelContext(container)
        let trails = try fresh.fetch(FetchDescriptor<Trail>(sortBy: [SortDescriptor(\.name)]))
        #expect(trails.map { names($0.stops) } == [["Cairn", "Hut"], ["Lake"]])
        #expect(trails[0].scores == [3, 5] && trails[0].marks == [TrailMark(colour: "red")])
        let lake = try #require(
            try fresh.fetch(FetchDescriptor<Waypoint>(predicate: #Predicate { $0.name == "Lake" }))
                .first)
        #expect(lake.trail === trails[1], "one instance per row")

        // Moving a child from the parent's side is saved as the child's reference.
        trails[0].stops.append(lake)
        #expect(names(trails[1].stops).isEmpty)
        try fresh.save()
        let third = ModelContext(container)
        let valley = try #require(
            try third.fetch(FetchDescriptor<Trail>(predicate: #Predicate { $0.name == "Valley" }))
                .first)
        #expect(valley.stops.isEmpty)
        let ridge3 = try #require(
            try third.fetch(FetchDescriptor<Trail>(predicate: #Predicate { $0.name == "Ridge" }))
                .first)
        #expect(names(ridge3.stops) == ["Cairn", "Hut", "Lake"])
    }

    @Test("delete rules declared on the array apply: cascade deletes, the default nullifies")
    func oneToManyDeleteRules() throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        let context = ModelContext(container)
        let folio = Folio(name: "Taxes")
        folio.leaves = [Leaf(title: "2025"), Leaf(title: "2026")]
        let ridge = Trail(name: "Ridge")
        ridge.stops = [Waypoint(name: "Cairn")]
        context.insert(folio)
        context.insert(ridge)
        context.insert(Leaf(title: "Loose"))
        try context.save()

        let fresh = ModelContext(container)
        let stored = try #require(try fresh.fetch(FetchDescriptor<Folio>()).first)
        #expect(stored.leaves.map(\.title).sorted() == ["2025", "2026"])
        fresh.delete(stored)
        let trail = try #require(try fresh.fetch(FetchDescriptor<Trail>()).first)
        fresh.delete(trail)
        try fresh.save()
        #expect(try fresh.fetch(FetchDescriptor<Leaf>()).map(\.title) == ["Loose"])
        let cairn = try #require(try fresh.fetch(FetchDescriptor<Waypoint>()).first)
        #expect(cairn.trail == nil)
    }

    @Test("a bare many-to-many side keeps both sides in step and saves one link per pair")
    func bareManyToMany() throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        let ada = Hiker(name: "Ada")
        let bo = Hiker(name: "Bo")
        let ridge = Hike(name: "Ridge")
        ada.hikes.append(ridge)
        #expect(ridge.hikers.map(\.name) == ["Ada"])
        ridge.hikers.append(bo)
        #expect(bo.hikes.map(\.name) == ["Ridge"])
        let context = ModelContext(container)
        context.insert(ridge)
        #expect(ada.modelContext === context && bo.modelContext === context)
        let lake = Hike(name: "Lake")
        context.insert(lake)
        bo.hikes.append(lake)
        try context.save()

        let fresh = ModelContext(container)
        let hikers = try fresh.fetch(FetchDescriptor<Hiker>(sortBy: [SortDescriptor(\.name)]))
        #expect(hikers.map { $0.hikes.map(\.name).sorted() } == [["Ridge"], ["Lake", "Ridge"]])
        let hikes = try fresh.fetch(FetchDescriptor<Hike>(sortBy: [SortDescriptor(\.name)]))
        #expect(hikes.map { $0.hikers.map(\.name).sorted() } == [["Bo"], ["Ada", "Bo"]])
        hikers[1].hikes.removeAll { $0 === hikes[0] }
        #expect(hikes[0].hikers.isEmpty)
        try fresh.save()
        let third = ModelContext(container)
        let lake3 = try #require(
            try third.fetch(FetchDescriptor<Hike>(predicate: #Predicate { $0.name == "Lake" }))
                .first)
        #expect(lake3.hikers.isEmpty)
    }

    @Test("an optional array whose inverse the child names works as a plain one")
    func optionalArray() throws {
        let folder = try TemporaryDirectory()
        let container = try ModelContainer(
            for: Ridge.self, Cairn.self,
            configurations: ModelConfiguration(
                url: folder.url.appendingPathComponent("ridges.trove")))
        let context = ModelContext(container)
        let ridge = Ridge(name: "North")
        let top = Cairn(label: "Top")
        context.insert(ridge)
        top.ridge = ridge
        #expect(ridge.cairns?.map(\.label) == ["Top"])
        ridge.cairns?.append(Cairn(label: "Col"))
        #expect(
            ridge.cairns?.allSatisfy { $0.ridge === ridge && $0.modelContext === context } == true)
        try context.save()
        let fresh = ModelContext(container)
        let stored = try #require(try fresh.fetch(FetchDescriptor<Ridge>()).first)
        #expect(stored.cairns?.map(\.label).sorted() == ["Col", "Top"])
        stored.cairns = nil
        try fresh.save()
        let third = ModelContext(container)
        #expect(try third.fetch(FetchDescriptor<Cairn>()).allSatisfy { $0.ridge == nil })
    }

    @Test("arrays whose inverse neither side names are a typed error when the container opens")
    func ambiguous() throws {
        let folder = try TemporaryDirectory()
        #expect {
            try ModelContainer(
                for: Crew.self, Member.self,
                configurations: ModelConfiguration(
                    url: folder.url.appendingPathComponent("crew.trove")))
        } throws: { error in
            guard case TroveError.invalidModel(let type, let reason) = error else { return false }
            return type == "Crew" && reason.contains("Crew.members has no inverse")
        }
    }
}
