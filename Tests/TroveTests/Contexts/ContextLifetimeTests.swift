import Foundation
import Testing
import Trove
import TroveTestSupport

/// How long a context and its models live: a model keeps reading its relationships after the
/// context that fetched it is gone (SwiftData: a model keeps working while it is used), and a
/// context and its models are freed once nobody holds them (no cycle between them).
@Suite("Context lifetime")
@MainActor
struct ContextLifetimeTests {
    private func makeContainer(_ folder: TemporaryDirectory) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Trail.self, Waypoint.self, Hike.self, Hiker.self,
            configurations: ModelConfiguration(
                url: folder.url.appendingPathComponent("lifetime.trove")))
        let context = ModelContext(container)
        let ada = Hiker(name: "Ada")
        context.insert(Hike(name: "Ridge", hikers: [ada, Hiker(name: "Bo")]))
        context.insert(Hike(name: "Lake", hikers: [ada]))
        context.insert(
            Trail(name: "Coast", stops: [Waypoint(name: "Cove"), Waypoint(name: "Pier")]))
        try context.save()
        return container
    }

    @Test("models fetched through a context made for the fetch still read their relationships")
    func temporaryContext() throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        let hikes = try ModelContext(container).fetch(
            FetchDescriptor<Hike>(sortBy: [SortDescriptor(\.name)]))
        #expect(hikes.map { $0.hikers.map(\.name).sorted() } == [["Ada"], ["Ada", "Bo"]])
        let ada = try #require(hikes[1].hikers.first { $0.name == "Ada" })
        #expect(ada.hikes.map(\.name).sorted() == ["Lake", "Ridge"])
        #expect(ada.hikes.contains { $0 === hikes[1] }, "one instance per row while it lives")

        let stops = try ModelContext(container).fetch(
            FetchDescriptor<Waypoint>(sortBy: [SortDescriptor(\.name)]))
        let coast = try #require(stops[0].trail)
        #expect(coast.name == "Coast")
        #expect(coast.stops.map(\.name).sorted() == ["Cove", "Pier"])
        #expect(coast.stops.contains { $0 === stops[0] })
        #expect(stops[0].modelContext == nil, "nothing tracks it once its context is gone")
    }

    @Test("a context and its models are freed when nobody holds them, unsaved changes and all")
    func noCycle() throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        weak var context: ModelContext?
        weak var hike: Hike?
        weak var hiker: Hiker?
        weak var inserted: Hike?
        do {
            let made = ModelContext(container)
            let hikes = try made.fetch(FetchDescriptor<Hike>(sortBy: [SortDescriptor(\.name)]))
            hiker = hikes[1].hikers.first
            hikes[0].name = "Lake (edited)"
            let new = Hike(name: "Unsaved")
            made.insert(new)
            (context, hike, inserted) = (made, hikes[0], new)
            #expect(context != nil && hike != nil && hiker != nil && inserted != nil)
        }
        #expect(context == nil)
        #expect(hike == nil && hiker == nil && inserted == nil)
        let names = try ModelContext(container).fetch(FetchDescriptor<Hike>()).map(\.name)
        #expect(names.sorted() == ["Lake", "Ridge"], "unsaved changes went with the context")
    }

    @Test("models that outlive their context are freed when the app lets go of them")
    func modelsOutliveContext() throws {
        let folder = try TemporaryDirectory()
        let container = try makeContainer(folder)
        weak var hike: Hike?
        weak var hiker: Hiker?
        weak var stop: Waypoint?
        do {
            let hikes = try ModelContext(container).fetch(
                FetchDescriptor<Hike>(sortBy: [SortDescriptor(\.name)]))
            hike = hikes[1]
            hiker = hikes[1].hikers.first
            let stops = try ModelContext(container).fetch(FetchDescriptor<Waypoint>())
            stop = stops.first
            #expect(stops.first?.trail?.name == "Coast")
            #expect(hike != nil && hiker != nil && stop != nil)
        }
        #expect(hike == nil && hiker == nil && stop == nil)
    }
}
