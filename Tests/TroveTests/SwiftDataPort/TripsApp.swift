// A trip planner's model layer written for SwiftData, in the shape of Apple's SwiftData samples
// and WWDC sessions: models, sample data, queries and a migration plan whose custom stage fetches
// and saves. Only the import differs (`import SwiftData` → `import Trove`); SwiftDataPortTests
// runs it. Nothing here may name a Trove-only API: when this file needs a change to compile, a
// SwiftData user's code needs it too.
import Foundation
import Trove

@Model
final class Trip {
    var name: String
    var destination: String
    var startDate: Date
    var endDate: Date

    @Relationship(deleteRule: .cascade, inverse: \BucketListItem.trip)
    var bucketList: [BucketListItem] = [BucketListItem]()

    @Relationship(deleteRule: .cascade, inverse: \LivingAccommodation.trip)
    var livingAccommodation: LivingAccommodation?

    init(name: String, destination: String, startDate: Date = .now, endDate: Date = .distantFuture)
    {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
    }
}

extension Trip {
    var displayName: String { name.isEmpty ? "Untitled Trip" : name }

    var displayDestination: String { destination.isEmpty ? "Untitled Destination" : destination }

    static func reloadSampleData(modelContext: ModelContext) throws {
        try modelContext.delete(model: Trip.self)
        insertSampleData(modelContext: modelContext)
        try modelContext.save()
    }

    static func insertSampleData(modelContext: ModelContext) {
        let day: TimeInterval = 24 * 60 * 60
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let paris = Trip(
            name: "Spring in Paris", destination: "Paris", startDate: start,
            endDate: start + 6 * day)
        let kyoto = Trip(
            name: "Temples and tea", destination: "Kyoto", startDate: start + 40 * day,
            endDate: start + 50 * day)
        let lisbon = Trip(
            name: "", destination: "Lisbon", startDate: start + 90 * day, endDate: start + 94 * day)
        for trip in [paris, kyoto, lisbon] { modelContext.insert(trip) }

        let louvre = BucketListItem(
            title: "The Louvre", details: "Wednesday evening opening", hasReservation: true,
            isInPlan: true)
        let seine = BucketListItem(
            title: "A boat on the Seine", details: "", hasReservation: false, isInPlan: false)
        paris.bucketList.append(louvre)
        paris.bucketList.append(seine)
        let fushimi = BucketListItem(
            title: "Fushimi Inari at dawn", details: "", hasReservation: false, isInPlan: true)
        fushimi.trip = kyoto

        paris.livingAccommodation = LivingAccommodation(
            address: "12 rue des Écoles", placeName: "Hôtel des Écoles")
        let ryokan = LivingAccommodation(address: "Higashiyama", placeName: "Ryokan Yachiyo")
        modelContext.insert(ryokan)
        kyoto.livingAccommodation = ryokan
    }
}

@Model
final class BucketListItem {
    var title: String
    var details: String
    var hasReservation: Bool
    var isInPlan: Bool
    var trip: Trip?

    init(title: String, details: String, hasReservation: Bool, isInPlan: Bool) {
        self.title = title
        self.details = details
        self.hasReservation = hasReservation
        self.isInPlan = isInPlan
    }
}

@Model
final class LivingAccommodation {
    var address: String
    var placeName: String
    var trip: Trip?

    init(address: String, placeName: String) {
        self.address = address
        self.placeName = placeName
    }
}

/// The queries the app's views run.
enum TripQueries {
    static func upcoming(after date: Date) -> FetchDescriptor<Trip> {
        FetchDescriptor<Trip>(
            predicate: #Predicate { $0.startDate > date }, sortBy: [SortDescriptor(\.startDate)])
    }

    static func trips(to destination: String) -> FetchDescriptor<Trip> {
        var descriptor = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.destination == destination })
        descriptor.fetchLimit = 1
        return descriptor
    }

    static var plannedItems: FetchDescriptor<BucketListItem> {
        FetchDescriptor<BucketListItem>(
            predicate: #Predicate { $0.isInPlan }, sortBy: [SortDescriptor(\.title)])
    }
}

// MARK: - Versioned schemas and a migration plan

/// The first release: journeys without a rating, names not unique.
enum JourneysSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }

    @Model
    final class Journey {
        var name: String
        var destination: String

        init(name: String, destination: String) {
            self.name = name
            self.destination = destination
        }
    }
}

/// The second: names are unique, and each journey has a rating.
enum JourneysSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Journey.self] }

    @Model
    final class Journey {
        @Attribute(.unique) var name: String
        var destination: String
        var rating: Int = 0

        init(name: String, destination: String, rating: Int = 0) {
            self.name = name
            self.destination = destination
            self.rating = rating
        }
    }
}

/// WWDC23's "Model your schema with SwiftData" shape: before names become unique, the custom
/// stage removes duplicates through the old schema's context; after, it rates what is left.
enum JourneysMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] {
        [JourneysSchemaV1.self, JourneysSchemaV2.self]
    }

    static var stages: [MigrationStage] { [migrateV1toV2] }

    static let migrateV1toV2 = MigrationStage.custom(
        fromVersion: JourneysSchemaV1.self,
        toVersion: JourneysSchemaV2.self,
        willMigrate: { context in
            let journeys = try context.fetch(FetchDescriptor<JourneysSchemaV1.Journey>())
            var seen = Set<String>()
            for journey in journeys where !seen.insert(journey.name).inserted {
                context.delete(journey)
            }
            try context.save()
        },
        didMigrate: { context in
            let journeys = try context.fetch(FetchDescriptor<JourneysSchemaV2.Journey>())
            for journey in journeys { journey.rating = journey.destination.count }
            try context.save()
        }
    )
}
