import Foundation
import Testing
import Trove
import TroveTestSupport

@Suite("Model context")
@MainActor
struct ModelContextTests {
    /// A container on a temporary file, with `count` articles saved.
    static func container(_ dir: TemporaryDirectory, articles count: Int = 0) async throws
        -> ModelContainer
    {
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let context = container.mainContext
        // These tests save by hand; autosave has a test of its own.
        context.autosaveEnabled = false
        for i in 0..<Int64(count) {
            context.insert(
                Article(
                    id: i + 1, title: "Article \(i + 1)", body: "Body \(i + 1)", rating: Int(i % 5))
            )
        }
        try context.save()
        return container
    }

    @Test("the issue's shape: insert, change, save, fetch by predicate, delete")
    func shape() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ArticlesV1.self, at: dir.path("blog.trove"))
        let context = container.mainContext
        let post = Article(id: 1, title: "How to use it?", body: "It's very easy.")
        context.insert(post)
        post.body = "What did I tell you?"
        try context.save()
        let posts = try context.fetch(
            FetchDescriptor(predicate: #Predicate<Article> { $0.title.contains("it") }))
        #expect(posts.count == 1 && posts[0] === post && posts[0].body == "What did I tell you?")
        context.delete(post)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Article>()).isEmpty)
        #expect(
            try await container.database.query("SELECT count(*) AS n FROM \"Article\"").first?
                .int64("n") == 0)
    }

    @Test(
        "a fetch leaves out models deleted in the context and keeps the order of the rest, tracked ones as tracked"
    )
    func fetchWithoutDeleted() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 6)
        let context = container.mainContext
        let byID = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)])
        let first = try context.fetch(byID)
        context.delete(first[1])
        context.delete(first[4])
        let second = try context.fetch(byID)
        #expect(second.map(\.id) == [1, 3, 4, 6])
        #expect(second[0] === first[0] && second[1] === first[2] && second[3] === first[5])
        context.rollback()
        #expect(try context.fetch(byID).map(\.id) == [1, 2, 3, 4, 5, 6])
    }

    @Test(
        "after most tracked rows are deleted and forgotten, a save still finds every change among the rest"
    )
    func changesAfterManyDeletes() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 40)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)]))
        // 30 of 40 deleted and saved: the context stops tracking them (more than half).
        for article in articles where article.id % 4 != 0 { context.delete(article) }
        try context.save()
        // Rows fetched again, inserted and deleted again, interleaved with the survivors.
        context.insert(Article(id: 100, title: "New", body: "b"))
        try context.save()
        let survivors = articles.filter { $0.id % 4 == 0 }
        for article in survivors { article.rating = 7 }
        let added = try #require(try context.model(Article.self, id: 100))
        added.title = "Renamed"
        try context.save()
        let stored = try await container.database.query(
            "SELECT id, rating, title FROM \"Article\" ORDER BY id")
        #expect(stored.map { $0.int64("id") } == survivors.map(\.id) + [100])
        #expect(stored.dropLast().allSatisfy { $0.int64("rating") == 7 })
        #expect(stored.last?.string("title") == "Renamed")
        #expect(!context.hasChanges)
    }

    @Test(
        "a tracked model whose id was changed is refused at save, and nothing of that save is written"
    )
    func changedID() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 3)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)]))
        articles[0].title = "Changed"
        articles[1].id = 99
        await #expect(throws: TroveError.self) { try context.save() }
        let stored = try await container.database.query(
            "SELECT id, title FROM \"Article\" ORDER BY id")
        #expect(stored.map { $0.int64("id") } == [1, 2, 3])
        #expect(stored.first?.string("title") == "Article 1")
        // Put back, the same save goes through.
        articles[1].id = 2
        try context.save()
        #expect(
            try await container.database.query("SELECT title FROM \"Article\" WHERE id = 1").first?
                .string("title")
                == "Changed")
    }

    @Test("one instance per row within a context; different instances across contexts")
    func identity() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 10)
        let context = container.mainContext
        let first = try context.fetch(
            FetchDescriptor(predicate: #Predicate<Article> { $0.rating >= 2 }))
        let second = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.rating)]))
        let byID = Dictionary(uniqueKeysWithValues: second.map { ($0.id, $0) })
        #expect(!first.isEmpty)
        for article in first { #expect(byID[article.id] === article) }
        #expect(try context.model(Article.self, id: first[0].id) === first[0])

        let other = Worker(modelContainer: container)
        let sameInOther = try await other.run { context in
            let article = try context.model(Article.self, id: 3)
            return article.map { ObjectIdentifier($0) }
        }
        #expect(sameInOther != nil)
        #expect(sameInOther != ObjectIdentifier(byID[3]!))
    }

    @Test(
        "predicates and sorts name @Observable properties: booleans, optionals, enums, nested values"
    )
    func predicates() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let context = container.mainContext
        context.insert(
            Article(
                id: 1, title: "a", pinned: true, archived: false, subtitle: "s", status: .published,
                stats: .init(views: 10, likes: 1)))
        context.insert(
            Article(
                id: 2, title: "b", pinned: false, archived: true, stats: .init(views: 5, likes: 9)))
        context.insert(Article(id: 3, title: "c", pinned: true, archived: true, status: .published))
        try context.save()
        func ids(_ predicate: Predicate<Article>) throws -> [Int64] {
            try context.fetch(FetchDescriptor(predicate: predicate)).map(\.id)
        }
        #expect(try ids(#Predicate { $0.pinned }) == [1, 3])
        #expect(try ids(#Predicate { $0.archived && !$0.pinned }) == [2])
        #expect(try ids(#Predicate { $0.subtitle != nil }) == [1])
        let published = Article.Status.published
        #expect(try ids(#Predicate { $0.status == published }) == [1, 3])
        #expect(try ids(#Predicate { $0.stats.likes > 5 }) == [2])
        let sorted = try context.fetch(
            FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title, order: .reverse)]))
        #expect(sorted.map(\.id) == [3, 2, 1])
    }

    @Test("save sends only the changed columns, one update per changed row")
    func onlyChangedFields() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 20)
        let database = container.database
        // `AFTER UPDATE OF <column>` fires only when the statement's SET names the column.
        try await database.execute(
            script: """
                CREATE TABLE audit(column TEXT, id INTEGER);
                CREATE TRIGGER audit_title AFTER UPDATE OF title ON "Article" BEGIN INSERT INTO audit VALUES ('title', new.id); END;
                CREATE TRIGGER audit_body AFTER UPDATE OF body ON "Article" BEGIN INSERT INTO audit VALUES ('body', new.id); END;
                CREATE TRIGGER audit_rating AFTER UPDATE OF rating ON "Article" BEGIN INSERT INTO audit VALUES ('rating', new.id); END;
                CREATE TRIGGER audit_stats AFTER UPDATE OF stats ON "Article" BEGIN INSERT INTO audit VALUES ('stats', new.id); END;
                """)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>())
        #expect(!context.hasChanges)
        articles[3].title = "Retitled"
        articles[7].rating = 99
        articles[7].stats.likes = 3
        articles[9].body = articles[9].body  // assigned, not changed
        #expect(context.hasChanges)
        let logBefore =
            try await database.query("SELECT max(seq) AS s FROM \"Article_log\"").first?.int64("s")
            ?? 0
        try context.save()
        #expect(!context.hasChanges)
        let audit = try await database.query("SELECT column, id FROM audit ORDER BY id, column")
            .map { "\($0.string("column")!)#\($0.int64("id")!)" }
        #expect(audit == ["title#4", "rating#8", "stats#8"])
        let logged = try await database.query(
            "SELECT rid FROM \"Article_log\" WHERE seq > ? ORDER BY seq",
            bindings: [.integer(logBefore)]
        )
        .map { $0.int64("rid") }
        #expect(logged == [4, 8] || logged == [8, 4])
        let versions = try await database.query(
            "SELECT id, _version FROM \"Article\" WHERE _version > 1 ORDER BY id"
        )
        .map { [$0.int64("id")!, $0.int64("_version")!] }
        #expect(versions == [[4, 2], [8, 2]])
    }

    @Test(
        "a row changed by raw SQL since it was read makes save a conflict naming the fields; nothing is written"
    )
    func conflictWithRawSQL() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 5)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>())
        articles[0].title = "mine"
        articles[1].title = "also mine"
        context.insert(Article(id: 100, title: "new"))
        context.delete(articles[4])
        try await container.database.execute(
            "UPDATE \"Article\" SET body = 'theirs', rating = 7 WHERE id = 2")
        await #expect(
            throws: TroveError.modelConflict(
                model: "Article", id: .int(2), fields: ["body", "rating"])
        ) {
            try context.save()
        }
        let rows = try await container.database.query(
            "SELECT id, title FROM \"Article\" ORDER BY id")
        #expect(rows.map { $0.int64("id")! } == [1, 2, 3, 4, 5])
        #expect(rows.map { $0.string("title")! } == (1...5).map { "Article \($0)" })
        #expect(context.hasChanges)
    }

    @Test("a row changed or deleted by another context since it was read is a conflict")
    func conflictWithAnotherContext() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 3)
        let context = container.mainContext
        let mine = try #require(try context.model(Article.self, id: 1))
        let background = Worker(modelContainer: container)
        try await background.run { context in
            let theirs = try #require(try context.model(Article.self, id: 1))
            theirs.rating = 42
            context.delete(try #require(try context.model(Article.self, id: 2)))
            try context.save()
        }
        mine.title = "edited"
        await #expect(
            throws: TroveError.modelConflict(model: "Article", id: .int(1), fields: ["rating"])
        ) {
            try context.save()
        }
        context.rollback()
        let gone = try #require(try context.model(Article.self, id: 2))
        context.delete(gone)
        await #expect(throws: TroveError.modelConflict(model: "Article", id: .int(2), fields: [])) {
            try context.save()
        }
        #expect(
            try await container.database.query("SELECT title FROM \"Article\" WHERE id = 1").first?
                .string("title")
                == "Article 1")
    }

    @Test(
        "a fetch refreshes an unchanged instance from a newer row, and keeps unsaved changes of a changed one"
    )
    func refresh() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 2)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>())
        articles[1].body = "unsaved"
        try await container.database.execute(
            "UPDATE \"Article\" SET title = 'fresh' WHERE id IN (1, 2)")
        let again = try context.fetch(FetchDescriptor<Article>())
        #expect(again[0] === articles[0] && again[0].title == "fresh")
        #expect(
            again[1] === articles[1] && again[1].title == "Article 2" && again[1].body == "unsaved")
        // Article 2's unsaved change was made on the version before the raw update.
        articles[0].rating = 3
        await #expect(
            throws: TroveError.modelConflict(model: "Article", id: .int(2), fields: ["title"])
        ) {
            try context.save()
        }
        context.rollback()
        let fresh = try context.fetch(FetchDescriptor<Article>())
        #expect(fresh[1] === articles[1] && fresh[1].title == "fresh" && fresh[1].body == "Body 2")
        articles[0].rating = 3
        try context.save()  // both instances are at the rows' versions now: no conflict
        #expect(
            try await container.database.query("SELECT rating FROM \"Article\" WHERE id = 1").first?
                .int64("rating")
                == 3)
    }

    @Test("rollback restores every field of every model; inserted ones go, deleted ones come back")
    func rollback() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 4)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>())
        let before = articles.map {
            [
                $0.title, $0.body, "\($0.rating)", "\($0.pinned)", "\($0.archived)",
                "\($0.subtitle as Any)",
                $0.status.rawValue, "\($0.stats)",
            ]
        }
        for article in articles {
            article.title += "!"
            article.body = "changed"
            article.rating += 10
            article.pinned.toggle()
            article.archived.toggle()
            article.subtitle = "sub"
            article.status = .published
            article.stats = .init(views: 1, likes: 2)
        }
        let added = Article(id: 50, title: "added")
        context.insert(added)
        context.delete(articles[2])
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        let after = articles.map {
            [
                $0.title, $0.body, "\($0.rating)", "\($0.pinned)", "\($0.archived)",
                "\($0.subtitle as Any)",
                $0.status.rawValue, "\($0.stats)",
            ]
        }
        #expect(after == before)
        #expect(try context.model(Article.self, id: 50) == nil)
        #expect(try context.fetch(FetchDescriptor<Article>()).map(\.id) == [1, 2, 3, 4])
        #expect(try context.model(Article.self, id: 3) === articles[2])
        try context.save()
        #expect(
            try await container.database.query("SELECT count(*) AS n FROM \"Article\"").first?
                .int64("n") == 4)
    }

    @Test("a failed save keeps every change pending; fixing it and saving again writes them")
    func failedSaveKeepsChanges() async throws {
        let dir = try TemporaryDirectory()
        _ = try await Self.container(dir, articles: 2)
        let container = try openContainer(ArticlesV1.self, at: dir.path("articles.trove"))
        let context = container.mainContext
        // the row exists; this context has not read it
        let duplicate = Article(id: 2, title: "duplicate")
        context.insert(duplicate)
        let first = try #require(try context.model(Article.self, id: 1))
        first.title = "kept"
        await #expect(throws: TroveError.duplicateDocumentID(.int(2))) { try context.save() }
        #expect(context.hasChanges && first.title == "kept")
        #expect(
            try await container.database.query("SELECT title FROM \"Article\" WHERE id = 1").first?
                .string("title")
                == "Article 1")
        context.delete(duplicate)
        try context.save()
        #expect(!context.hasChanges)
        #expect(
            try await container.database.query("SELECT title FROM \"Article\" ORDER BY id").map {
                $0.string("title")!
            }
                == ["kept", "Article 2"])
    }

    @Test("inserting a second instance with a tracked id is refused")
    func duplicateInstance() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 1)
        let context = container.mainContext
        _ = try context.fetch(FetchDescriptor<Article>())
        // SwiftData's insert does not throw: the error comes with the next save, which saves nothing.
        context.insert(Article(id: 1, title: "again"))
        #expect(throws: TroveError.duplicateDocumentID(.int(1))) { try context.save() }
        #expect(!context.hasChanges)
    }

    @Test(
        "a live query through a context delivers its instances, updated in place by commits elsewhere"
    )
    func liveQuery() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 2)
        let context = container.mainContext
        let first = try #require(try context.model(Article.self, id: 1))
        var deliveries: [[String]] = []
        var instances: [[ObjectIdentifier]] = []
        let watching = try context.observe(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.id)]))
        { articles in
            deliveries.append(articles.map(\.title))
            instances.append(articles.map(ObjectIdentifier.init))
        }
        defer { watching.cancel() }
        for _ in 0..<500 where deliveries.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        try await Worker(modelContainer: container).run { background in
            try #require(try background.model(Article.self, id: 1)).title = "Changed elsewhere"
            try background.insert(Article(id: 3, title: "Article 3"))
            try background.save()
        }
        for _ in 0..<500 where deliveries.last?.count != 3 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(deliveries.first == ["Article 1", "Article 2"])
        #expect(deliveries.last == ["Changed elsewhere", "Article 2", "Article 3"])
        #expect(first.title == "Changed elsewhere")
        #expect(instances.last?.first == ObjectIdentifier(first))
    }

    @Test("autosave saves inserts and deletes on the next turn of the main actor")
    func autosave() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir)
        let context = container.mainContext
        context.autosaveEnabled = true
        context.insert(Article(id: 7, title: "auto"))
        for _ in 0..<200 where context.hasChanges { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!context.hasChanges)
        #expect(context.autosaveError == nil)
        #expect(
            try await container.database.query("SELECT title FROM \"Article\" WHERE id = 7").first?
                .string("title")
                == "auto")
    }

    @Test(
        "changes made right after a fetch are saved: reassigned, mutated in place, nested, optional; equal values are not"
    )
    func changesRightAfterFetch() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 6)
        let database = container.database
        let long = "A body long enough to live in its own storage, not inline"
        try await database.execute("UPDATE \"Article\" SET body = ?", bindings: [.text(long)])
        try await database.execute(
            script: """
                CREATE TABLE audit(column TEXT, id INTEGER);
                CREATE TRIGGER audit_title AFTER UPDATE OF title ON "Article" BEGIN INSERT INTO audit VALUES ('title', new.id); END;
                CREATE TRIGGER audit_body AFTER UPDATE OF body ON "Article" BEGIN INSERT INTO audit VALUES ('body', new.id); END;
                CREATE TRIGGER audit_stats AFTER UPDATE OF stats ON "Article" BEGIN INSERT INTO audit VALUES ('stats', new.id); END;
                CREATE TRIGGER audit_subtitle AFTER UPDATE OF subtitle ON "Article" BEGIN INSERT INTO audit VALUES ('subtitle', new.id); END;
                """)
        let context = container.mainContext
        let articles = try context.fetch(FetchDescriptor<Article>())
        articles[0].title.append("!")  // mutated in place
        articles[1].stats.views += 1  // a nested value, in place
        articles[2].subtitle = "now set"  // nil to a value
        // equal contents in new storage: not a change
        articles[3].body = String(long.reversed().reversed())
        articles[4].title = "Article 5"  // equal small string: not a change
        #expect(context.hasChanges)
        try context.save()
        #expect(!context.hasChanges)
        let audit = try await database.query("SELECT column, id FROM audit ORDER BY id, column")
            .map { "\($0.string("column")!)#\($0.int64("id")!)" }
        #expect(audit == ["title#1", "stats#2", "subtitle#3"])
        let rows = try await database.query(
            "SELECT title, json_extract(stats, '$.views') AS views, subtitle FROM \"Article\" WHERE id <= 3 ORDER BY id"
        )
        #expect(rows[0].string("title") == "Article 1!")
        #expect(rows[1].int64("views") == 1)
        #expect(rows[2].string("subtitle") == "now set")
        // What was saved is the new saved state: a rollback keeps it, a second change goes out alone.
        articles[2].subtitle = nil
        context.rollback()
        #expect(articles[2].subtitle == "now set" && articles[0].title == "Article 1!")
        articles[2].subtitle = nil
        try context.save()
        #expect(
            try await database.query("SELECT subtitle FROM \"Article\" WHERE id = 3").first?.string(
                "subtitle") == nil)
        #expect(try await database.query("SELECT count(*) AS n FROM audit").first?.int64("n") == 4)
    }

    @Test(
        "UUID and String ids left to Trove get time-ordered ids at insert; Int64 ids must be given")
    func generatedIDs() async throws {
        let dir = try TemporaryDirectory()
        let container = try openContainer(ScribblesV1.self, at: dir.path("memos.trove"))
        let context = container.mainContext
        let memos = (0..<50).map { Scribble(text: "memo \($0)") }
        for memo in memos { context.insert(memo) }
        let badge = Badge(name: "gold")
        context.insert(badge)
        #expect(memos.allSatisfy { $0.id != .unassigned })
        #expect(Set(memos.map(\.id)).count == 50)
        #expect(memos.map(\.id.uuidString) == memos.map(\.id.uuidString).sorted())  // time-ordered
        #expect(memos[0].id.uuidString.dropFirst(14).first == "7")  // UUIDv7
        #expect(badge.id != "" && UUID(uuidString: badge.id) != nil)
        try context.save()
        #expect(try context.model(Scribble.self, id: memos[7].id) === memos[7])
        let stored = try await container.database.query("SELECT id FROM \"Scribble\" ORDER BY id")
            .map {
                $0.string("id")!
            }
        #expect(stored == memos.map { $0.id.uuidString.lowercased() })
        let reader = ModelContext(try openContainer(ScribblesV1.self, at: container.database.path!))
        #expect(try reader.model(Badge.self, id: badge.id)?.name == "gold")
        context.insert(Article(id: .unassigned, title: "no id"))
        #expect(throws: TroveError.self) { try context.save() }
    }

    @Test("a save writes each model set since the last save, once; after a rollback, nothing")
    func savesWhatWasSet() async throws {
        let dir = try TemporaryDirectory()
        let container = try await Self.container(dir, articles: 60)
        let database = container.database
        func versions() async throws -> [Int64: Int64] {
            var versions: [Int64: Int64] = [:]
            for row in try await database.query("SELECT id, _version FROM \"Article\"") {
                versions[row.int64("id")!] = row.int64("_version")
            }
            return versions
        }
        let context = ModelContext(container)
        context.autosaveEnabled = false
        let articles = Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchDescriptor<Article>()).map { ($0.id, $0) })
        var random = SeededGenerator(seed: 77)
        var changed: Set<Int64> = []
        for (id, article) in articles where id > 2 && Bool.random(using: &random) {
            article.rating += 1
            article.rating += 1
            changed.insert(id)
        }
        // Set to the value it has: compared, not written.
        articles[1]!.title = articles[1]!.title
        context.delete(articles[2]!)
        let before = try await versions()
        try context.save()
        #expect(!context.hasChanges)
        var after = try await versions()
        #expect(after[2] == nil && after.count == 59)
        for (id, version) in after {
            #expect(version == before[id]! + (changed.contains(id) ? 1 : 0), "article \(id)")
        }
        articles[3]!.title = "rolled back"
        context.rollback()
        try context.save()
        #expect(try await versions() == after)
        articles[4]!.title = "after the rollback"
        try context.save()
        after[4]! += 1
        #expect(try await versions() == after)
        #expect(articles[3]!.title == "Article 3")
    }
}
