import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Expiry (time to live): visibility at the boundary second in every read path, purge, reopen.
@Suite("Expiry", .serialized)
struct ExpiryTests {
    static let start = Date(timeIntervalSince1970: 1_000_000)
    static let boundary = Date(timeIntervalSince1970: 1_000_100)

    static let schema = DocumentSchema(
        fields: [
            .text("title"), .integer("n", indexed: true), .vector("v", dimension: 4),
            .vector("w", dimension: 4),
        ],
        fullText: FullTextDefinition(fields: ["title"]),
        vectorIndexes: ["w": .hnsw()], allowsExpiry: true)

    static func vector(_ i: Int64) -> [Float] { [1, Float(i) / 10, Float(i % 3), 0.5] }

    /// 20 documents sharing the word "apple"; 1...10 expire at `boundary`, 11...20 never.
    static func seeded(_ dir: TemporaryDirectory, clock: ManualClock) async throws -> (
        Database, DocumentCollection
    ) {
        let db = try Database(path: dir.path("ttl.trove"), clock: clock)
        let docs = try await db.documents("docs", schema: schema)
        func doc(_ i: Int64) -> Document {
            Document(
                id: .int(i),
                [
                    "title": .string("apple \(i)"), "n": .int(i), "v": .vector(vector(i)),
                    "w": .vector(vector(i)),
                ])
        }
        try await docs.insert((1...10).map(doc), expiry: .at(boundary))
        try await docs.insert((11...20).map(doc))
        return (db, docs)
    }

    /// Everything each read path returns, as sets of ids (or counts).
    struct Seen: Equatable {
        var fetchOne: Bool
        var fetchAll: Set<Int64>
        var page: Set<Int64>
        var count: Int
        var countFiltered: Int
        var aggregateCount: Int
        var aggregateOverSearch: Int
        var flat: Set<Int64>
        var hnsw: Set<Int64>
        var text: Set<Int64>
        var hybrid: Set<Int64>
        var filteredVector: Set<Int64>
        var readScan: Set<Int64>
        var insideWrite: Set<Int64>
    }

    static func ids(_ hits: [Hit<Document>]) -> Set<Int64> {
        Set(hits.compactMap { $0.record.id.value.intValue })
    }
    static func ids(_ documents: [Document]) -> Set<Int64> {
        Set(documents.compactMap { $0.id.value.intValue })
    }

    static func observe(_ db: Database, _ docs: DocumentCollection) async throws -> Seen {
        let query = vector(5)
        let everything = Query().limit(50)
        let count = try await docs.aggregate([.count()]).first?.values["count"]?.intValue ?? -1
        let overSearch =
            try await docs.aggregate(
                [.count()], over: Query().nearest(to: query, in: "v").limit(50)
            )
            .first?.values["count"]?.intValue ?? -1
        let scan = try await db.read { r in
            var seen: Set<Int64> = []
            try r.documents("docs").scan {
                seen.insert($0.id.value.intValue!)
                return true
            }
            return seen
        }
        let inside = try await db.write { tx in
            ids(try tx.documents("docs").search(Query().nearest(to: query, in: "v").limit(50)))
        }
        return Seen(
            fetchOne: try await docs.fetch(id: 1) != nil,
            fetchAll: ids(try await docs.fetch()),
            page: ids(try await docs.page(everything).documents),
            count: try await docs.count(),
            countFiltered: try await docs.count(where: Field("n") <= 15),
            aggregateCount: Int(count),
            aggregateOverSearch: Int(overSearch),
            flat: ids(try await docs.search(everything.nearest(to: query, in: "v"))),
            hnsw: ids(try await docs.search(everything.nearest(to: query, in: "w"))),
            text: ids(try await docs.search(everything.matching(.typed("apple")))),
            hybrid: ids(
                try await docs.search(
                    everything.nearest(to: query, in: "v").matching(.typed("apple")))),
            filteredVector: ids(
                try await docs.search(Query(Field("n") <= 15).nearest(to: query, in: "v").limit(50))
            ),
            readScan: scan, insideWrite: inside)
    }

    static func expected(all: Bool) -> Seen {
        let ids = Set<Int64>(all ? Array(1...20) : Array(11...20))
        let filtered = ids.filter { $0 <= 15 }
        return Seen(
            fetchOne: all, fetchAll: ids, page: ids, count: ids.count,
            countFiltered: filtered.count,
            aggregateCount: ids.count, aggregateOverSearch: ids.count, flat: ids, hnsw: ids,
            text: ids, hybrid: ids,
            filteredVector: filtered, readScan: ids, insideWrite: ids)
    }

