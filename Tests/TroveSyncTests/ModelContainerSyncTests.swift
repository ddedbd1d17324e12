import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveSync

/// A trail and its landmarks: a to-many relationship that cascades, its to-one inverse (a
/// foreign key in `Landmark`, which names the inverse), a unique name, implicit (time-ordered
/// UUID) ids. `Landmark` sorts before `Trail`, so a change set carries the children before their
/// parent.
@Model final class Trail {
    @Attribute(.unique) var name: String
    @Relationship(deleteRule: .cascade) var landmarks = [Landmark]()

    init(name: String) { self.name = name }
}

@Model final class Landmark {
    var name: String
    var elevation: Int
    @Relationship(inverse: \Trail.landmarks) var trail: Trail?

    init(name: String, elevation: Int, trail: Trail? = nil) {
        self.name = name
        self.elevation = elevation
        self.trail = trail
    }
}

/// Hikes and hikers: a many-to-many relationship (links in the edge table, which sync with
/// the collections); the hikes' side is a bare array.
@Model final class Hike {
    var name: String
    var hikers = [Hiker]()

    init(name: String) { self.name = name }
}

@Model final class Hiker {
    var name: String
    @Relationship(inverse: \Hike.hikers) var hikes = [Hike]()

    init(name: String) { self.name = name }
}

enum HikesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Hike.self, Hiker.self]
}

enum TrailsV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Trail.self, Landmark.self]
}

/// `@Model` containers on two devices syncing through the real PostgreSQL server: the model
/// collections are ordinary synced collections named after their classes, and relationships
/// resolve on arrival.
@Suite @MainActor struct ModelContainerSyncTests {
    /// One device: a container in its own file, its database a member of `space`.
    private struct ModelDevice {
        let container: ModelContainer
        let sync: SyncSpace

        func round() async throws {
            try await sync.push()
            try await sync.pull()
        }
    }

    private func device(
        _ name: String, in directory: TemporaryDirectory, transport: PostgresTransport,
        key: SyncKey, space: String,
        schema: any VersionedSchema.Type = TrailsV1.self
    ) async throws -> ModelDevice {
        let container = try ModelContainer(
            for: Schema(versionedSchema: schema),
            configurations: ModelConfiguration(
                url: URL(fileURLWithPath: directory.path("\(name).trove"))))
        let sync = try await SyncSpace(
            database: container.database, space: space, key: key, transport: transport,
            collections: schema.models.map { ($0 as! any _ReferenceModel.Type).collectionName })
        return ModelDevice(container: container, sync: sync)
    }

    /// Every trail with its landmarks, as "trail: [landmark@elevation, ...]", sorted; read
    /// through a new context.
    private func summary(_ container: ModelContainer) throws -> [String] {
        let context = ModelContext(container)
        return try context.fetch(FetchDescriptor<Trail>(sortBy: [SortDescriptor(\.name)])).map {
            trail in
            "\(trail.name): \(trail.landmarks.map { "\($0.name)@\($0.elevation)" }.sorted())"
        }
    }

