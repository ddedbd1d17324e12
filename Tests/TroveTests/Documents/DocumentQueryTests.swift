import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

/// Filters, orderings, aggregates and paging against in-memory oracles over seeded documents.
@Suite("Query (differential)")
struct DocumentQueryTests {
    static func seeded(count: Int, seed: UInt64) async throws -> (
        TemporaryDirectory, Database, DocumentCollection, [Document]
    ) {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("docs.trove"))
        let docs = try await db.documents("docs", schema: RandomDocuments.schema)
        var random = RandomDocuments(rng: SeededGenerator(seed: seed))
        let documents = (1...Int64(count)).map { random.document(id: $0) }
        try await docs.insert(documents)
        return (dir, db, docs, documents)
    }

    @Test("every filter operator agrees with the Swift oracle on seeded random documents")
    func filtersMatchOracle() async throws {
        let (dir, _, docs, documents) = try await Self.seeded(count: 60, seed: 11)
        defer { withExtendedLifetime(dir) {} }
        var random = RandomDocuments(rng: SeededGenerator(seed: 99))
        var nonTrivial = 0
        for _ in 0..<400 {
            let filter = random.filter(depth: 3)
            let expected = documents.filter { FilterOracle.evaluate(filter, $0) == true }.map(\.id)
            let got = try await docs.fetch(Query(filter)).map(\.id)
            #expect(got == expected, "filter \(filter)")
            #expect(try await docs.count(where: filter) == expected.count)
            if !expected.isEmpty && expected.count < documents.count { nonTrivial += 1 }
        }
        // The generator must exercise real selections, not only all-or-nothing ones.
        #expect(nonTrivial > 150)
    }

    @Test(
        "each operator kind on its own",
        arguments: [
            Field("n") > 2, Field("x").between(-1, 1), Field("title").hasPrefix("al"),
            Field("title").contains("ph"),
            Field("title").like("%A"), Field("n").isNull, Field("color").exists,
            Field("tags").arrayContains("gamma"),
            Field("meta", path: "$.k") == 2, Field("rank").isIn([1, 3, 5]),
            !(Field("flag") == true),
            Field("color") == "red" || Field("n") < 0,
            Field("at") >= .date(Date(timeIntervalSince1970: 5 * 86_400)),
            Field("n") != 3, Field("n") == nil,
        ])
    func singleOperators(_ filter: Filter) async throws {
        let (dir, _, docs, documents) = try await Self.seeded(count: 80, seed: 5)
        defer { withExtendedLifetime(dir) {} }
        let expected = documents.filter { FilterOracle.evaluate(filter, $0) == true }.map(\.id)
        #expect(try await docs.fetch(Query(filter)).map(\.id) == expected)
        #expect(!expected.isEmpty)
    }

    @Test("ordering by several keys with nulls first or last, ties by id, matches a Swift sort")
    func ordering() async throws {
        let (dir, _, docs, documents) = try await Self.seeded(count: 70, seed: 21)
        defer { withExtendedLifetime(dir) {} }
        let keys: [[SortKey]] = [
            [.descending("n")], [.ascending("n")],
            [SortKey(Field("x"), descending: true, nullsFirst: true)],
            [.ascending("flag"), .descending("x")],
            [SortKey(Field("rank"), nullsFirst: false), .descending("title")],
        ]
        for order in keys {
            var query = Query(Field("title") != "zzz")
            query.order = order
            let got = try await docs.fetch(query).map(\.id)
            let expected = documents.sorted { a, b in
                for key in order {
                    let (x, y) = (
                        FilterOracle.scalar(FilterOracle.lookup(key.field, in: a)),
                        FilterOracle.scalar(FilterOracle.lookup(key.field, in: b))
                    )
                    if x == y { continue }
                    if x == .null { return key.nullsFirst }
                    if y == .null { return !key.nullsFirst }
                    let c = FilterOracle.compare(x, y)!
                    return key.descending ? c > 0 : c < 0
                }
                return a.id < b.id
            }.map(\.id)
            #expect(got == expected, "order \(order)")
        }
    }

    @Test("aggregates with and without group by agree with the oracle")
    func aggregates() async throws {
        let (dir, _, docs, documents) = try await Self.seeded(count: 90, seed: 31)
        defer { withExtendedLifetime(dir) {} }
        let filter = Field("n") >= -2
        let rows = try await docs.aggregate(
            [
                .count(), .count("x"), .sum("n"), .average("x"), .minimum("x"), .maximum("title"),
                .countDistinct("n"),
            ],
            groupBy: [Field("flag")], where: filter)
        let kept = documents.filter { FilterOracle.evaluate(filter, $0) == true }
        let groups = Dictionary(grouping: kept) { $0["flag"] ?? .null }
        #expect(rows.count == groups.count)
        for row in rows {
            let members = groups[row.group["flag"]!] ?? []
            #expect(row.values["count"] == .int(Int64(members.count)))
            let xs = members.compactMap { $0["x"]?.doubleValue }
            #expect(row.values["count_x"] == .int(Int64(xs.count)))
            let ns = members.compactMap { $0["n"]?.intValue }
            #expect(row.values["sum_n"] == (ns.isEmpty ? .null : .int(ns.reduce(0, +))))
            if xs.isEmpty {
                #expect(row.values["avg_x"] == .null)
            } else {
                #expect(
                    abs(
                        (row.values["avg_x"]?.doubleValue ?? .nan) - xs.reduce(0, +)
                            / Double(xs.count)) < 1e-9)
                #expect(row.values["min_x"] == .double(xs.min()!))
            }
            #expect(
                row.values["max_title"]
                    == .string(
                        members.compactMap { $0["title"]?.stringValue }.max {
                            Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8))
                        }!))
            #expect(row.values["distinct_n"] == .int(Int64(Set(ns).count)))
        }
        // Grouping by an undeclared field and by a JSON path.
        let byColor = try await docs.aggregate([.count()], groupBy: [Field("color")])
        #expect(
            byColor.reduce(0) { $0 + ($1.values["count"]?.intValue ?? 0) } == Int64(documents.count)
        )
        let byKey = try await docs.aggregate(
            [.average("rank")], groupBy: [Field("meta", path: "$.k")])
        #expect(
            byKey.count
                == Set(
                    documents.map {
                        FilterOracle.lookup(Field("meta", path: "$.k"), in: $0) ?? .null
                    }
                ).count
        )
    }

    @Test("aggregates of non-numeric fields are typed errors")
    func aggregateErrors() async throws {
        let (dir, _, docs, _) = try await Self.seeded(count: 5, seed: 1)
        defer { withExtendedLifetime(dir) {} }
        await #expect(throws: TroveError.notNumeric(field: "title", aggregate: "sum")) {
            try await docs.aggregate([.sum("title")])
        }
        await #expect(throws: TroveError.notNumeric(field: "tags", aggregate: "avg")) {
            try await docs.aggregate([.average("tags")])
        }
    }

    @Test(
        "cursor paging visits every surviving row exactly once while rows are inserted and deleted")
    func cursorPaging() async throws {
        let (dir, _, docs, documents) = try await Self.seeded(count: 120, seed: 41)
        defer { withExtendedLifetime(dir) {} }
        let query = Query(Field("title") != "none").sorted(by: .descending("n"), .ascending("x"))
            .limit(7)
        var seen: [DocumentID] = []
        var deleted: Set<DocumentID> = []
        var page = try await docs.page(query)
        var nextID: Int64 = 1000
        var random = RandomDocuments(rng: SeededGenerator(seed: 3))
        while true {
            seen += page.documents.map(\.id)
            guard let next = page.next else { break }
            // Between pages: delete a row not yet seen, insert a new one.
            let unseen = documents.map(\.id).filter { !seen.contains($0) && !deleted.contains($0) }
            if let victim = unseen.last {
                try await docs.delete(id: victim)
                deleted.insert(victim)
            }
            nextID += 1
            try await docs.insert(random.document(id: nextID))
            page = try await docs.page(query.after(next))
        }
        #expect(Set(seen).count == seen.count, "no row twice")
        let survivors = Set(documents.map(\.id)).subtracting(deleted)
        #expect(
            survivors.isSubset(of: Set(seen)), "every original row that was never deleted is seen")
        #expect(Set(seen).isDisjoint(with: deleted))
    }

    @Test("a cursor from another query is refused")
    func foreignCursor() async throws {
        let (dir, _, docs, _) = try await Self.seeded(count: 30, seed: 2)
        defer { withExtendedLifetime(dir) {} }
        let page = try await docs.page(Query().sorted(by: .ascending("n")).limit(5))
        let other = Query(Field("n") > 0).sorted(by: .ascending("n")).limit(5).after(page.next)
        await #expect(throws: TroveError.self) { try await docs.page(other) }
    }

    @Test("projection returns only the selected fields")
    func projection() async throws {
        let (dir, _, docs, documents) = try await Self.seeded(count: 10, seed: 8)
        defer { withExtendedLifetime(dir) {} }
        let got = try await docs.fetch(Query().select(["title", "color"]).limit(3))
        for (document, original) in zip(got, documents) {
            #expect(Set(document.fields.keys).isSubset(of: ["title", "color"]))
            #expect(document["title"] == original["title"])
            #expect(document["color"] == original["color"])
        }
    }

    @Test("explain reports SQLite's use of the declared indexes")
    func explain() async throws {
        let (dir, _, docs, _) = try await Self.seeded(count: 10, seed: 8)
        defer { withExtendedLifetime(dir) {} }
        let plan = try await docs.explain(
            Query(Field("n") == 2 && Field("x") > 0).sorted(by: .ascending("title")).limit(5))
        #expect(plan.contains { $0.contains("docs_i1") || $0.contains("docs_i0") })
        let pathPlan = try await docs.explain(Query(Field("meta", path: "$.k") == 1))
        #expect(
            pathPlan.contains { $0.contains("docs_i2") },
            "the JSON-path expression index is used: \(pathPlan)")
    }
}
