import Foundation
import Testing
import Trove
import TroveTestSupport

/// A note holds tags, a tag holds notes (many-to-many, nullify on both sides).
@Model final class Jotting {
    var title: String
    @Relationship(inverse: \Topic.jottings) var topics: [Topic] = []
    init(title: String, topics: [Topic] = []) {
        self.title = title
        self.topics = topics
    }
}

@Model final class Topic {
    @Attribute(.unique) var name: String
    // The other side names this one as its inverse (naming it on both sides is circular).
    @Relationship var jottings: [Jotting] = []
    init(name: String) { self.name = name }
}

/// A playlist deletes its songs with it; a course cannot be deleted while it has students.
@Model final class Playlist {
    var name: String
    @Relationship(deleteRule: .cascade) var songs: [Song] = []
    init(name: String) { self.name = name }
}

@Model final class Song {
    var title: String
    @Relationship(inverse: \Playlist.songs) var playlists: [Playlist]?
    init(title: String) { self.title = title }
}

@Model final class Course {
    var name: String
    @Relationship(deleteRule: .deny, inverse: \Student.courses) var students: [Student] = []
    init(name: String) { self.name = name }
}

@Model final class Student {
    var name: String
    @Relationship var courses: [Course] = []
    init(name: String) { self.name = name }
}

/// A side that leaves its inverse to the other side, which does not name it.
@Model final class Stray {
    @Relationship var jottings: [Jotting] = []
    init() {}
}

enum NotebookV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static let models: [any PersistentModel.Type] = [
        Jotting.self, Topic.self, Playlist.self, Song.self, Course.self, Student.self,
    ]
}

/// Many-to-many relationships of `@Model` classes, with SwiftData's behaviour as the oracle:
/// both sides in step in memory, one stored pair whichever side changed, arrays read on first
/// access, delete rules, rollback; stored as links in the file's edge table.
@Suite("Many-to-many relationships")
@MainActor
struct ManyToManyTests {
    private func fileContainer(_ folder: TemporaryDirectory) throws -> ModelContainer {
        try ModelContainer(
            for: Schema(versionedSchema: NotebookV1.self),
            configurations: ModelConfiguration(
                url: folder.url.appendingPathComponent("notes.trove")))
    }

    private func titles(_ jottings: [Jotting]) -> [String] { jottings.map(\.title).sorted() }
    private func names(_ topics: [Topic]) -> [String] { topics.map(\.name).sorted() }

    /// The stored pairs, read with SQL from the edge table.
    private func storedPairs(_ container: ModelContainer) async throws -> Set<String> {
        let rows = try await container.database.query(
            """
            SELECT j.title, t.name FROM _trove_edges e
            JOIN Jotting j ON j.id = CASE WHEN e.from_collection = 'Jotting' THEN e.from_id ELSE e.to_id END
            JOIN Topic t ON t.id = CASE WHEN e.from_collection = 'Topic' THEN e.from_id ELSE e.to_id END
            """)
        let pairs = rows.map { "\($0[0, as: String.self] ?? "?")/\($0[1, as: String.self] ?? "?")" }
        #expect(pairs.count == Set(pairs).count, "one link per pair")
        return Set(pairs)
    }