    @Test func relationshipsResolveOnArrivalAndEditsSyncBack() async throws {
        let directory = try TemporaryDirectory()
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<2).map { _ in try PostgresTransport(url: role.url) }
        defer { transports.forEach { $0.close() } }
        let space = SyncServerFixture.newSpaceName()
        let key = try SyncKey.random()
        try await transports[0].createSpace(space)
        let a = try await device(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await device(
            "b", in: directory, transport: transports[1], key: key, space: space)

        // A: two trails with their landmarks, inserted through the relationship.
        let contextA = ModelContext(a.container)
        let coast = Trail(name: "Coast")
        coast.landmarks = [
            Landmark(name: "Lighthouse", elevation: 12), Landmark(name: "Cove", elevation: 3),
            Landmark(name: "Bluff", elevation: 80),
        ]
        let summit = Trail(name: "Summit")
        summit.landmarks = [
            Landmark(name: "Saddle", elevation: 2100), Landmark(name: "Peak", elevation: 2450),
        ]
        contextA.insert(coast)
        contextA.insert(summit)
        try contextA.save()
        let coastID = coast.id
        let bluffID = try #require(coast.landmarks.first { $0.name == "Bluff" }).id

        try await a.round()
        try await b.round()

        // B, a fresh context: every child's trail is the fetched trail instance, every trail
        // holds its children, ids are the ones A made.
        do {
            let context = ModelContext(b.container)
            let trails = try context.fetch(FetchDescriptor<Trail>(sortBy: [SortDescriptor(\.name)]))
            #expect(trails.map(\.name) == ["Coast", "Summit"])
            let landmarks = try context.fetch(
                FetchDescriptor<Landmark>(sortBy: [SortDescriptor(\.elevation)]))
            #expect(landmarks.map(\.name) == ["Cove", "Lighthouse", "Bluff", "Saddle", "Peak"])
            let byName = Dictionary(uniqueKeysWithValues: trails.map { ($0.name, $0) })
            let coastB = try #require(byName["Coast"])
            let summitB = try #require(byName["Summit"])
            #expect(coastB.id == coastID)
            for landmark in landmarks {
                let expected = landmark.elevation < 1000 ? coastB : summitB
                #expect(
                    landmark.trail === expected, "\(landmark.name)'s trail is the fetched instance")
            }
            #expect(Set(coastB.landmarks.map(\.name)) == ["Lighthouse", "Cove", "Bluff"])
            #expect(Set(summitB.landmarks.map(\.name)) == ["Saddle", "Peak"])
            #expect(
                coastB.landmarks.allSatisfy { child in landmarks.contains { $0 === child } },
                "the identity map's instances")
            #expect(landmarks.first { $0.name == "Bluff" }?.id == bluffID)
        }
        #expect(try summary(b.container) == summary(a.container))

        // B: moves Bluff to a new trail through the relationship, deletes Summit (its landmarks
        // cascade), and saves; then both sync.
        do {
            let context = ModelContext(b.container)
            let trails = try context.fetch(FetchDescriptor<Trail>())
            let coastB = try #require(trails.first { $0.name == "Coast" })
            let summitB = try #require(trails.first { $0.name == "Summit" })
            let bluff = try #require(coastB.landmarks.first { $0.name == "Bluff" })
            let ridge = Trail(name: "Ridge")
            context.insert(ridge)
            bluff.trail = ridge
            #expect(coastB.landmarks.map(\.name).sorted() == ["Cove", "Lighthouse"])
            context.delete(summitB)
            try context.save()
        }
        let expected = ["Coast: [\"Cove@3\", \"Lighthouse@12\"]", "Ridge: [\"Bluff@80\"]"]
        #expect(try summary(b.container) == expected)

        try await b.round()
        try await a.round()

        // A, a new context: the same trails, Bluff (same id) under Ridge, Summit's landmarks gone.
        #expect(try summary(a.container) == expected)
        let context = ModelContext(a.container)
        let landmarks = try context.fetch(
            FetchDescriptor<Landmark>(sortBy: [SortDescriptor(\.elevation)]))
        #expect(landmarks.map(\.name) == ["Cove", "Lighthouse", "Bluff"])
        let bluff = try #require(landmarks.last)
        #expect(bluff.id == bluffID && bluff.trail?.name == "Ridge")
        #expect(bluff.trail?.landmarks.contains { $0 === bluff } == true)
        #expect(
            try context.fetch(FetchDescriptor<Trail>(predicate: #Predicate { $0.name == "Summit" }))
                .isEmpty)
        #expect(
            try await canonicalDump(of: a.container.database)
                == canonicalDump(of: b.container.database))
        let statusA = await a.sync.status
        let statusB = await b.sync.status
        #expect(statusA.pendingChanges == 0 && statusB.pendingChanges == 0)
    }
}

