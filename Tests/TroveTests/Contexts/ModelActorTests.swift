import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Model actor")
struct ModelActorTests {
    @Test("imports from a Task off the main actor; the main context then reads what it saved")
    @MainActor
    func importFromTask() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let background = Worker(modelContainer: container)
        let saved = try await Task.detached {
            try await background.run { context in
                for i in 1...500 {
                    context.insert(Article(id: Int64(i), title: "Imported \(i)", rating: i % 3))
                }
                try context.save()
                let top = try context.fetch(
                    FetchDescriptor(predicate: #Predicate<Article> { $0.rating == 2 }))
                for article in top { article.pinned = true }
                try context.save()
                return top.count
            }
        }.value
        #expect(saved == 167)
        let pinned = try container.mainContext.fetch(
            FetchDescriptor(predicate: #Predicate<Article> { $0.pinned }))
        #expect(pinned.count == 167)
    }

    @Test("two model actors editing one row: the second save is a conflict")
    func twoContexts() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let (a, b) = (Worker(modelContainer: container), Worker(modelContainer: container))
        try await a.run { context in
            context.insert(Article(id: 1, title: "shared"))
            try context.save()
        }
        try await b.run { context in _ = try context.fetch(FetchDescriptor<Article>()) }
        try await a.run { context in
            try #require(try context.model(Article.self, id: 1)).title = "from a"
            try context.save()
        }
        await #expect(
            throws: TroveError.modelConflict(model: "Article", id: .int(1), fields: ["title"])
        ) {
            try await b.run { context in
                try #require(try context.model(Article.self, id: 1)).body = "from b"
                try context.save()
            }
        }
    }

    @Test(
        "model actors and the database's writer save at the same time: SQLite serializes them, nothing is lost"
    )
    func concurrentWriters() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let tags = try await container.database.models(Tag.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<3 {
                let actor = Worker(modelContainer: container)
                group.addTask {
                    for batch in 0..<20 {
                        try await actor.run { context in
                            for i in 0..<10 {
                                context.insert(
                                    Article(
                                        id: Int64(worker * 1000 + batch * 10 + i + 1),
                                        title: "w\(worker)"))
                            }
                            try context.save()
                        }
                    }
                }
            }
            group.addTask {
                for i in 0..<50 { try await tags.insert(Tag(id: "tag\(i)", label: "\(i)")) }
            }
            try await group.waitForAll()
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Article>()) == 600)
        #expect(try await tags.count() == 50)
    }

    @Test(
        "a live query through a model actor's context delivers its instances there, updated by commits elsewhere"
    )
    func liveQuery() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let background = Worker(modelContainer: container)
        let seen = Deliveries()
        let watching = try await background.observeArticles(into: seen)
        defer { watching.cancel() }
        try await Worker(modelContainer: container).run { other in
            other.insert(Article(id: 1, title: "one"))
            try other.save()
        }
        for _ in 0..<500 where seen.last != ["one"] { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.last == ["one"])
        // The delivered instance is the background context's own: the same one a fetch returns.
        let delivered = seen.lastInstances
        let same = try await background.run { context in
            try context.model(Article.self, id: 1).map(ObjectIdentifier.init) == delivered.first
        }
        #expect(same)
    }
}

extension Worker {
    /// Observes the articles on the actor (the live query's deliveries run here).
    func observeArticles(into seen: Deliveries) throws -> Task<Void, any Error> {
        try modelContext.observe(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)])) {
            articles in
            seen.append(articles.map(\.title), articles.map(ObjectIdentifier.init))
        }
    }
}

/// What a live query delivered, from whichever actor it ran on.
final class Deliveries: @unchecked Sendable {
    // `values` is only touched while holding `lock`.
    private let lock = NSLock()
    private var values: [[String]] = []
    private var instances: [ObjectIdentifier] = []
    func append(_ value: [String], _ delivered: [ObjectIdentifier]) {
        lock.withLock {
            values.append(value)
            instances = delivered
        }
    }
    var last: [String]? { lock.withLock { values.last } }
    var lastInstances: [ObjectIdentifier] { lock.withLock { instances } }
}