    @Test(
        "a side that leaves its inverse to a model that does not name it: a typed error when the container opens"
    )
    func unnamedInverse() throws {
        let folder = try TemporaryDirectory()
        #expect {
            try ModelContainer(
                for: Jotting.self, Topic.self, Stray.self,
                configurations: ModelConfiguration(
                    url: folder.url.appendingPathComponent("a.trove")))
        } throws: { error in
            guard case TroveError.invalidModel(let type, let reason) = error else { return false }
            return type == "Stray" && reason.contains("Stray.jottings has no inverse")
        }
        #expect(
            !FileManager.default.fileExists(
                atPath: folder.url.appendingPathComponent("a.trove").path),
            "nothing written")
    }

    @Test("setting either side keeps the other in step in memory")
    func inverseInMemory() {
        let work = Topic(name: "work")
        let home = Topic(name: "home")
        let plan = Jotting(title: "plan")
        let list = Jotting(title: "list")
        plan.topics.append(work)
        #expect(work.jottings.map(\.title) == ["plan"])
        work.jottings.append(list)
        #expect(list.topics.map(\.name) == ["work"])
        list.topics = [home]
        #expect(titles(work.jottings) == ["plan"] && titles(home.jottings) == ["list"])
        home.jottings.removeAll()
        #expect(list.topics.isEmpty)
        let song = Song(title: "Blue")
        let mix = Playlist(name: "Mix")
        song.playlists = [mix]
        #expect(mix.songs.map(\.title) == ["Blue"])
        mix.songs = []
        #expect(song.playlists?.isEmpty == true)
    }

    @Test(
        "pairs saved from either side are one link each, read back from both sides in a fresh context"
    )
    func savedAndReadBack() async throws {
        let folder = try TemporaryDirectory()
        let container = try fileContainer(folder)
        let context = ModelContext(container)
        let work = Topic(name: "work")
        let home = Topic(name: "home")
        let plan = Jotting(title: "plan", topics: [work, home])  // set in init: no setter ran
        context.insert(plan)
        #expect(work.modelContext === context, "inserting a model inserts what it holds")
        #expect(titles(work.jottings) == ["plan"], "set in init, seen from the other side")
        let list = Jotting(title: "list")
        context.insert(list)
        home.jottings.append(list)
        try context.save()
        #expect(try await storedPairs(container) == ["plan/work", "plan/home", "list/home"])

        let fresh = ModelContext(container)
        let jottings = try fresh.fetch(FetchDescriptor<Jotting>(sortBy: [SortDescriptor(\.title)]))
        #expect(jottings.map { names($0.topics) } == [["home"], ["home", "work"]])
        let topics = try fresh.fetch(FetchDescriptor<Topic>(sortBy: [SortDescriptor(\.name)]))
        #expect(topics.map { titles($0.jottings) } == [["list", "plan"], ["plan"]])
        #expect(
            jottings[1].topics.contains { $0 === topics[1] },
            "one instance per row through the identity map")

        // Removing from one side and adding from the other: one change each, both sides agree.
        topics[1].jottings.removeAll()  // work
        jottings[0].topics.append(topics[1])  // list gets work
        #expect(fresh.hasChanges)
        try fresh.save()
        #expect(!fresh.hasChanges)
        #expect(try await storedPairs(container) == ["plan/home", "list/home", "list/work"])
        let third = ModelContext(container)
        let plan3 = try #require(
            try third.fetch(FetchDescriptor<Jotting>(predicate: #Predicate { $0.title == "plan" }))
                .first)
        #expect(names(plan3.topics) == ["home"])
    }

    @Test("an array read after the other side changed in memory shows the unsaved change")
    func unsavedOtherSide() async throws {
        let folder = try TemporaryDirectory()
        let container = try fileContainer(folder)
        let setup = ModelContext(container)
        setup.insert(Jotting(title: "plan", topics: [Topic(name: "work")]))
        setup.insert(Topic(name: "home"))
        try setup.save()

        let context = ModelContext(container)
        let home = try #require(
            try context.fetch(FetchDescriptor<Topic>(predicate: #Predicate { $0.name == "home" }))
                .first)
        let plan = try #require(try context.fetch(FetchDescriptor<Jotting>()).first)
        #expect(home.jottings.isEmpty)  // read: known from now on
        home.jottings.append(plan)  // plan's topics not read yet
        #expect(names(plan.topics) == ["home", "work"], "stored work, unsaved home")
        try context.save()
        #expect(try await storedPairs(container) == ["plan/work", "plan/home"])
    }

    @Test("deleting a model drops its pairs, and the other side's arrays forget it")
    func deleteNullifies() async throws {
        let folder = try TemporaryDirectory()
        let container = try fileContainer(folder)
        let context = ModelContext(container)
        let work = Topic(name: "work")
        let plan = Jotting(title: "plan", topics: [work])
        let list = Jotting(title: "list", topics: [work])
        context.insert(plan)
        context.insert(list)
        try context.save()
        context.delete(plan)
        try context.save()
        #expect(titles(work.jottings) == ["list"])
        #expect(try await storedPairs(container) == ["list/work"])
        let fresh = ModelContext(container)
        let topics = try fresh.fetch(FetchDescriptor<Topic>())
        #expect(topics.map { titles($0.jottings) } == [["list"]])
    }

    @Test("cascade deletes the models held; deny refuses to delete a model that holds others")
    func deleteRules() async throws {
        let folder = try TemporaryDirectory()
        let container = try fileContainer(folder)
        let context = ModelContext(container)
        let mix = Playlist(name: "Mix")
        mix.songs = [Song(title: "Blue"), Song(title: "Green")]
        let algebra = Course(name: "Algebra")
        algebra.students = [Student(name: "Ada")]
        context.insert(mix)
        context.insert(algebra)
        context.insert(Song(title: "Red"))
        try context.save()

        let fresh = ModelContext(container)
        let playlist = try #require(try fresh.fetch(FetchDescriptor<Playlist>()).first)
        fresh.delete(playlist)
        try fresh.save()
        #expect(try fresh.fetch(FetchDescriptor<Song>()).map(\.title) == ["Red"])

        let course = try #require(try fresh.fetch(FetchDescriptor<Course>()).first)
        fresh.delete(course)
        #expect(throws: TroveError.self) { try fresh.save() }
        fresh.rollback()
        #expect(try fresh.fetchCount(FetchDescriptor<Course>()) == 1)
        course.students = []
        fresh.delete(course)
        try fresh.save()
        #expect(try fresh.fetchCount(FetchDescriptor<Course>()) == 0)
        #expect(try fresh.fetch(FetchDescriptor<Student>()).map(\.name) == ["Ada"])
    }

    /// Seeded random edits from either side, saves and rollbacks, against a set of pairs: the
    /// stored pairs, and what a fresh context reads from both sides, equal the oracle's.
    @Test(
        "random edits, saves and rollbacks from both sides agree with a set of pairs",
        arguments: [1, 2, 3])
    func randomEdits(seed: UInt64) async throws {
        let folder = try TemporaryDirectory()
        let container = try fileContainer(folder)
        var random = SeededGenerator(seed: seed)
        let setup = ModelContext(container)
        for i in 0..<5 { setup.insert(Jotting(title: "j\(i)")) }
        for i in 0..<4 { setup.insert(Topic(name: "l\(i)")) }
        try setup.save()

        var saved: Set<String> = []
        var pending: Set<String> = []
        var context = ModelContext(container)
        for _ in 0..<60 {
            let jottings = try context.fetch(
                FetchDescriptor<Jotting>(sortBy: [SortDescriptor(\.title)]))
            let topics = try context.fetch(FetchDescriptor<Topic>(sortBy: [SortDescriptor(\.name)]))
            let (j, l) = (
                Int.random(in: 0..<5, using: &random), Int.random(in: 0..<4, using: &random)
            )
            let pair = "j\(j)/l\(l)"
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                if !jottings[j].topics.contains(where: { $0 === topics[l] }) {
                    jottings[j].topics.append(topics[l])
                }
                pending.insert(pair)
            case 3..<6:
                if !topics[l].jottings.contains(where: { $0 === jottings[j] }) {
                    topics[l].jottings.append(jottings[j])
                }
                pending.insert(pair)
            case 6:
                jottings[j].topics.removeAll { $0 === topics[l] }
                pending.remove(pair)
            case 7:
                topics[l].jottings.removeAll { $0 === jottings[j] }
                pending.remove(pair)
            case 8:
                try context.save()
                saved = pending
            default:
                if Bool.random(using: &random) {
                    context.rollback()
                } else {
                    context = ModelContext(container)  // unsaved edits are dropped with the context
                }
                pending = saved
            }
        }
        try context.save()
        #expect(try await storedPairs(container) == pending)
        let fresh = ModelContext(container)
        var fromJottings: Set<String> = []
        for jotting in try fresh.fetch(FetchDescriptor<Jotting>()) {
            for label in jotting.topics { fromJottings.insert("\(jotting.title)/\(label.name)") }
        }
        let other = ModelContext(container)
        var fromLabels: Set<String> = []
        for label in try other.fetch(FetchDescriptor<Topic>()) {
            for jotting in label.jottings { fromLabels.insert("\(jotting.title)/\(label.name)") }
        }
        #expect(fromJottings == pending && fromLabels == pending)
    }
}
