import Foundation
import Testing
import Trove
import TroveTestSupport

/// TripsApp.swift, a model layer written for SwiftData, run against Trove with SwiftData's
/// documented behaviour as the oracle: inverses kept in step, cascades, unique upserts, and a
/// migration whose custom stage fetches and saves through the old and the new schema.
@Suite("A SwiftData app with only the import changed")
@MainActor
struct SwiftDataPortTests {
    let directory: TemporaryDirectory
    let container: ModelContainer

    init() throws {
        directory = try TemporaryDirectory()
        container = try ModelContainer(
            for: Trip.self, BucketListItem.self, LivingAccommodation.self,
            configurations: ModelConfiguration(
                url: URL(fileURLWithPath: directory.path("trips.store"))))
    }

    @Test("sample data: both sides of every relationship agree, in memory and after a fetch")
    func sampleData() throws {
        let context = container.mainContext
        try Trip.reloadSampleData(modelContext: context)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 3)
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 3)
        #expect(try context.fetchCount(FetchDescriptor<LivingAccommodation>()) == 2)

        // A second context reads what the first saved: relationships resolve from the file.
        let reader = ModelContext(container)
        let paris = try #require(reader.fetch(TripQueries.trips(to: "Paris")).first)
        #expect(Set(paris.bucketList.map(\.title)) == ["The Louvre", "A boat on the Seine"])
        #expect(paris.bucketList.allSatisfy { $0.trip === paris })
        #expect(paris.livingAccommodation?.placeName == "Hôtel des Écoles")
        #expect(paris.livingAccommodation?.trip === paris)
        let kyoto = try #require(reader.fetch(TripQueries.trips(to: "Kyoto")).first)
        #expect(kyoto.bucketList.map(\.title) == ["Fushimi Inari at dawn"])
        #expect(kyoto.livingAccommodation?.placeName == "Ryokan Yachiyo")
        let lisbon = try #require(reader.fetch(TripQueries.trips(to: "Lisbon")).first)
        #expect(lisbon.displayName == "Untitled Trip")
        #expect(lisbon.bucketList.isEmpty && lisbon.livingAccommodation == nil)

        let planned = try reader.fetch(TripQueries.plannedItems)
        #expect(planned.map(\.title) == ["Fushimi Inari at dawn", "The Louvre"])
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        #expect(
            try reader.fetch(TripQueries.upcoming(after: start)).map(\.destination) == [
                "Kyoto", "Lisbon",
            ])

        // Reloading replaces everything: the cascades take items and accommodations along.
        try Trip.reloadSampleData(modelContext: context)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 3)
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 3)
        #expect(try context.fetchCount(FetchDescriptor<LivingAccommodation>()) == 2)
    }

    @Test("moving an item to another trip updates both trips' lists; deleting a trip cascades")
    func editing() throws {
        let context = container.mainContext
        try Trip.reloadSampleData(modelContext: context)
        let paris = try #require(context.fetch(TripQueries.trips(to: "Paris")).first)
        let kyoto = try #require(context.fetch(TripQueries.trips(to: "Kyoto")).first)
        let seine = try #require(paris.bucketList.first { $0.title == "A boat on the Seine" })

        seine.trip = kyoto
        #expect(paris.bucketList.map(\.title) == ["The Louvre"])
        #expect(
            Set(kyoto.bucketList.map(\.title)) == ["Fushimi Inari at dawn", "A boat on the Seine"])
        #expect(context.hasChanges)
        try context.save()
        #expect(!context.hasChanges)

        let reader = ModelContext(container)
        let kyotoAgain = try #require(reader.fetch(TripQueries.trips(to: "Kyoto")).first)
        #expect(kyotoAgain.bucketList.count == 2)

        context.delete(kyoto)
        try context.save()
        let items = try ModelContext(container).fetch(FetchDescriptor<BucketListItem>())
        #expect(items.map(\.title) == ["The Louvre"])
        let stays = try ModelContext(container).fetch(FetchDescriptor<LivingAccommodation>())
        #expect(stays.map(\.placeName) == ["Hôtel des Écoles"])
    }

    @Test("a one-to-one relationship: both sides in step, in memory and in the file")
    func oneToOne() throws {
        let context = container.mainContext
        try Trip.reloadSampleData(modelContext: context)
        let paris = try #require(context.fetch(TripQueries.trips(to: "Paris")).first)
        let lisbon = try #require(context.fetch(TripQueries.trips(to: "Lisbon")).first)
        let hotel = try #require(paris.livingAccommodation)
        #expect(hotel.trip === paris)

        // Set from the side without the mark: the trip names it, the trip it left does not.
        hotel.trip = lisbon
        #expect(lisbon.livingAccommodation === hotel && paris.livingAccommodation == nil)
        let flat = LivingAccommodation(address: "Alfama", placeName: "A flat")
        lisbon.livingAccommodation = flat
        #expect(flat.trip === lisbon && hotel.trip == nil)
        try context.save()
        do {
            let reader = ModelContext(container)
            let lisbon = try #require(reader.fetch(TripQueries.trips(to: "Lisbon")).first)
            #expect(lisbon.livingAccommodation?.placeName == "A flat")
            #expect(lisbon.livingAccommodation?.trip === lisbon)
            let paris = try #require(reader.fetch(TripQueries.trips(to: "Paris")).first)
            #expect(paris.livingAccommodation == nil)
            let stays = try reader.fetch(
                FetchDescriptor<LivingAccommodation>(sortBy: [SortDescriptor(\.placeName)]))
            #expect(
                stays.map { "\($0.placeName): \($0.trip?.destination ?? "-")" } == [
                    "A flat: Lisbon", "Hôtel des Écoles: -", "Ryokan Yachiyo: Kyoto",
                ])
        }

        // Deleting the accommodation clears the trip's side; deleting a trip cascades.
        context.delete(flat)
        try context.save()
        #expect(lisbon.livingAccommodation == nil)
        let kyoto = try #require(context.fetch(TripQueries.trips(to: "Kyoto")).first)
        context.delete(kyoto)
        try context.save()
        let reader = ModelContext(container)
        #expect(try reader.fetch(TripQueries.trips(to: "Lisbon")).first?.livingAccommodation == nil)
        #expect(
            try reader.fetch(FetchDescriptor<LivingAccommodation>()).map(\.placeName) == [
                "Hôtel des Écoles"
            ])
    }

    @Test("rollback restores what the last save left, relationships included")
    func rollback() throws {
        let context = container.mainContext
        try Trip.reloadSampleData(modelContext: context)
        let paris = try #require(context.fetch(TripQueries.trips(to: "Paris")).first)
        paris.name = "Summer in Paris"
        let extra = BucketListItem(
            title: "Sainte-Chapelle", details: "", hasReservation: false, isInPlan: false)
        paris.bucketList.append(extra)
        context.rollback()
        #expect(paris.name == "Spring in Paris")
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 3)
        #expect(!context.hasChanges)
    }

    @Test("the migration plan's custom stage removes duplicates, then rates what is left")
    func migration() throws {
        let path = directory.path("journeys.store")
        do {
            let old = try ModelContainer(
                for: Schema(versionedSchema: JourneysSchemaV1.self),
                configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
            let context = ModelContext(old)
            for (name, destination) in [
                ("Alps", "Chamonix"), ("Coast", "Porto"), ("Alps", "Zermatt"), ("Coast", "Nice"),
                ("City", "Vienna"),
            ] {
                context.insert(JourneysSchemaV1.Journey(name: name, destination: destination))
            }
            try context.save()
        }
        let container = try ModelContainer(
            for: Schema(versionedSchema: JourneysSchemaV2.self),
            migrationPlan: JourneysMigrationPlan.self,
            configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        let journeys = try context.fetch(
            FetchDescriptor<JourneysSchemaV2.Journey>(sortBy: [SortDescriptor(\.name)]))
        #expect(journeys.map(\.name) == ["Alps", "City", "Coast"])
        #expect(journeys.map(\.rating) == journeys.map(\.destination.count))

        // Names are unique now: inserting an existing name updates that journey.
        context.insert(JourneysSchemaV2.Journey(name: "City", destination: "Prague", rating: 5))
        try context.save()
        let city = try ModelContext(container).fetch(
            FetchDescriptor<JourneysSchemaV2.Journey>(predicate: #Predicate { $0.name == "City" }))
        #expect(city.map(\.destination) == ["Prague"])
    }
}