extension ModelContainerSyncTests {
    /// A concurrent delete of a trail and a new landmark of it: the merge keeps both (a record's
    /// life and a field are merged separately), so the landmark names a trail that is gone. Each
    /// device settles it as the trail's cascade would: the landmark goes, and every pull goes on.
    @Test func aChildAddedToATrailDeletedConcurrently() async throws {
        let directory = try TemporaryDirectory()
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<2).map { _ in try PostgresTransport(url: role.url) }
        defer { transports.forEach { $0.close() } }
        let space = SyncServerFixture.newSpaceName()
        let key = try SyncKey.random()
        try await transports[0].createSpace(space)
        let a = try await device(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await device(
            "b", in: directory, transport: transports[1], key: key, space: space)
        do {
            let context = ModelContext(a.container)
            let coast = Trail(name: "Coast")
            coast.landmarks = [Landmark(name: "Cove", elevation: 3)]
            context.insert(coast)
            context.insert(Trail(name: "Ridge"))
            try context.save()
        }
        try await a.round()
        try await b.round()
        do {
            let context = ModelContext(a.container)
            let coast = try #require(
                try context.fetch(
                    FetchDescriptor<Trail>(predicate: #Predicate { $0.name == "Coast" })
                )
                .first)
            context.delete(coast)
            try context.save()
        }
        do {
            let context = ModelContext(b.container)
            let trails = try context.fetch(FetchDescriptor<Trail>(sortBy: [SortDescriptor(\.name)]))
            trails[0].landmarks.append(Landmark(name: "Tidepool", elevation: 1))
            trails[1].landmarks.append(Landmark(name: "Saddle", elevation: 900))
            try context.save()
        }
        for device in [a, b, a] { try await device.round() }
        // A change made after the settling still arrives.
        do {
            let context = ModelContext(b.container)
            context.insert(Trail(name: "Estuary"))
            try context.save()
        }
        try await b.round()
        try await a.round()
        for container in [a.container, b.container] {
            #expect(try summary(container) == ["Estuary: []", "Ridge: [\"Saddle@900\"]"])
        }
        #expect(
            try await canonicalDump(of: a.container.database)
                == canonicalDump(of: b.container.database))
    }
}

extension ModelContainerSyncTests {
    /// Two devices insert a trail of the same `@Attribute(.unique)` name while apart: two
    /// records (time-ordered UUIDs differ), one unique index. Every device keeps the older
    /// trail, sets the newer one aside with its landmarks (the trail's cascade), and reports it
    /// as a conflict; pulls go on.
    @Test func theSameUniqueNameOnTwoDevices() async throws {
        let directory = try TemporaryDirectory()
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<3).map { _ in try PostgresTransport(url: role.url) }
        defer { transports.forEach { $0.close() } }
        let space = SyncServerFixture.newSpaceName()
        let key = try SyncKey.random()
        try await transports[0].createSpace(space)
        let a = try await device(
            "a", in: directory, transport: transports[0], key: key, space: space)
        let b = try await device(
            "b", in: directory, transport: transports[1], key: key, space: space)
        for (device, landmark) in [(a, "Cove"), (b, "Tidepool")] {
            let context = ModelContext(device.container)
            let trail = Trail(name: "Coast")
            trail.landmarks = [Landmark(name: landmark, elevation: 1)]
            context.insert(trail)
            try context.save()
        }
        // B's trail pushed first, A's second: the older (A's) is kept all the same.
        try await b.round()
        try await a.round()
        try await b.round()
        try await a.round()
        let c = try await device(
            "c", in: directory, transport: transports[2], key: key, space: space)
        try await c.round()
        for device in [a, b, c] {
            #expect(try summary(device.container) == ["Coast: [\"Cove@1\"]"])
        }
        let expected = try await canonicalDump(of: a.container.database)
        #expect(try await canonicalDump(of: b.container.database) == expected)
        #expect(try await canonicalDump(of: c.container.database) == expected)
        for device in [a, b] {
            let conflicts = try await device.sync.conflicts()
            #expect(conflicts.map(\.field) == ["name"], "\(conflicts)")
            #expect(conflicts.map(\.losingValue) == [.text("Coast")])
        }
        // The name freed, a new trail may take it.
        do {
            let context = ModelContext(b.container)
            context.delete(try #require(try context.fetch(FetchDescriptor<Trail>()).first))
            context.insert(Trail(name: "Coast"))
            try context.save()
        }
        for device in [b, a, c] { try await device.round() }
        for device in [a, b, c] {
            #expect(try summary(device.container) == ["Coast: []"])
        }
    }
}

