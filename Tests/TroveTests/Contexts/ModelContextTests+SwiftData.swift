import Foundation
import Observation
import Testing
import Trove
import TroveTestSupport

/// A class model with a full-text field and a vector: searches of its collection must see what
/// a context saves on its own connection.
@Model final class Clip {
    var id: Int64
    var text: String
    var embedding: [Float]?

    init(id: Int64, text: String, embedding: [Float]? = nil) {
        self.id = id
        self.text = text
        self.embedding = embedding
    }

    static var modelOptions: ModelOptions {
        ModelOptions().fullText(\Clip.text).vector(\Clip.embedding, dimension: 4)
    }
}

/// SwiftData's context API, with SwiftData's documented semantics as the oracle.
extension ModelContextTests {
    /// A container in a temporary folder with `count` articles saved through a context.
    static func saved(_ dir: TemporaryDirectory, articles count: Int) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Article.self, Tag.self, Clip.self,
            configurations: ModelConfiguration(
                url: URL(fileURLWithPath: dir.path("swiftdata.store"))))
        let context = ModelContext(container)
        for i in 1...Int64(count) {
            context.insert(Article(id: i, title: "Article \(i)", rating: Int(i % 5)))
        }
        try context.save()
        return container
    }

    @Test(
        "fetch honours fetchLimit and fetchOffset; fetchCount and fetchIdentifiers agree with fetch"
    )
    func limitsCountsAndIdentifiers() throws {
        let dir = try TemporaryDirectory()
        let context = ModelContext(try Self.saved(dir, articles: 30))
        var descriptor = FetchDescriptor<Article>(
            predicate: #Predicate { $0.rating >= 2 },
            sortBy: [SortDescriptor(\.id, order: .reverse)])
        let all = try context.fetch(descriptor)
        #expect(all.count == 18)
        #expect(try context.fetchCount(descriptor) == 18)
        #expect(try context.fetchIdentifiers(descriptor) == all.map(\.persistentModelID))
        descriptor.fetchOffset = 5
        descriptor.fetchLimit = 10
        let page = try context.fetch(descriptor)
        #expect(page.map(\.id) == Array(all.map(\.id)[5..<15]))
        #expect(try context.fetchCount(descriptor) == 10)
        descriptor.fetchOffset = 15
        #expect(try context.fetchCount(descriptor) == 3)
        #expect(try context.fetch(descriptor).count == 3)
        #expect(
            try context.fetchIdentifiers(descriptor).map(\.id) == all.suffix(3).map { .int($0.id) })
    }

    @Test("a persistent identifier is Codable and finds the model registered in its context only")
    func persistentIdentifiers() throws {
        let dir = try TemporaryDirectory()
        let container = try Self.saved(dir, articles: 3)
        let context = ModelContext(container)
        let article = try #require(try context.model(Article.self, id: 2))
        let id = article.persistentModelID
        #expect(id.entityName == "Article" && id.id == .int(2))
        let decoded = try JSONDecoder().decode(
            PersistentIdentifier.self, from: JSONEncoder().encode(id))
        #expect(decoded == id)
        let found: Article? = context.registeredModel(for: decoded)
        #expect(found === article)
        let other = ModelContext(container)
        let notYet: Article? = other.registeredModel(for: id)
        #expect(notYet == nil)  // not fetched there: SwiftData's registeredModel does not read
        let wrongType: Clip? = context.registeredModel(for: id)
        #expect(wrongType == nil)
    }

    @Test(
        "enumerate visits every selected model in order, a batch at a time, and forgets the unchanged ones"
    )
    func enumerates() throws {
        let dir = try TemporaryDirectory()
        let context = ModelContext(try Self.saved(dir, articles: 95))
        var seen: [Int64] = []
        try context.enumerate(
            FetchDescriptor<Article>(sortBy: [SortDescriptor(\.rating), SortDescriptor(\.id)]),
            batchSize: 10
        ) { article in
            seen.append(article.id)
        }
        let expected = (1...95).map { Int64($0) }.sorted { ($0 % 5, $0) < ($1 % 5, $1) }
        #expect(seen == expected)
        let first: Article? = context.registeredModel(
            for: PersistentIdentifier(
                try #require(try ModelContext(context.container).model(Article.self, id: 1))))
        #expect(first == nil)  // unchanged models left the identity map batch by batch
        // With a limit and offset; mutations kept when allowed, then saved.
        var limited = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)])
        limited.fetchOffset = 3
        limited.fetchLimit = 25
        var count = 0
        try context.enumerate(limited, batchSize: 7, allowEscapingMutations: true) { article in
            count += 1
            article.title = "Seen \(article.id)"
        }
        #expect(count == 25 && context.hasChanges)
        try context.save()
        let titles = try ModelContext(context.container).fetch(
            FetchDescriptor<Article>(predicate: #Predicate { $0.title.starts(with: "Seen") }))
        #expect(titles.map(\.id) == Array(4...28))
    }

    @Test(
        "delete(model:where:) deletes what the predicate accepts at the next save; rollback brings them back"
    )
    func deleteWhere() throws {
        let dir = try TemporaryDirectory()
        let container = try Self.saved(dir, articles: 10)
        let context = ModelContext(container)
        try context.delete(model: Article.self, where: #Predicate { $0.rating == 0 })
        #expect(context.hasChanges)
        #expect(
            try context.fetch(FetchDescriptor<Article>()).map(\.id) == [1, 2, 3, 4, 6, 7, 8, 9])
        context.rollback()
        #expect(try context.fetchCount(FetchDescriptor<Article>()) == 10)
        try context.delete(model: Article.self, where: #Predicate { $0.rating == 0 })
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Article>()) == 8)
        try context.delete(model: Article.self)
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Article>()) == 0)
    }

    @Test("a value model given to a context is a typed invalidModel error")
    func valueModelRefused() throws {
        let dir = try TemporaryDirectory()
        let context = ModelContext(try Self.saved(dir, articles: 1))
        #expect {
            _ = try context.fetch(FetchDescriptor<Tag>())
        } throws: { error in
            guard case TroveError.invalidModel(let type, _) = error else { return false }
            return type == "Tag"
        }
        #expect(throws: TroveError.self) { try context.fetchCount(FetchDescriptor<Tag>()) }
        context.insert(Tag(id: "x", label: "x"))
        #expect(context.hasChanges)
        #expect {
            try context.save()
        } throws: { error in
            guard case TroveError.invalidModel(let type, _) = error else { return false }
            return type == "Tag"
        }
        #expect(!context.hasChanges)
    }

    @Test("a context's save is seen by another context, and fetches need no await")
    func seenByAnotherContext() throws {
        let dir = try TemporaryDirectory()
        let container = try Self.saved(dir, articles: 2)
        let (writer, reader) = (ModelContext(container), ModelContext(container))
        let before = try #require(try reader.model(Article.self, id: 1))
        try #require(try writer.model(Article.self, id: 1)).title = "from the writer"
        writer.insert(Article(id: 3, title: "new"))
        try writer.save()
        // The reader's unchanged instance takes the newer row on its next fetch (same instance).
        let after = try reader.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)]))
        #expect(after.map(\.title) == ["from the writer", "Article 2", "new"])
        #expect(after[0] === before)
    }

    @Test(
        "text and vector searches of the collection see a context's save (derived indexes catch up)"
    )
    func searchesSeeContextSaves() async throws {
        let dir = try TemporaryDirectory()
        let container = try Self.saved(dir, articles: 1)
        let clips = try await container.database.documents(named: "Clip")
        // Searched once before, so the in-memory indexes exist and must catch up.
        #expect(try await clips.search(Query().matching(.typed("milk"), in: ["text"])).isEmpty)
        let context = ModelContext(container)
        context.insert(Clip(id: 1, text: "oat milk and bread", embedding: [1, 0, 0, 0]))
        context.insert(Clip(id: 2, text: "train tickets", embedding: [0, 1, 0, 0]))
        try context.save()
        #expect(
            try await clips.search(Query().matching(.typed("milk"), in: ["text"])).map(
                \.record.id) == [1])
        let nearest = try await clips.search(
            Query().nearest(to: [0, 0.9, 0.1, 0], in: "embedding").limit(1))
        #expect(nearest.map(\.record.id) == [2])
        // An update and a delete through the context too.
        try #require(try context.model(Clip.self, id: 1)).text = "coffee beans"
        context.delete(try #require(try context.model(Clip.self, id: 2)))
        try context.save()
        #expect(try await clips.search(Query().matching(.typed("milk"), in: ["text"])).isEmpty)
        #expect(
            try await clips.search(Query().matching(.typed("coffee"), in: ["text"])).map(
                \.record.id) == [1])
        #expect(
            try await clips.search(Query().nearest(to: [0, 1, 0, 0], in: "embedding").limit(5)).map(
                \.record.id) == [
                    1
                ])
    }

    @Test("a live query of the database sees a context's save")
    func liveQuerySeesContextSave() async throws {
        let dir = try TemporaryDirectory()
        let container = try Self.saved(dir, articles: 1)
        let live = container.database.observe { r in try r.documents("Article").count() }
        var iterator = live.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        let context = ModelContext(container)
        context.insert(Article(id: 2, title: "two"))
        try context.save()
        #expect(try await iterator.next() == 2)
    }

    @Test(
        "autosave: on for the main context (saved on a later main-actor turn), off for other contexts"
    )
    func autosaveDefaults() async throws {
        let dir = try TemporaryDirectory()
        let container = try Self.saved(dir, articles: 1)
        let main = container.mainContext
        #expect(main.autosaveEnabled)
        let other = ModelContext(container)
        #expect(!other.autosaveEnabled)
        other.insert(Article(id: 50, title: "not autosaved"))
        main.insert(Article(id: 51, title: "autosaved"))
        let edited = try #require(try main.model(Article.self, id: 1))
        edited.title = "edited with it"
        #expect(main.hasChanges)
        for _ in 0..<200 where main.hasChanges { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!main.hasChanges && main.autosaveError == nil)
        #expect(other.hasChanges)
        let stored = try ModelContext(container).fetch(
            FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)])
        ).map(
            \.title)
        #expect(stored == ["edited with it", "autosaved"])
        // A property edit alone saves itself too, again and again (the watch is renewed).
        for round in 1...2 {
            edited.title = "edited again \(round)"
            #expect(main.hasChanges)
            for _ in 0..<200 where main.hasChanges { try await Task.sleep(for: .milliseconds(10)) }
            #expect(!main.hasChanges)
            let title = try ModelContext(container).model(Article.self, id: 1)?.title
            #expect(title == "edited again \(round)")
        }
        // Switched off, nothing saves itself.
        main.autosaveEnabled = false
        main.insert(Article(id: 52, title: "held"))
        try await Task.sleep(for: .milliseconds(50))
        #expect(main.hasChanges)
        main.rollback()
    }

    @Test("relationshipKeyPathsForPrefetching reads the referenced models with the fetch")
    func prefetching() throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(MemosV1.self, at: dir.path("memos.trove"))
        let seed = ModelContext(container)
        seed.insert(Binder(id: 1, name: "one"))
        seed.insert(Binder(id: 2, name: "two"))
        for i in 1...6 {
            seed.insert(Memo(id: Int64(i), title: "memo \(i)", folderID: Int64(i % 2 + 1)))
        }
        try seed.save()
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<Memo>()
        descriptor.relationshipKeyPathsForPrefetching = [\.folderID]
        let memos = try context.fetch(descriptor)
        #expect(memos.count == 6)
        for id in [Int64(1), 2] {
            let binder: Binder? = context.registeredModel(
                for: PersistentIdentifier(try #require(try seed.model(Binder.self, id: id))))
            #expect(binder?.name == (id == 1 ? "one" : "two"))
        }
    }
}

