import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Background model context")
struct BackgroundModelContextTests {
    @Test("imports from a Task off the main actor; the main context then reads what it saved")
    @MainActor
    func importFromTask() async throws {
        let dir = try TemporaryDirectory()
        let container = try await ModelContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let background = container.backgroundContext()
        let saved = try await Task.detached {
            try await background.perform { context in
                for i in 1...500 { try context.insert(Article(id: Int64(i), title: "Imported \(i)", rating: i % 3)) }
                try await context.save()
                let top = try await context.fetchAll(#Predicate<Article> { $0.rating == 2 })
                for article in top { article.pinned = true }
                try await context.save()
                return top.count
            }
        }.value
        #expect(saved == 167)
        let pinned = try await container.mainContext.fetchAll(#Predicate<Article> { $0.pinned })
        #expect(pinned.count == 167)
    }

    @Test("two background contexts editing one row: the second save is a conflict")
    func twoContexts() async throws {
        let dir = try TemporaryDirectory()
        let container = try await ModelContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let (a, b) = (container.backgroundContext(), container.backgroundContext())
        try await a.perform { context in
            try context.insert(Article(id: 1, title: "shared"))
            try await context.save()
        }
        try await b.perform { context in _ = try await context.fetchAll(Article.self) }
        try await a.perform { context in
            try #require(try await context.model(Article.self, id: 1)).title = "from a"
            try await context.save()
        }
        await #expect(throws: TroveError.modelConflict(model: "Article", id: .int(1), fields: ["title"])) {
            try await b.perform { context in
                try #require(try await context.model(Article.self, id: 1)).body = "from b"
                try await context.save()
            }
        }
    }

    @Test("a live query through a background context delivers its instances there, updated by commits elsewhere")
    func liveQuery() async throws {
        let dir = try TemporaryDirectory()
        let container = try await ModelContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let background = container.backgroundContext()
        let seen = Deliveries()
        let watching = try await background.perform { context in
            try context.observe(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)])) { articles in
                seen.append(articles.map(\.title), articles.map(ObjectIdentifier.init))
            }
        }
        defer { watching.cancel() }
        try await container.backgroundContext().perform { other in
            try other.insert(Article(id: 1, title: "one"))
            try await other.save()
        }
        for _ in 0..<500 where seen.last != ["one"] { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.last == ["one"])
        // The delivered instance is the background context's own: the same one a fetch returns.
        let delivered = seen.lastInstances
        let same = try await background.perform { context in
            try await context.model(Article.self, id: 1).map(ObjectIdentifier.init) == delivered.first
        }
        #expect(same)
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