extension ModelContainerSyncTests {
    /// Each hike with its hikers and each hiker with their hikes, read through a new context.
    private func pairs(_ container: ModelContainer) throws -> (
        fromHikes: Set<String>, fromHikers: Set<String>
    ) {
        // A context per side, so neither side's array was read by the other's.
        let (hikeContext, hikerContext) = (ModelContext(container), ModelContext(container))
        var fromHikes: Set<String> = []
        for hike in try hikeContext.fetch(FetchDescriptor<Hike>()) {
            for hiker in hike.hikers { fromHikes.insert("\(hike.name)/\(hiker.name)") }
        }
        var fromHikers: Set<String> = []
        for hiker in try hikerContext.fetch(FetchDescriptor<Hiker>()) {
            for hike in hiker.hikes { fromHikers.insert("\(hike.name)/\(hiker.name)") }
        }
        return (fromHikes, fromHikers)
    }

    @Test func manyToManyLinksSyncAndResolveOnBothSides() async throws {
        let directory = try TemporaryDirectory()
        let role = try SyncServerFixture.newDevice()
        let transports = try (0..<2).map { _ in try PostgresTransport(url: role.url) }
        defer { transports.forEach { $0.close() } }
        let space = SyncServerFixture.newSpaceName()
        let key = try SyncKey.random()
        try await transports[0].createSpace(space)
        let a = try await device(
            "a", in: directory, transport: transports[0], key: key, space: space,
            schema: HikesV1.self)
        let b = try await device(
            "b", in: directory, transport: transports[1], key: key, space: space,
            schema: HikesV1.self)

        do {
            let context = ModelContext(a.container)
            let (ridge, lake) = (Hike(name: "Ridge"), Hike(name: "Lake"))
            let (ada, bo, cy) = (Hiker(name: "Ada"), Hiker(name: "Bo"), Hiker(name: "Cy"))
            ada.hikes = [ridge, lake]
            bo.hikes = [ridge]
            lake.hikers.append(cy)
            for hiker in [ada, bo, cy] { context.insert(hiker) }
            try context.save()
        }
        let first: Set = ["Ridge/Ada", "Lake/Ada", "Ridge/Bo", "Lake/Cy"]
        #expect(try pairs(a.container) == (first, first))
        try await a.round()
        try await b.round()
        #expect(try pairs(b.container) == (first, first), "both sides resolve on arrival")

        // B: Ada leaves the lake (from the hike's side), Bo joins it (from the hiker's side),
        // Cy is deleted (the links go with the record).
        do {
            let context = ModelContext(b.container)
            let hikes = try context.fetch(FetchDescriptor<Hike>())
            let hikers = try context.fetch(FetchDescriptor<Hiker>())
            let lake = try #require(hikes.first { $0.name == "Lake" })
            lake.hikers.removeAll { $0.name == "Ada" }
            try #require(hikers.first { $0.name == "Bo" }).hikes.append(lake)
            context.delete(try #require(hikers.first { $0.name == "Cy" }))
            try context.save()
        }
        let second: Set = ["Ridge/Ada", "Ridge/Bo", "Lake/Bo"]
        #expect(try pairs(b.container) == (second, second))
        try await b.round()
        try await a.round()
        #expect(try pairs(a.container) == (second, second))
        #expect(
            try await canonicalDump(of: a.container.database)
                == canonicalDump(of: b.container.database))
    }
}
