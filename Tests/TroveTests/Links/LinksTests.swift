import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("Links: edge table, adjacency index, traversal, shortest paths, cascade")
struct LinksTests {
    static let labels = ["knows", "cites", "has"]

    /// Nodes: records of "people" (int ids 1...n), records of "tags" (string ids) and ids of a
    /// collection that does not exist ("ghost"), so links to non-records are traversed too.
    static func node(_ i: Int) -> GraphNode {
        switch i % 5 {
        case 3: GraphNode("tags", .string("t\(i)"))
        case 4: GraphNode("ghost", .int(Int64(i)))
        default: GraphNode("people", .int(Int64(i)))
        }
    }

    static func randomGraph(nodes: Int, links: Int, seed: UInt64) -> [Link] {
        var rng = SeededGenerator(seed: seed)
        var byKey: [String: Link] = [:]
        for _ in 0..<links {
            let a = Int.random(in: 0..<nodes, using: &rng)
            let b = Int.random(in: 0..<nodes, using: &rng)
            let label = labels.randomElement(using: &rng)!
            // Whole-number weights (and zero) make ties common, which tests ties honestly.
            let weight = Double(Int.random(in: 0...9, using: &rng))
            byKey["\(a) \(b) \(label)"] = Link(
                from: node(a), label: label, to: node(b), weight: weight)
        }
        return byKey.keys.sorted().map { byKey[$0]! }
    }

    static func open(_ path: String, nodes: Int) async throws -> (
        Database, DocumentCollection, DocumentCollection
    ) {
        let db = try Database(path: path)
        let people = try await db.documents(
            "people",
            schema: DocumentSchema(
                fields: [.text("name")], fullText: FullTextDefinition(fields: ["name"])))
        let tags = try await db.documents(
            "tags", schema: DocumentSchema(id: .string, fields: [.text("name")]))
        var p: [Document] = []
        var t: [Document] = []
        for i in 0..<nodes {
            switch node(i).collection {
            case "people":
                p.append(
                    Document(
                        id: .int(Int64(i)),
                        ["name": .string(i % 2 == 0 ? "river stone \(i)" : "cloud \(i)")]))
            case "tags": t.append(Document(id: node(i).id, ["name": .string("tag \(i)")]))
            default: break
            }
        }
        try await people.insert(p)
        try await tags.insert(t)
        return (db, people, tags)
    }