extension PersistentIdentifier {
    /// The identifier of a model (test shorthand).
    init<M: PersistentModel>(_ model: M) { self = model.persistentModelID }
}

extension ModelContextTests {
    @Test(
        "includePendingChanges: unsaved inserts the predicate accepts join the fetch, in order, within the limit"
    )
    func pendingInserts() throws {
        let dir = try TemporaryDirectory()
        let context = ModelContext(try Self.saved(dir, articles: 6))
        context.insert(Article(id: 10, title: "pending high", rating: 4))
        context.insert(Article(id: 11, title: "pending low", rating: 0))
        let deleted = Article(id: 12, title: "pending deleted", rating: 4)
        context.insert(deleted)
        context.delete(deleted)
        var descriptor = FetchDescriptor<Article>(
            predicate: #Predicate { $0.rating >= 3 },
            sortBy: [SortDescriptor(\.rating), SortDescriptor(\.id)])
        #expect(try context.fetch(descriptor).map(\.id) == [3, 4, 10])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 1
        #expect(try context.fetch(descriptor).map(\.id) == [4])
        descriptor.includePendingChanges = false
        descriptor.fetchOffset = nil
        descriptor.fetchLimit = nil
        #expect(try context.fetch(descriptor).map(\.id) == [3, 4])
        // Saved, they are stored rows like the others (and not listed twice).
        try context.save()
        #expect(
            try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)])).map(\.id)
                == [
                    1, 2, 3, 4, 5, 6, 10, 11,
                ])
    }
}
