import Foundation
import Observation
import Testing
import TroveSQLite
import TroveTestSupport

@testable import Trove

/// Live queries on one process: initial value, one value per relevant commit, nothing for
/// unrelated writes, coalescing, other connections of the process, raw SQL regions, cancellation.
/// (Other processes: TroveReliabilityTests, "Live queries across processes".)
@Suite("LiveQuery", .timeLimit(.minutes(10)))
struct LiveQueryTests {
    static let schema = DocumentSchema(
        fields: [.text("category"), .integer("n", default: 0)],
        indexes: [IndexDefinition([Field("category")])])

    static func open() async throws -> (
        TemporaryDirectory, Database, DocumentCollection, DocumentCollection
    ) {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("live.trove"))
        return (
            dir, db, try await db.documents("items", schema: schema),
            try await db.documents("other", schema: schema)
        )
    }

    static func item(_ id: Int64, _ category: String, n: Int = 0) -> Document {
        Document(id: .int(id), ["category": .string(category), "n": .int(Int64(n))])
    }

    /// Counts how often an observed read actually ran.
    final class Runs: @unchecked Sendable {
        // @unchecked Sendable: `count` is only touched under `lock`.
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    /// An observed count of category c0 whose read runs are counted.
    static func countedC0(_ db: Database, _ runs: Runs) -> LiveQuery<Int> {
        db.observe { r in
            runs.increment()
            return try r.documents("items").count(where: Field("category") == "c0")
        }
    }

    @Test(
        "the first value is the current result; each relevant commit yields exactly the new result once"
    )
    func initialAndOnePerCommit() async throws {
        let (dir, db, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        try await items.insert([Self.item(1, "c0"), Self.item(2, "c1")])
        let runs = Runs()
        var iterator = Self.countedC0(db, runs).makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        #expect(runs.value == 1)
        for i in 0..<20 {
            try await items.insert(Self.item(Int64(10 + i), "c0"))
            #expect(try await iterator.next() == 2 + i)
        }
        // One read per commit: the consumer kept up, and nothing else woke a read.
        #expect(runs.value == 21)
    }

    /// Waits until the hub's subscribers were woken after `mark` and are all waiting again: every
    /// change announced so far (by commit hooks or the poller) has been handled.
    static func settle(_ hub: ChangeHub, after mark: Int) async {
        // A cancelled test (its time limit passed) stops here: Task.sleep then throws at once, and
        // swallowing that would spin.
        while !(hub.wakesTaken > mark && hub.allWaiting) {
            do { try await Task.sleep(for: .milliseconds(2)) } catch { return }
        }
    }

    @Test(
        "writes to another collection run no read; a write that leaves the result equal yields nothing"
    )
    func unrelatedWrites() async throws {
        let (dir, db, items, other) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let runs = Runs()
        let query = Self.countedC0(db, runs)
        let values = AsyncStream<Int>.makeStream()
        let consumer = Task { for try await count in query { values.continuation.yield(count) } }
        defer { consumer.cancel() }
        var delivered = values.stream.makeAsyncIterator()
        #expect(await delivered.next() == 0)

        // While the consumer waits: the poller wakes it (our writer moved data_version), the
        // change logs show nothing it read changed, and no read runs.
        var mark = db.changeHub.wakesTaken
        for i in 0..<10 { try await other.insert(Self.item(Int64(i), "c0")) }
        try await db.execute(
            script: "CREATE TABLE audit(note TEXT); INSERT INTO audit VALUES ('x')")
        await Self.settle(db.changeHub, after: mark)
        #expect(runs.value == 1)

        // Same collection, result unchanged: one read, nothing yielded.
        mark = db.changeHub.wakesTaken
        try await items.insert(Self.item(2, "c1"))
        await Self.settle(db.changeHub, after: mark)
        #expect(runs.value == 2)
        try await items.patch(2, [Field("n"): 5])
        try await items.insert(Self.item(3, "c0"))
        #expect(await delivered.next() == 1)
    }

    @Test(
        "a burst of commits while the consumer is busy costs one read and yields only the latest result"
    )
    func coalescing() async throws {
        let (dir, db, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let runs = Runs()
        var iterator = Self.countedC0(db, runs).makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        for i in 0..<50 { try await items.insert(Self.item(Int64(i), "c0")) }
        #expect(try await iterator.next() == 50)
        #expect(runs.value == 2)
        // A burst inside one transaction, and one spread over commits, each delivers its end state.
        try await db.write { tx in
            let w = try tx.documents("items")
            for i in 50..<60 { try w.insert(Self.item(Int64(i), "c0")) }
        }
        #expect(try await iterator.next() == 60)
    }

    @Test("commits through another Database on the same file are seen at once")
    func secondDatabase() async throws {
        let (dir, _, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let second = try Database(path: dir.path("live.trove"))
        let items2 = try await second.documents(named: "items")
        var iterator = items.observeCount(where: Field("category") == "c0").makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        for i in 0..<5 {
            let start = ContinuousClock.now
            try await items2.insert(Self.item(Int64(i), "c0"))
            #expect(try await iterator.next() == i + 1)
            // The exact in-process path, not the poller: well under a second even on a busy machine.
            #expect(ContinuousClock.now - start < .seconds(1))
        }
        // A raw SQL write through the second database is a commit like any other.
        try await second.execute("DELETE FROM items WHERE id = ?", bindings: [.integer(0)])
        #expect(try await iterator.next() == 4)
        _ = items
    }

    @Test(
        "concurrent writers on two databases: no wake is lost, values only grow, the last one is the end state"
    )
    func concurrentWriters() async throws {
        let (dir, _, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let second = try await Database(path: dir.path("live.trove")).documents(named: "items")
        let query = items.observeCount(where: Field("category") == "c0")
        let consumer = Task {
            var seen: [Int] = []
            for try await count in query {
                seen.append(count)
                if count == 100 { break }
            }
            return seen
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                let target = writer % 2 == 0 ? items : second
                group.addTask {
                    for i in 0..<25 {
                        try await target.insert(
                            Self.item(Int64(writer * 1000 + i), i % 5 == 0 ? "c1" : "c0"))
                    }
                    for i in 0..<5 {
                        try await target.insert(Self.item(Int64(writer * 1000 + 100 + i), "c0"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let seen = try await consumer.value
        #expect(seen.last == 100)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test("rows deleted by a foreign-key cascade reach observations of the referencing collection")
    func cascadeDeletes() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let db = try Database(path: dir.path("cascade.trove"))
        let authors = try await db.documents(
            "authors", schema: DocumentSchema(fields: [.text("name")]))
        let books = try await db.documents(
            "books",
            schema: DocumentSchema(fields: [
                .text("title"), .reference("author", to: "authors", onDelete: .cascade),
            ]))
        try await authors.insert([
            Document(id: 1, ["name": "Le Guin"]), Document(id: 2, ["name": "Herbert"]),
        ])
        try await books.insert([
            Document(id: 1, ["title": "Earthsea", "author": 1]),
            Document(id: 2, ["title": "Dune", "author": 2]),
        ])
        var titles = books.observe(Query().sorted(by: .ascending("title"))).makeAsyncIterator()
        #expect(try await titles.next()?.map(\.id) == [2, 1])
        try await authors.delete(id: 1)  // cascades to book 1: a commit that touches "books" too
        #expect(try await titles.next()?.map(\.id) == [2])
    }

    @Test("fetch, one document, aggregate and search observations follow their results")
    func observeKinds() async throws {
        let dir = try TemporaryDirectory()
        defer { withExtendedLifetime(dir) {} }
        let db = try Database(path: dir.path("kinds.trove"))
        let notes = try await db.documents(
            "notes",
            schema: DocumentSchema(
                fields: [.text("body"), .integer("year")],
                fullText: FullTextDefinition(fields: ["body"])))
        var fetched = notes.observe(Query(Field("year") >= 2000).sorted(by: .ascending("year")))
            .makeAsyncIterator()
        var one = notes.observe(id: 2).makeAsyncIterator()
        var perYear = notes.observeAggregate([.count()], groupBy: [Field("year")])
            .makeAsyncIterator()
        var hits = notes.observeSearch(Query().matching("dentist").limit(5)).makeAsyncIterator()
        #expect(try await fetched.next() == [])
        #expect(try await one.next() == .some(nil))
        #expect(try await perYear.next() == [])
        #expect(try await hits.next()?.isEmpty == true)

        try await notes.insert([
            Document(id: 1, ["body": "dentist on tuesday", "year": 2024]),
            Document(id: 2, ["body": "buy milk", "year": 1999]),
        ])
        #expect(try await fetched.next()?.map(\.id) == [1])
        #expect(try await one.next()??["body"] == "buy milk")
        let groups = try #require(try await perYear.next())
        #expect(groups.count == 2 && groups.allSatisfy { $0.values["count"] == 1 })
        #expect(try await hits.next()?.map(\.record.id) == [1])

        try await notes.patch(2, [Field("body"): "dentist again"])
        #expect(try await one.next()??["body"] == "dentist again")
        #expect(try await hits.next()?.count == 2)
        try await notes.delete(id: 2)
        #expect(try await one.next() == .some(nil))
    }

    @Test("a read over two collections follows both, and a third collection's writes run no read")
    func twoCollections() async throws {
        let (dir, db, items, other) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let third = try await db.documents("third", schema: Self.schema)
        let runs = Runs()
        let both = db.observe { r in
            runs.increment()
            return [try r.documents("items").count(), try r.documents("other").count()]
        }
        let values = AsyncStream<[Int]>.makeStream()
        let consumer = Task { for try await counts in both { values.continuation.yield(counts) } }
        defer { consumer.cancel() }
        var delivered = values.stream.makeAsyncIterator()
        #expect(await delivered.next() == [0, 0])
        try await other.insert(Self.item(1, "c0"))
        #expect(await delivered.next() == [0, 1])
        try await items.insert(Self.item(1, "c0"))
        #expect(await delivered.next() == [1, 1])
        let mark = db.changeHub.wakesTaken
        try await third.insert(Self.item(1, "c0"))
        await Self.settle(db.changeHub, after: mark)
        #expect(runs.value == 3)
    }

    @Test(
        "a raw SQL read tracks the tables it reads: its own table's commits yield, others' do not")
    func rawSQLRegion() async throws {
        let (dir, db, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        try await db.execute(script: "CREATE TABLE audit(note TEXT); CREATE TABLE unrelated(x)")
        var iterator = db.observe { r in
            try r.query("SELECT count(*) FROM audit").first?.int64(at: 0) ?? -1
        }
        .makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        try await db.execute("INSERT INTO unrelated VALUES (1)")
        try await db.execute("INSERT INTO audit VALUES (?)", bindings: ["one"])
        #expect(try await iterator.next() == 1)
        _ = try await db.write { tx in try tx.execute("INSERT INTO audit VALUES ('two'), ('three')")
        }
        #expect(try await iterator.next() == 3)
        // Raw SQL over a collection's table is tracked through the collection's change log.
        var overItems = db.observe { r in
            try r.query("SELECT count(*) FROM items").first?.int64(at: 0) ?? -1
        }
        .makeAsyncIterator()
        #expect(try await overItems.next() == 0)
        try await items.insert(Self.item(1, "c9"))
        #expect(try await overItems.next() == 1)
    }

    @Test(
        "cancelling the consuming task ends the sequence and releases the subscription and poller")
    func cancellation() async throws {
        let (dir, db, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let query = items.observeCount()
        let first = AsyncStream<Int>.makeStream()
        let consumer = Task {
            var seen: [Int] = []
            for try await count in query {
                seen.append(count)
                first.continuation.yield(count)
            }
            return seen
        }
        var delivered = first.stream.makeAsyncIterator()
        #expect(await delivered.next() == 0)
        #expect(db.changeHub.subscriberCount == 1 && db.changeHub.isPolling)
        try await items.insert(Self.item(1, "c0"))
        #expect(await delivered.next() == 1)
        consumer.cancel()
        #expect(try await consumer.value == [0, 1])
        #expect(db.changeHub.subscriberCount == 0 && !db.changeHub.isPolling)
        // Dropping an iterator that was never finished releases it too.
        do {
            var iterator = query.makeAsyncIterator()
            _ = try await iterator.next()
            #expect(db.changeHub.subscriberCount == 1)
        }
        #expect(db.changeHub.subscriberCount == 0)
    }

    @Test("a read that throws ends the sequence with its error")
    func errorsEndTheSequence() async throws {
        let (dir, db, _, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        var iterator = db.observe { r in try r.documents("missing").count() }.makeAsyncIterator()
        await #expect(throws: TroveError.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test("in-memory databases are observed too (reads on the writer, no poller)")
    func inMemory() async throws {
        let db = try Database()
        let items = try await db.documents("items", schema: Self.schema)
        var iterator = items.observeCount().makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        #expect(!db.changeHub.isPolling)
        for i in 0..<3 {
            try await items.insert(Self.item(Int64(i), "c0"))
            #expect(try await iterator.next() == i + 1)
        }
    }

    @MainActor
    @Test("LiveResults holds the latest value and the error, updated on the main actor")
    func liveResults() async throws {
        let (dir, db, items, _) = try await Self.open()
        defer { withExtendedLifetime(dir) {} }
        let results = LiveResults(items.observeCount(where: Field("category") == "c0"))
        await results.waitForUpdates(1)
        #expect(results.value == 0 && results.error == nil)
        try await items.insert(Self.item(1, "c0"))
        await results.waitForUpdates(2)
        #expect(results.value == 1 && results.updates == 2)

        // Observation tracking sees the change (what SwiftUI relies on).
        let changed = AsyncStream<Void>.makeStream()
        withObservationTracking {
            _ = results.value
        } onChange: {
            changed.continuation.yield()
        }
        try await items.insert(Self.item(2, "c0"))
        var iterator = changed.stream.makeAsyncIterator()
        await iterator.next()
        await results.waitForUpdates(3)
        #expect(results.value == 2)
        results.cancel()
        await results.waitForUpdates(4)
        #expect(results.isFinished && results.error == nil)

        let failing = LiveResults(db.observe { r in try r.documents("missing").count() })
        await failing.waitForUpdates(1)
        #expect(failing.isFinished && failing.value == nil && failing.error is TroveError)

        // Releasing the object stops its observation (the subscription leaves the hub).
        var released: LiveResults<Int>? = LiveResults(items.observeCount())
        await released?.waitForUpdates(1)
        #expect(db.changeHub.subscriberCount == 1)
        released = nil
        while db.changeHub.subscriberCount > 0 { try await Task.sleep(for: .milliseconds(2)) }
        _ = released
    }
}

@Suite("LiveQuery docs")
struct LiveQueryDocsTests {
    @Test("the Live queries article quotes Examples/LiveQueries whole; the README quotes it")
    func docsQuoteExample() throws {
        let example = try DocumentationQuotes.text("Examples/LiveQueries/main.swift")
        let quoted = try #require(
            example.range(of: "/// A model type").map { String(example[$0.lowerBound...]) })
        let article = try DocumentationQuotes.text("\(DocumentationQuotes.catalog)/LiveQueries.md")
        #expect(
            DocumentationQuotes.codeBlocks(in: article).contains(
                quoted.trimmingCharacters(in: .newlines)))
        let section = try #require(
            DocumentationQuotes.section(
                "### Live queries", of: try DocumentationQuotes.text("README.md")))
        let blocks = DocumentationQuotes.codeBlocks(in: section)
        #expect(
            !blocks.isEmpty && blocks.allSatisfy { DocumentationQuotes.isExcerpt($0, of: example) })
    }
}
