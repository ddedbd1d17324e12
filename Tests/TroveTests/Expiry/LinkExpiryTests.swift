import Foundation
import Testing
import Trove
import TroveTestSupport

/// Expired records in the link graph: from their expiry second on, traversals neither reach nor
/// pass through them, their links are not listed and paths avoid them, before any purge (as if
/// the purge, which deletes their links, had already run).
@Suite("Links and expiry")
struct LinkExpiryTests {
    static let boundary = Date(timeIntervalSince1970: 2_000_100)

    @Test(
        "an expired record disappears from neighbours, traversal, shortest paths and link filters at its expiry second"
    )
    func expiredRecordsLeaveTheGraph() async throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Date(timeIntervalSince1970: 2_000_000))
        let db = try Database(path: dir.path("links.trove"), clock: clock)
        let notes = try await db.documents(
            "notes", schema: DocumentSchema(fields: [.text("title")], allowsExpiry: true))
        try await notes.insert(
            [1, 3, 4].map { Document(id: .int($0), ["title": .string("note \($0)")]) })
        try await notes.insert([Document(id: 2, ["title": "note 2"])], expiry: .at(Self.boundary))
        @Sendable func node(_ i: Int64) -> GraphNode { GraphNode("notes", .int(i)) }
        // 1 -> 2 -> 3 (cheap), 1 -> 4 -> 3 (dear), and a non-record 9 linked from 2.
        try await db.links.link([
            Link(from: node(1), label: "next", to: node(2), weight: 1),
            Link(from: node(2), label: "next", to: node(3), weight: 1),
            Link(from: node(1), label: "next", to: node(4), weight: 5),
            Link(from: node(4), label: "next", to: node(3), weight: 5),
            Link(from: node(2), label: "next", to: GraphNode("ghost", .int(9)), weight: 1),
        ])

        func snapshot() async throws -> (
            neighbours: Set<String>, reached: Set<String>, path: [String]?, linked: Set<Int64>,
            fromExpired: Int
        ) {
            let neighbours = Set(try await db.links.neighbours(of: node(1)).map(\.to.description))
            let reached = Set(
                try await db.links.traverse(from: node(1), maxHops: 3).map(\.node.description))
            let path = try await db.links.shortestPath(from: node(1), to: node(3))?.nodes.map(
                \.description)
            let linked = Set(
                try await notes.fetch(Query(.linked(from: node(1), maxHops: 3))).compactMap {
                    $0.id.value.intValue
                })
            let fromExpired = try await db.links.traverse(from: node(2), maxHops: 2).count
            return (neighbours, reached, path, linked, fromExpired)
        }

        let before = try await snapshot()
        #expect(before.neighbours == [node(2).description, node(4).description])
        #expect(
            before.reached
                == [node(2), node(4), node(3), GraphNode("ghost", .int(9))].map(\.description)
                .reduce(into: []) {
                    $0.insert($1)
                })
        #expect(before.path == [node(1), node(2), node(3)].map(\.description))
        #expect(before.linked == [2, 3, 4])
        #expect(before.fromExpired == 2)

        clock.set(Self.boundary)
        let after = try await snapshot()
        #expect(after.neighbours == [node(4).description])
        // 9 was reachable only through 2.
        #expect(after.reached == [node(4).description, node(3).description])
        #expect(after.path == [node(1), node(4), node(3)].map(\.description))
        #expect(after.linked == [3, 4])
        #expect(after.fromExpired == 0)
        // Inside a write transaction (the edge table read with SQL) the same holds.
        let inWrite = try await db.write { tx in
            try tx.links.traverse(from: node(1), maxHops: 3).map(\.node.description)
        }
        #expect(Set(inWrite) == after.reached)

        // The purge makes it real: the record and its links are gone, and nothing changes.
        #expect(try await notes.purgeExpired() == 1)
        let purged = try await snapshot()
        #expect(
            purged.reached == after.reached && purged.path == after.path
                && purged.linked == after.linked)
    }
}