    @Test(
        "a document is visible in every read path until its expiry second, and in none from that second on"
    )
    func boundarySecond() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let (db, docs) = try await Self.seeded(dir, clock: clock)
        clock.set(Self.boundary.addingTimeInterval(-1))
        #expect(try await Self.observe(db, docs) == Self.expected(all: true))
        clock.set(Self.boundary.addingTimeInterval(-0.001))
        #expect(try await Self.observe(db, docs) == Self.expected(all: true))
        clock.set(Self.boundary)
        #expect(try await Self.observe(db, docs) == Self.expected(all: false))
        // Still in the table: nothing was purged, the reads left them out.
        #expect(try await db.query("SELECT count(*) FROM docs").first?.int64(at: 0) == 20)
        // k results whenever k visible documents exist, although the nearest ones expired.
        let top3 = try await docs.search(Query().nearest(to: Self.vector(5), in: "v").limit(3))
        #expect(top3.count == 3 && top3.allSatisfy { $0.record.id.value.intValue! > 10 })
        #expect(
            try await docs.explain(Query().nearest(to: Self.vector(1), in: "v")).contains {
                $0.contains("expired")
            })
    }

    @Test(
        "expired documents cannot be read, updated, patched or given a new expiry; their ids can be reused"
    )
    func writesAfterExpiry() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let (_, docs) = try await Self.seeded(dir, clock: clock)
        #expect(try await docs.expiry(of: 1) == Self.boundary)
        #expect(try await docs.expiry(of: 11) == nil)
        func replacement(_ title: String) -> Document {
            Document(
                id: 1,
                [
                    "title": .string(title), "n": 0, "v": .vector(Self.vector(1)),
                    "w": .vector(Self.vector(1)),
                ])
        }
        #expect(try await docs.update(replacement("updated")) == 2)
        #expect(try await docs.expiry(of: 1) == Self.boundary, "an update keeps the expiry")
        clock.set(Self.boundary)
        await #expect(throws: TroveError.documentNotFound(1)) { try await docs.expiry(of: 1) }
        await #expect(throws: TroveError.documentNotFound(1)) {
            try await docs.update(replacement("late"))
        }
        await #expect(throws: TroveError.documentNotFound(1)) {
            try await docs.patch(1, [Field("n"): 0])
        }
        await #expect(throws: TroveError.documentNotFound(1)) {
            try await docs.setExpiry(id: 1, .never)
        }
        try await docs.insert(
            Document(
                id: 1,
                [
                    "title": "new", "n": 1, "v": .vector(Self.vector(1)),
                    "w": .vector(Self.vector(1)),
                ]))
        #expect(try await docs.fetch(id: 1)?.fields["title"] == "new")
        #expect(try await docs.expiry(of: 1) == nil)
    }

    @Test("set, clear, time to live rounded up to the second, upsert clears")
    func setAndClear() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let (_, docs) = try await Self.seeded(dir, clock: clock)
        try await docs.setExpiry(id: 11, .after(.milliseconds(1_500)))
        #expect(try await docs.expiry(of: 11) == Self.start.addingTimeInterval(2))
        clock.advance(by: .seconds(1))
        #expect(try await docs.fetch(id: 11) != nil)
        clock.advance(by: .seconds(1))
        #expect(try await docs.fetch(id: 11) == nil)
        clock.set(Self.start)
        try await docs.setExpiry(id: 2, .never)
        #expect(try await docs.expiry(of: 2) == nil)
        let three = try #require(try await docs.fetch(id: 3))
        try await docs.upsert([three])
        #expect(try await docs.expiry(of: 3) == nil)
        try await docs.upsert([three], expiry: .after(.seconds(5)))
        #expect(try await docs.expiry(of: 3) == Self.start.addingTimeInterval(5))
    }

    @Test("expiry on a collection without it is a typed error and writes nothing")
    func disabled() async throws {
        let db = try Database()
        let plain = try await db.documents(
            "plain", schema: DocumentSchema(fields: [.text("title")]))
        await #expect(throws: TroveError.expiryDisabled(collection: "plain")) {
            try await plain.insert([Document(id: 1, ["title": "a"])], expiry: .after(.seconds(1)))
        }
        #expect(try await plain.count() == 0)
        try await plain.insert([Document(id: 1, ["title": "a"])], expiry: .never)
        #expect(try await plain.count() == 1)
    }

    @Test(
        "purge deletes expired rows with their full-text, B-tree and change-log entries in one transaction"
    )
    func purge() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        let (db, docs) = try await Self.seeded(dir, clock: clock)
        // load the in-memory index
        _ = try await docs.search(Query().nearest(to: Self.vector(1), in: "v"))
        #expect(try await docs.purgeExpired() == 0)
        clock.set(Self.boundary)
        #expect(try await docs.purgeExpired() == 10)
        #expect(try await db.query("SELECT count(*) FROM docs").first?.int64(at: 0) == 10)
        #expect(
            try await db.query("SELECT count(*) FROM docs_fts WHERE docs_fts MATCH 'apple'").first?
                .int64(at: 0) == 10)
        #expect(
            try await db.query("SELECT count(*) FROM docs_log WHERE op = 2").first?.int64(at: 0)
                == 10)
        #expect(try await docs.verify().isEmpty)
        #expect(try await docs.purgeExpired() == 0)
    }

    @Test("the background purge removes expired documents without being asked")
    func backgroundPurge() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.boundary)
        let (db, _) = try await Self.seeded(dir, clock: clock)
        await db.startPurgingExpired(every: .milliseconds(20), batchSize: 3)
        let deadline = ContinuousClock.now + .seconds(20)
        var left: Int64 = -1
        while ContinuousClock.now < deadline {
            left = try await db.query("SELECT count(*) FROM docs").first?.int64(at: 0) ?? -1
            if left == 10 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        await db.stopPurgingExpired()
        #expect(left == 10)
    }

    @Test("expiry survives reopening the file, exact to the second")
    func reopen() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.start)
        do { _ = try await Self.seeded(dir, clock: clock) }
        let later = ManualClock(Self.boundary.addingTimeInterval(-1))
        let db = try Database(path: dir.path("ttl.trove"), clock: later)
        let docs = try await db.documents(named: "docs")
        #expect(try await docs.expiry(of: 4) == Self.boundary)
        #expect(try await docs.count() == 20)
        later.advance(by: .seconds(1))
        #expect(try await docs.count() == 10)
        #expect(try await docs.fetch(id: 4) == nil)
    }

    @Test("collections without expiry keep their stored schema and table exactly as before")
    func optIn() async throws {
        let plain = DocumentSchema(fields: [.text("title")])
        let json = String(decoding: try JSONEncoder().encode(plain), as: UTF8.self)
        #expect(!json.contains("allowsExpiry"))
        #expect(try JSONDecoder().decode(DocumentSchema.self, from: Data(json.utf8)) == plain)
        let db = try Database()
        _ = try await db.documents("plain", schema: plain)
        let columns = try await db.query("SELECT name FROM pragma_table_info('plain')").compactMap {
            $0.string(at: 0)
        }
        #expect(columns == ["id", "_version", "title"])
        _ = try await db.documents(
            "timed", schema: DocumentSchema(fields: [.text("title")], allowsExpiry: true))
        let timed = try await db.query("SELECT name FROM pragma_table_info('timed')").compactMap {
            $0.string(at: 0)
        }
        #expect(timed == ["id", "_version", "title", "_expires"])
        await #expect(throws: TroveError.self) {
            _ = try await db.documents(
                "plain", schema: DocumentSchema(fields: [.text("title")], allowsExpiry: true))
        }
    }

    @Test("many expired documents waiting for a purge: searches name the visible rows instead")
    func manyExpired() async throws {
        let clock = ManualClock(Self.start)
        let db = try Database(clock: clock)
        let docs = try await db.documents("docs", schema: Self.schema)
        func doc(_ i: Int64) -> Document {
            Document(
                id: .int(i),
                [
                    "title": .string("apple \(i)"), "n": .int(i), "v": .vector(Self.vector(i)),
                    "w": .vector(Self.vector(i)),
                ])
        }
        try await docs.insert((1...1_500).map(doc), expiry: .at(Self.boundary))
        try await docs.insert((1_501...1_520).map(doc))
        clock.set(Self.boundary)
        for field in ["v", "w"] {
            let hits = try await docs.search(
                Query().nearest(to: Self.vector(3), in: field).limit(30))
            #expect(
                Set(hits.map { $0.record.id.value.intValue! }) == Set(1_501...1_520),
                "field \(field)")
        }
    }
}
