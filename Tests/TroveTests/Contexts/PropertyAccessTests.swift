import Foundation
import Observation
import Testing
import TroveTestSupport

@testable import Trove

/// A second `@Model` class with optionals, arrays and dates.
@Model final class PlainNote {
    var id: Int64
    var text: String
    var stars: Int?
    var tags: [String]
    var when: Date
    init(id: Int64, text: String, stars: Int?, tags: [String], when: Date) {
        (self.id, self.text, self.stars, self.tags, self.when) = (id, text, stars, tags, when)
    }
}

@Suite("Property access")
struct PropertyAccessTests {
    @Test(
        "@Model classes list every stored property but id, and reading one is no Observation access"
    )
    func storage() throws {
        let observable = try ReferenceLayout<Article>.shared().accesses
        #expect(observable.count == Article._$properties.count)
        let plain = try ReferenceLayout<PlainNote>.shared().accesses
        #expect(Set(plain.keys) == ["text", "stars", "tags", "when"])
        let note = PlainNote(id: 1, text: "a", stars: nil, tags: [], when: Date())
        // Tracked reads through the accesses, then through the getter (the control): only the
        // getter's read is told of the change.
        nonisolated(unsafe) var heard: [String] = []
        withObservationTracking {
            for access in plain.values { _ = access.read(note) }
        } onChange: {
            heard.append("storage")
        }
        withObservationTracking {
            _ = note.text
        } onChange: {
            heard.append("getter")
        }
        note.text = "b"
        #expect(heard == ["getter"])
    }

    /// Seeded random edits of every property of `Article`: the storage path reads what the key
    /// path reads and finds a property changed exactly when the key-path oracle does (by
    /// comparing values read through the getters).
    @Test("reads and change checks through storage agree with the key paths on random edits")
    func differential() throws {
        let layout = try ReferenceLayout<Article>.shared()
        let fast = Article._$properties.compactMap { layout.name(of: $0.keyPath) }.map {
            layout.accesses[$0]!
        }
        let oracle = zip(fast, Article._$properties).map {
            PropertyAccess(name: $0.name, keyPath: $1.keyPath)
        }
        var random = SeededGenerator(seed: 25)
        let words = ["", "a", "tea", "a longer string than fits inline in a String", "ünïcode"]
        for round in 0..<500 {
            let article = Article(id: Int64(round), title: words.randomElement(using: &random)!)
            let saved = fast.map { $0.read(article) }
            for (a, b) in zip(fast, oracle) {
                #expect("\(a.read(article))" == "\(b.read(article))")
            }
            var edited: Set<String> = []
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                switch Int.random(in: 0..<9, using: &random) {
                case 0:
                    article.title = words.randomElement(using: &random)!
                    edited.insert("title")
                case 1:
                    article.body += "x"
                    edited.insert("body")
                case 2:
                    article.rating = Int.random(in: 0...2, using: &random)
                    edited.insert("rating")
                case 3:
                    article.pinned.toggle()
                    edited.insert("pinned")
                case 4:
                    article.archived = Bool.random(using: &random)
                    edited.insert("archived")
                case 5:
                    article.subtitle =
                        Bool.random(using: &random) ? nil : words.randomElement(using: &random)
                    edited.insert("subtitle")
                case 6:
                    article.status = Article.Status.allCases.randomElement(using: &random)!
                    edited.insert("status")
                case 7:
                    article.stats.views += 1
                    edited.insert("stats")
                default:
                    article.title = article.title
                    edited.insert("title")
                }
            }
            for (slot, (a, b)) in zip(fast, oracle).enumerated() {
                let unchangedFast = Self.isCurrent(a, article, saved[slot])
                #expect(
                    unchangedFast == Self.isCurrent(b, article, saved[slot]),
                    "round \(round), \(a.name)")
                // Never "unchanged" when the value differs; an untouched property is always unchanged.
                if unchangedFast { #expect("\(a.read(article))" == "\(saved[slot])") }
                if !edited.contains(a.name) { #expect(unchangedFast, "round \(round), \(a.name)") }
            }
        }
    }

    /// `access.isCurrent` on a saved value held on its own (a snapshot's are read in place).
    static func isCurrent(_ access: PropertyAccess, _ model: AnyObject, _ saved: Any) -> Bool {
        withUnsafePointer(to: saved) { access.isCurrent(model, UnsafeRawPointer($0)) }
    }

    @Test("a plain class model round-trips through a context: changes found, rollback restores")
    @MainActor
    func plainClass() async throws {
        enum Plain: VersionedSchema {
            static let versionIdentifier = Schema.Version(1, 0, 0)
            static let models: [any PersistentModel.Type] = [PlainNote.self]
        }
        let dir = try TemporaryDirectory()
        let container = try openContainer(Plain.self, at: dir.path("plain.trove"))
        let context = container.mainContext
        let when = Date(timeIntervalSince1970: 1_000)
        context.insert(PlainNote(id: 1, text: "one", stars: nil, tags: [], when: when))
        try context.save()
        let note = try #require(try context.fetch(FetchDescriptor<PlainNote>()).first)
        note.tags.append("new")
        note.stars = 3
        #expect(context.hasChanges)
        context.rollback()
        #expect(note.tags.isEmpty && note.stars == nil && !context.hasChanges)
        note.text = "two"
        try context.save()
        let other = ModelContext(try openContainer(Plain.self, at: container.database.path!))
        let stored = try #require(try other.fetch(FetchDescriptor<PlainNote>()).first)
        #expect(stored.text == "two" && stored.tags.isEmpty && stored.when == when)
    }
}