    static func checkAgainstOracle(_ db: Database, _ oracle: GraphOracle, nodes: Int, seed: UInt64)
        async throws
    {
        var rng = SeededGenerator(seed: seed)
        for _ in 0..<25 {
            let start = node(Int.random(in: 0..<nodes, using: &rng))
            let hops = Int.random(in: 1...4, using: &rng)
            let labels: Set<String>? =
                Bool.random(using: &rng) ? nil : Set(Self.labels.shuffled(using: &rng).prefix(2))
            let direction = [LinkDirection.outgoing, .incoming, .both].randomElement(using: &rng)!
            let reached = try await db.links.traverse(
                from: start, maxHops: hops, labels: labels, direction: direction)
            let expected = oracle.depths(
                from: start, maxHops: hops, labels: labels, direction: direction)
            #expect(
                Dictionary(uniqueKeysWithValues: reached.map { ($0.node, $0.depth) }) == expected,
                "traverse \(start) \(hops) \(labels ?? []) \(direction)")
            #expect(reached.count == Set(reached.map(\.node)).count, "each node once")
            #expect(
                zip(reached, reached.dropFirst()).allSatisfy { $0.depth <= $1.depth },
                "breadth-first order")
            let neighbours = try await db.links.neighbours(
                of: start, labels: labels, direction: direction)
            #expect(
                Set(neighbours)
                    == Set(oracle.neighbours(of: start, labels: labels, direction: direction)))

            let end = node(Int.random(in: 0..<nodes, using: &rng))
            let path = try await db.links.shortestPath(
                from: start, to: end, labels: labels, direction: direction)
            let distance = oracle.distance(
                from: start, to: end, labels: labels, direction: direction)
            #expect((path == nil) == (distance == nil), "reachability \(start) -> \(end)")
            if let path, let distance {
                #expect(abs(path.totalWeight - distance) < 1e-9)
                #expect(path.nodes.first == start && path.nodes.last == end)
                #expect(path.links.count == path.nodes.count - 1)
                #expect(abs(path.links.map(\.weight).reduce(0, +) - path.totalWeight) < 1e-9)
                for (i, link) in path.links.enumerated() {
                    #expect(oracle.links.contains(link), "the path uses a real link: \(link)")
                    let (a, b) = (path.nodes[i], path.nodes[i + 1])
                    #expect(
                        (link.from == a && link.to == b)
                            || (direction != .outgoing && link.from == b && link.to == a))
                }
            }
            // Inside a write transaction the same questions are answered from the edge table.
            let inTransaction = try await db.write { tx in
                (
                    try tx.links.traverse(
                        from: start, maxHops: hops, labels: labels, direction: direction),
                    try tx.links.shortestPath(
                        from: start, to: end, labels: labels, direction: direction)?.totalWeight
                )
            }
            #expect(Set(inTransaction.0) == Set(reached))
            #expect(inTransaction.1 == path?.totalWeight)
        }
    }

    @Test(
        "traversal, neighbours and shortest paths equal a brute-force oracle on seeded random graphs"
    )
    func randomGraphs() async throws {
        for seed in [UInt64(1), 2, 3] {
            let dir = try TemporaryDirectory()
            let nodes = 120
            let (db, people, _) = try await Self.open(dir.path("l.trove"), nodes: nodes)
            var oracle = GraphOracle()
            let links = Self.randomGraph(nodes: nodes, links: 400, seed: seed)
            try await db.links.link(links)
            for link in links { oracle.link(link) }
            try await Self.checkAgainstOracle(db, oracle, nodes: nodes, seed: seed &+ 100)

            // Changes after the index loaded: re-weight, unlink, delete records (API and raw SQL),
            // raw SQL links; the index catches up from the log.
            var rng = SeededGenerator(seed: seed &+ 7)
            for link in links.shuffled(using: &rng).prefix(40) {
                try await db.links.unlink(link.from, to: link.to, label: link.label)
                oracle.unlink(link.from, link.to, label: link.label)
            }
            for link in links.shuffled(using: &rng).prefix(40) {
                let changed = Link(
                    from: link.from, label: link.label, to: link.to, weight: link.weight + 0.5)
                try await db.links.link([changed])
                oracle.link(changed)
            }
            for i in [0, 5, 10] {
                try await people.delete(id: .int(Int64(i)))
                oracle.delete(Self.node(i))
            }
            _ = try await db.write { tx in try tx.execute("DELETE FROM people WHERE id IN (1, 6)") }
            oracle.delete(Self.node(1))
            oracle.delete(Self.node(6))
            _ = try await db.write { tx in
                try tx.execute(
                    "INSERT INTO _trove_edges(from_collection, from_id, label, to_collection, to_id, weight) VALUES ('people', 2, 'knows', 'ghost', 'free text', 0.25)"
                )
            }
            oracle.link(
                Link(
                    from: GraphNode("people", 2), label: "knows",
                    to: GraphNode("ghost", .string("free text")),
                    weight: 0.25))
            try await Self.checkAgainstOracle(db, oracle, nodes: nodes, seed: seed &+ 200)
            #expect(try await db.links.verify().isEmpty)
        }
    }

    @Test(
        "deleting a record deletes its links in the same transaction: API, delete(where:) and raw SQL"
    )
    func cascade() async throws {
        let dir = try TemporaryDirectory()
        let (db, people, tags) = try await Self.open(dir.path("c.trove"), nodes: 20)
        let a = GraphNode("people", 1)
        let b = GraphNode("people", 2)
        let t = GraphNode("tags", "t3")
        let ghost = GraphNode("ghost", 9)
        try await db.links.link([
            Link(from: a, label: "knows", to: b), Link(from: b, label: "knows", to: a),
            Link(from: a, label: "has", to: t),
            Link(from: t, label: "has", to: ghost), Link(from: ghost, label: "cites", to: b),
        ])
        func count() async throws -> Int {
            Int(
                try await db.read { r in
                    try r.query("SELECT count(*) FROM _trove_edges")[0].int64(at: 0) ?? -1
                })
        }
        #expect(try await count() == 5)
        // A rolled-back delete keeps the links.
        await #expect(throws: TroveError.self) {
            try await db.write { tx in
                try tx.documents("people").delete(ids: [1])
                throw TroveError.invalidQuery("roll back")
            }
        }
        #expect(try await count() == 5)
        #expect(try await db.links.neighbours(of: a).count == 2)
        try await people.delete(id: 1)
        #expect(try await count() == 2)
        #expect(try await db.links.neighbours(of: a, direction: .both).isEmpty)
        #expect(
            try await db.links.neighbours(of: b, direction: .both) == [
                Link(from: ghost, label: "cites", to: b)
            ])
        try await tags.delete(where: Field("name") == "tag 3")
        #expect(try await count() == 1)
        _ = try await db.write { tx in try tx.execute("DELETE FROM people WHERE id = 2") }
        #expect(try await count() == 0)
        #expect(try await db.links.traverse(from: ghost, maxHops: 3, direction: .both).isEmpty)
        // A node that is not a record keeps its links until they are unlinked.
        try await db.links.link(ghost, to: GraphNode("ghost", 10), label: "next")
        #expect(
            try await db.links.traverse(from: ghost, maxHops: 2).map(\.node) == [
                GraphNode("ghost", 10)
            ])
        #expect(try await db.links.unlink(ghost, to: GraphNode("ghost", 10)) == 1)
        #expect(try await count() == 0)
        // Dropping a collection drops its records' links.
        try await db.links.link(GraphNode("tags", "t8"), to: ghost, label: "x")
        #expect(try await db.dropCollection("tags"))
        #expect(try await count() == 0)
    }

    @Test(
        "links: typed errors with nothing written, weights change on re-link, UUID and string ids keep their kind"
    )
    func writesAndIds() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("w.trove"))
        let notes = try await db.documents(
            "notes", schema: DocumentSchema(id: .uuid, fields: [.text("title")]))
        let id = UUID()
        try await notes.insert(Document(id: .uuid(id), ["title": "x"]))
        let n = GraphNode("notes", .uuid(id))
        let ok = Link(from: n, label: "about", to: GraphNode("topics", "42"))
        for bad in [
            Link(from: n, label: "about", to: GraphNode("t", 1), weight: -1),
            Link(from: n, label: "", to: GraphNode("t", 1)),
            Link(from: n, label: "x", to: GraphNode("t", 1), weight: .nan),
        ] {
            await #expect(throws: TroveError.self) { try await db.links.link([ok, bad]) }
        }
        #expect(try await db.links.neighbours(of: n).isEmpty)
        try await db.links.link([
            ok, Link(from: n, label: "about", to: GraphNode("topics", 42), weight: 2),
        ])
        let out = try await db.links.neighbours(of: n)
        #expect(
            Set(out.map(\.to)) == [GraphNode("topics", "42"), GraphNode("topics", 42)],
            "42 and \"42\" are different nodes")
        #expect(
            try await db.links.neighbours(of: GraphNode("topics", 42), direction: .incoming).map(
                \.from) == [n],
            "UUIDs come back as UUIDs")
        try await db.links.link(n, to: GraphNode("topics", 42), label: "about", weight: 5)
        #expect(
            try await db.links.neighbours(of: n).first { $0.to == GraphNode("topics", 42) }?.weight
                == 5)
        await #expect(throws: TroveError.self) { try await db.links.traverse(from: n, maxHops: 0) }
        #expect(try await db.links.shortestPath(from: n, to: n)?.nodes == [n])
        #expect(try await db.links.shortestPath(from: GraphNode("topics", 42), to: n) == nil)
        try await notes.delete(id: .uuid(id))
        #expect(
            try await db.links.neighbours(of: GraphNode("topics", 42), direction: .incoming).isEmpty
        )
    }

    @Test(
        "a filter within k hops of a record, and a text search restricted to its neighbourhood, with explain"
    )
    func linkedFilter() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("f.trove"))
        let docs = try await db.documents("docs", schema: DocumentSchema(fields: [.text("title")]))
        let chunks = try await db.documents(
            "chunks",
            schema: DocumentSchema(
                fields: [.text("text"), .integer("page")],
                fullText: FullTextDefinition(fields: ["text"])))
        try await docs.insert([
            Document(id: 1, ["title": "manual"]), Document(id: 2, ["title": "notes"]),
        ])
        var rng = SeededGenerator(seed: 11)
        let words = ["router", "reset", "button", "light", "warranty", "cable"]
        var all: [Document] = []
        for i in 1...60 {
            all.append(
                Document(
                    id: .int(Int64(i)),
                    [
                        "text": .string(
                            (0..<4).map { _ in words.randomElement(using: &rng)! }.joined(
                                separator: " ")),
                        "page": .int(Int64(i % 7)),
                    ]))
        }
        try await chunks.insert(all)
        var oracle = GraphOracle()
        var links: [Link] = []
        for i in 1...60 {
            links.append(
                Link(
                    from: GraphNode("docs", .int(Int64(1 + i % 2))), label: "has",
                    to: GraphNode("chunks", .int(Int64(i)))))
            if i % 5 == 0 {
                links.append(
                    Link(
                        from: GraphNode("chunks", .int(Int64(i))), label: "next",
                        to: GraphNode("chunks", .int(Int64(i % 60 + 1)))))
            }
        }
        try await db.links.link(links)
        for link in links { oracle.link(link) }
        let manual = GraphNode("docs", 1)
        for (hops, labels) in [
            (1, Set(["has"])), (2, nil), (2, Set(["has"])), (3, Set(["has", "next"])),
        ]
            as [(Int, Set<String>?)]
        {
            let reachable = Set(
                oracle.depths(from: manual, maxHops: hops, labels: labels, direction: .outgoing)
                    .keys
                    .filter { $0.collection == "chunks" }.map(\.id))
            let filter =
                Filter.linked(from: manual, maxHops: hops, labels: labels) && Field("page") < 5
            let got = try await chunks.fetch(Query(filter))
            #expect(
                Set(got.map(\.id))
                    == Set(
                        all.filter { reachable.contains($0.id) && ($0["page"]?.intValue ?? 9) < 5 }
                            .map(\.id)))
            #expect(
                try await chunks.count(
                    where: !Filter.linked(from: manual, maxHops: hops, labels: labels))
                    == 60
                    - reachable.count)
            // A RAG question: chunks linked to the manual that also match the words.
            let question = Query(.linked(from: manual, maxHops: hops, labels: labels)).matching(
                .typed("reset router")
            )
            .limit(5)
            let hits = try await chunks.search(question)
            #expect(!hits.isEmpty)
            #expect(hits.allSatisfy { reachable.contains($0.record.id) })
            let unrestricted = try await chunks.search(
                Query().matching(.typed("reset router")).limit(60))
            #expect(
                hits.map(\.record.id)
                    == Array(unrestricted.map(\.record.id).filter(reachable.contains).prefix(5)))
            let plan = try await chunks.explain(question)
            #expect(
                plan.contains {
                    $0.contains("graph filter: within \(hops) hop(s) outgoing of docs/1")
                        && $0.contains("in-memory adjacency")
                })
        }
        // Inside a write transaction the filter sees the transaction's own links.
        let seen = try await db.write { tx in
            // chunk 3 belonged to docs/2 only
            try tx.link(manual, to: GraphNode("chunks", 3), label: "has")
            return try tx.documents("chunks").count(where: .linked(from: manual, labels: ["has"]))
        }
        #expect(seen == 31)
        #expect(try await chunks.count(where: .linked(from: manual, labels: ["has"])) == 31)
        #expect(try await chunks.count(where: .linked(from: GraphNode("docs", 99))) == 0)
    }

    @Test("raw SQL that changes a record's id moves its links, both ends, int and string ids")
    func idChangeMovesLinks() async throws {
        let dir = try TemporaryDirectory()
        let (db, _, _) = try await Self.open(dir.path("m.trove"), nodes: 20)
        let a = GraphNode("people", 1)
        let b = GraphNode("people", 2)
        let t = GraphNode("tags", "t3")
        try await db.links.link([
            Link(from: a, label: "knows", to: b), Link(from: b, label: "knows", to: a, weight: 2),
            Link(from: a, label: "has", to: t),
        ])
        _ = try await db.links.neighbours(of: a)  // the adjacency index is loaded before the change
        try await db.execute("UPDATE people SET id = 100 WHERE id = 1")
        try await db.execute("UPDATE tags SET id = 't300' WHERE id = 't3'")
        let moved = GraphNode("people", 100)
        let movedTag = GraphNode("tags", "t300")
        #expect(try await db.links.neighbours(of: a, direction: .both).isEmpty)
        #expect(
            Set(try await db.links.neighbours(of: moved)) == [
                Link(from: moved, label: "knows", to: b),
                Link(from: moved, label: "has", to: movedTag),
            ])
        #expect(try await db.links.neighbours(of: b).map(\.to) == [moved])
        #expect(
            try await db.links.neighbours(of: movedTag, direction: .incoming).map(\.from) == [moved]
        )
        // A change to another column leaves the links alone.
        try await db.execute("UPDATE people SET name = 'renamed' WHERE id = 100")
        #expect(try await db.links.neighbours(of: moved).count == 2)
        #expect(try await db.links.verify().isEmpty)
    }

    @Test("verify finds an adjacency index that missed a change and repair reloads it")
    func verifyRepair() async throws {
        let dir = try TemporaryDirectory()
        let (db, _, _) = try await Self.open(dir.path("r.trove"), nodes: 30)
        try await db.links.link(Self.randomGraph(nodes: 30, links: 60, seed: 4))
        _ = try await db.links.traverse(from: Self.node(0), maxHops: 2)
        #expect(try await db.links.verify().isEmpty)
        // A change that bypasses the change log (its entries deleted in the same transaction).
        try await db.write { tx in
            let top =
                try tx.query("SELECT coalesce(max(seq), 0) FROM _trove_edges_log")[0].int64(at: 0)
                ?? 0
            try tx.execute(
                "DELETE FROM _trove_edges WHERE id IN (SELECT id FROM _trove_edges LIMIT 5)")
            try tx.execute("DELETE FROM _trove_edges_log WHERE seq > ?", [.integer(top)])
        }
        #expect(try await db.links.verify().contains { $0.hasPrefix("adjacency(_trove_edges)") })
        #expect(
            try await db.verify().problems.contains {
                $0.hasPrefix("_trove_edges: adjacency(_trove_edges)")
            })
        try await db.links.repair()
        #expect(try await db.links.verify().isEmpty)
        #expect(try await db.verify().isHealthy)
    }

    @Test(
        "a collection without the cascade trigger (created before links) gets it on the next writable open"
    )
    func cascadeAddedOnOpen() async throws {
        let dir = try TemporaryDirectory()
        do {
            let (db, _, _) = try await Self.open(dir.path("o.trove"), nodes: 10)
            try await db.links.link(
                GraphNode("people", 1), to: GraphNode("ghost", 4), label: "knows")
            _ = try await db.write { tx in try tx.execute("DROP TRIGGER people_edges_ad") }
        }
        let db = try Database(path: dir.path("o.trove"))
        let people = try await db.documents(named: "people")
        try await people.delete(id: 1)
        #expect(
            try await db.links.neighbours(of: GraphNode("ghost", 4), direction: .incoming).isEmpty)
    }
}
