import Foundation
import Trove

/// A `@Model` class with every kind of column the macro writes out, and what it leaves alone.
@Model final class Expedition {
    enum Status: String, Codable, CaseIterable { case planned, underway, done }
    struct Budget: Codable, Hashable {
        var amount: Double
        var currency: String
    }

    #Index<Expedition>([\.startDate], [\.status, \.startDate])

    @Attribute(.unique) var name: String
    var members: Int
    var distance: Double
    var isPublic: Bool
    var startDate: Date
    var photo: Data
    var guide: UUID?
    var notes: String?
    var status: Status
    var budget: Budget
    var tags: [String]
    @Transient var isSelected = false
    @Transient var scratch: String? = nil

    init(
        name: String, members: Int = 1, distance: Double = 0, isPublic: Bool = false,
        startDate: Date = Date(timeIntervalSince1970: 0),
        photo: Data = Data(), guide: UUID? = nil, notes: String? = nil, status: Status = .planned,
        budget: Budget = Budget(amount: 0, currency: "EUR"), tags: [String] = []
    ) {
        self.name = name
        self.members = members
        self.distance = distance
        self.isPublic = isPublic
        self.startDate = startDate
        self.photo = photo
        self.guide = guide
        self.notes = notes
        self.status = status
        self.budget = budget
        self.tags = tags
    }
}

/// The same columns as a value model, coded by the compiler's synthesized `Codable`: the oracle
/// of the differential test.
@MemberwiseCoding
struct ExpeditionValue: Model, Equatable {
    var id: UUID
    var name: String
    var members: Int
    var distance: Double
    var isPublic: Bool
    var startDate: Date
    var photo: Data
    var guide: UUID?
    var notes: String?
    var status: Expedition.Status
    var budget: Expedition.Budget
    var tags: [String]

    static var modelOptions: ModelOptions { ModelOptions().unique(\ExpeditionValue.name) }
}

/// A `@Model` class that declares its own id.
@Model final class Ledger {
    var id: Int64
    var title: String
    init(id: Int64, title: String) {
        self.id = id
        self.title = title
    }
}

enum ExpeditionsV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Expedition.self, Ledger.self]
}

/// Two versions of one model: the second renames `body` to `text` with `originalName`.
enum JournalV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Entry.self]
    @Model final class Entry {
        var body: String
        init(body: String) { self.body = body }
    }
}

enum JournalV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static let models: [any PersistentModel.Type] = [Entry.self]
    @Model final class Entry {
        @Attribute(originalName: "body") var text: String
        var mood: Int?
        init(text: String) { self.text = text }
    }
}

enum JournalPlan: SchemaMigrationPlan {
    static let schemas: [any VersionedSchema.Type] = [JournalV1.self, JournalV2.self]
    static let stages: [MigrationStage] = []
}

/// SwiftData's sample shapes: a category whose animals are deleted with it, an animal whose
/// category is an object property (no attribute), types left to the initial value.
@Model final class AnimalCategory {
    @Attribute(.unique) var name: String
    @Relationship(deleteRule: .cascade, inverse: \Animal.category)
    var animals = [Animal]()

    init(name: String) {
        self.name = name
    }
}

@Model final class Animal {
    enum Diet: String, CaseIterable, Codable { case herbivorous, carnivorous, omnivorous }

    var name: String
    var diet: Diet
    var category: AnimalCategory?
    var legs = 4

    init(name: String, diet: Diet, category: AnimalCategory? = nil) {
        self.name = name
        self.diet = diet
        self.category = category
    }
}

/// An optional to-many relationship with the default delete rule (nullify).
@Model final class Shelf {
    var label: String
    @Relationship(inverse: \Book.shelf) var books: [Book]? = []
    init(label: String) { self.label = label }
}

@Model final class Book {
    var title: String
    var shelf: Shelf?
    init(title: String, shelf: Shelf? = nil) {
        self.title = title
        self.shelf = shelf
    }
}

enum ZooV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [
        AnimalCategory.self, Animal.self, Shelf.self, Book.self,
    ]
}

/// A container of one version's models, stored in memory only.
func inMemoryContainer(_ version: any VersionedSchema.Type) throws -> ModelContainer {
    try ModelContainer(
        for: Schema(versionedSchema: version),
        configurations: ModelConfiguration(isStoredInMemoryOnly: true))
}

/// A large optional property a fetch leaves out (`@Attribute(.externalStorage)`).
@Model final class Snapshot {
    var caption: String
    @Attribute(.externalStorage) var pixels: Data?
    init(caption: String, pixels: Data? = nil) {
        self.caption = caption
        self.pixels = pixels
    }
}

enum SnapshotsV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [Snapshot.self]
}
