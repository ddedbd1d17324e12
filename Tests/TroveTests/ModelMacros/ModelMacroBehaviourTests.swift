import Foundation
import Observation
import Testing
import Trove
import TroveTestSupport

/// What `@Model` classes do through a container and its context: SwiftData's documented
/// behaviour is the oracle (implicit identity, observation, transient properties, indexes,
/// unique attributes, renames in a lightweight migration).
@Suite("@Model classes")
@MainActor
struct ModelMacroBehaviourTests {
    @Test("every column kind round-trips through a save and a fetch in a new container")
    func roundTrip() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("trips.trove")
        let guide = UUID()
        do {
            let container = try openContainer(ExpeditionsV1.self, at: path)
            let context = container.mainContext
            let trip = Expedition(
                name: "Hoggar", members: 4, distance: 812.5, isPublic: true,
                startDate: Date(timeIntervalSince1970: 1_700_000_000),
                photo: Data([1, 2, 3]), guide: guide, notes: "dry", status: .underway,
                budget: .init(amount: 1200, currency: "DZD"),
                tags: ["desert", "4x4"])
            trip.isSelected = true
            context.insert(trip)
            try context.save()
        }
        let container = try openContainer(ExpeditionsV1.self, at: path)
        let context = container.mainContext
        let trips = try context.fetch(FetchDescriptor<Expedition>())
        #expect(trips.count == 1)
        let trip = try #require(trips.first)
        #expect(trip.name == "Hoggar")
        #expect(trip.members == 4 && trip.distance == 812.5 && trip.isPublic)
        #expect(trip.startDate == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(trip.photo == Data([1, 2, 3]) && trip.guide == guide && trip.notes == "dry")
        #expect(trip.status == .underway && trip.budget == .init(amount: 1200, currency: "DZD"))
        #expect(trip.tags == ["desert", "4x4"])
        #expect(!trip.isSelected, "a transient property starts from its default in a fetched model")
    }

    @Test("a class without an id gets a time-ordered UUID on insert, distinct for each model")
    func implicitIdentity() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let context = container.mainContext
        let trips = (0..<50).map { Expedition(name: "trip \($0)") }
        #expect(trips.allSatisfy { $0.id == .unassigned })
        for trip in trips { context.insert(trip) }
        let ids = trips.map(\.id)
        #expect(!ids.contains(.unassigned))
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { $0.uuidString.dropFirst(14).first == "7" }, "UUIDv7")
        #expect(
            ids.map(\.uuidString) == ids.map(\.uuidString).sorted(),
            "time-ordered in insertion order")
        try context.save()
        let fetched = try context.fetch(
            FetchDescriptor<Expedition>(sortBy: [SortDescriptor(\.name)]))
        #expect(Set(fetched.map(\.id)) == Set(ids))
    }

    @Test("a class that declares its id keeps it")
    func declaredIdentity() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let context = container.mainContext
        context.insert(Ledger(id: 42, title: "Accounts"))
        try context.save()
        let ledgers = try context.fetch(
            FetchDescriptor<Ledger>(predicate: #Predicate { $0.id == 42 }))
        #expect(ledgers.map(\.title) == ["Accounts"])
    }

    @Test(
        "setting a property notifies observers, as an @Observable class's does; a transient one too"
    )
    func observation() async throws {
        let trip = Expedition(name: "Atlas")
        let changes = Counter()
        withObservationTracking {
            _ = trip.name
        } onChange: {
            changes.add()
        }
        trip.name = "High Atlas"
        #expect(changes.value == 1)
        #expect(trip.name == "High Atlas")
        let unrelated = Counter()
        withObservationTracking {
            _ = trip.members
        } onChange: {
            unrelated.add()
        }
        trip.name = "Anti-Atlas"
        #expect(unrelated.value == 0, "only the property read is tracked")
    }

    @Test("an edited model is saved with its changes and rolled back to what was read")
    func editsAndRollback() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let context = container.mainContext
        let trip = Expedition(name: "Tassili", members: 2)
        context.insert(trip)
        try context.save()
        trip.members = 3
        #expect(context.hasChanges)
        try context.save()
        trip.members = 9
        trip.tags = ["changed"]
        context.rollback()
        #expect(trip.members == 3 && trip.tags == [])
        #expect(!context.hasChanges)
        let stored = try await context.database.query("SELECT members FROM Expedition")
        #expect(stored.map { $0[0, as: Int64.self] } == [3])
    }

    @Test(
        "#Index creates the indexes, @Attribute(.unique) a unique one, and transient properties have no column"
    )
    func declaredSchema() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let database = container.database
        let columns = try await database.query("SELECT name FROM pragma_table_info('Expedition')")
            .compactMap {
                $0[0, as: String.self]
            }
        #expect(columns.contains("name") && columns.contains("budget") && columns.contains("tags"))
        #expect(!columns.contains("isSelected") && !columns.contains("scratch"))
        let indexes = try await database.query(
            "SELECT il.\"unique\", group_concat(ii.name, ',') FROM pragma_index_list('Expedition') il, pragma_index_info(il.name) ii GROUP BY il.name"
        )
        let described = Set(
            indexes.map { "\($0[0, as: Int64.self] ?? -1):\($0[1, as: String.self] ?? "")" })
        #expect(described.contains("0:startDate"))
        #expect(described.contains("0:status,startDate"))
        #expect(described.contains("1:name"))
    }

    @Test("inserting a model whose unique value is stored updates that row, as SwiftData's upsert")
    func uniqueUpsert() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let database = container.database
        let context = container.mainContext
        let first = Expedition(name: "Same", members: 1)
        context.insert(first)
        try context.save()
        let second = Expedition(name: "Same", members: 5)
        context.insert(second)
        context.insert(Expedition(name: "Other", members: 2))
        try context.save()
        let rows = try await database.query("SELECT name, members FROM Expedition ORDER BY name")
        #expect(
            rows.map { "\($0[0, as: String.self]!) \($0[1, as: Int64.self]!)" } == [
                "Other 2", "Same 5",
            ])
        #expect(second.id == first.id, "the inserted model is the stored row now")
        #expect(second.modelContext === context && first.modelContext == nil)
        let fetched = try context.fetch(
            FetchDescriptor<Expedition>(predicate: #Predicate { $0.name == "Same" }))
        #expect(fetched.count == 1 && fetched[0] === second)
        second.members = 6
        try context.save()  // guarded by the row's version after the upsert: no conflict
        #expect(
            try await database.query("SELECT members FROM Expedition WHERE name = 'Same'").first?[
                0, as: Int64.self]
                == 6)
    }

    @Test("a model deleted and a new one with its unique value inserted, in one save")
    func uniqueValueTakenOverInOneSave() async throws {
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let context = container.mainContext
        let first = Expedition(name: "Same", members: 1)
        context.insert(first)
        try context.save()
        context.delete(first)
        let second = Expedition(name: "Same", members: 5)
        context.insert(second)
        try context.save()
        let rows = try await container.database.query("SELECT id, members FROM Expedition")
        #expect(rows.map { $0[1, as: Int64.self] } == [5])
        #expect(second.id != first.id, "a new row, not the deleted one written over")
        #expect(!context.hasChanges)
    }

    @Test(
        "@Attribute(originalName:) renames the column in a lightweight migration, keeping its values"
    )
    func originalName() async throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("journal.trove")
        do {
            let database = try Database(path: path)
            try await Migrator(plan: JournalPlan.self).migrate(database, upTo: "1.0.0")
            let container = try openContainer(JournalV1.self, at: path)
            _ = database
            container.mainContext.insert(JournalV1.Entry(body: "first"))
            container.mainContext.insert(JournalV1.Entry(body: "second"))
            try container.mainContext.save()
        }
        let container = try openContainer(JournalV2.self, migrationPlan: JournalPlan.self, at: path)
        let context = container.mainContext
        let entries = try context.fetch(
            FetchDescriptor<JournalV2.Entry>(sortBy: [SortDescriptor(\.text)]))
        #expect(entries.map(\.text) == ["first", "second"])
        #expect(entries.allSatisfy { $0.mood == nil })
    }

    @Test(
        "generated coding stores the same row as the compiler's Codable over seeded random models")
    func differentialCoding() async throws {
        var random = SeededGenerator(seed: 40)
        let container = try inMemoryContainer(ExpeditionsV1.self)
        let database = container.database
        let context = container.mainContext
        let values = try await database.models(ExpeditionValue.self)
        for i in 0..<200 {
            func text() -> String {
                String(
                    (0..<Int.random(in: 0...12, using: &random)).map { _ in
                        "aé z☃0\"'".randomElement(using: &random)!
                    }
                )
            }
            let value = ExpeditionValue(
                id: UUID(), name: "n\(i) " + text(),
                members: Int.random(in: Int(Int32.min)...Int(Int32.max), using: &random),
                distance: Double.random(in: -1e9...1e9, using: &random),
                isPublic: Bool.random(using: &random),
                startDate: Date(
                    timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &random))
                ),
                photo: Data(
                    (0..<Int.random(in: 0...16, using: &random)).map { _ in
                        UInt8.random(in: 0...255, using: &random)
                    }),
                guide: Bool.random(using: &random) ? UUID() : nil,
                notes: Bool.random(using: &random) ? text() : nil,
                status: Expedition.Status.allCases.randomElement(using: &random)!,
                budget: .init(amount: Double.random(in: 0...1e6, using: &random), currency: text()),
                tags: (0..<Int.random(in: 0...3, using: &random)).map { _ in text() })
            try await values.insert(value)
            let model = Expedition(
                name: value.name, members: value.members, distance: value.distance,
                isPublic: value.isPublic,
                startDate: value.startDate,
                photo: value.photo, guide: value.guide, notes: value.notes, status: value.status,
                budget: value.budget,
                tags: value.tags)
            model.id = value.id
            context.insert(model)
        }
        try context.save()
        let columns =
            "id, name, members, distance, isPublic, startDate, photo, guide, notes, status, budget, tags"
        let generated = try await database.query("SELECT \(columns) FROM Expedition ORDER BY id")
        let synthesized = try await database.query(
            "SELECT \(columns) FROM ExpeditionValue ORDER BY id")
        #expect(generated.count == 200)
        #expect(generated.map { $0.values } == synthesized.map { $0.values })
        let fetched = try context.fetch(FetchDescriptor<Expedition>()).sorted {
            $0.id.uuidString < $1.id.uuidString
        }
        let read = try await values.fetch().sorted { $0.id.uuidString < $1.id.uuidString }
        #expect(fetched.map(\.name) == read.map(\.name))
        #expect(
            fetched.map(\.budget) == read.map(\.budget) && fetched.map(\.tags) == read.map(\.tags))
    }
}

/// A count that observation callbacks (`@Sendable`) can raise.
///
/// `@unchecked Sendable`: `count` is only touched while holding `lock`.
private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
