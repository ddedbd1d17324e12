import Foundation
import TroveSQLite

// Expired records and links. Purging an expired record deletes its links (the cascade
// trigger), so before the purge a traversal behaves as if it had already happened: an expired
// record is neither reached nor passed through, and its links are not listed.

/// The expired records of every collection that allows expiry, at one instant: the nodes a
/// traversal must not see. Empty (and free to check) when no collection allows expiry.
struct ExpiredNodes {
    private(set) var endpoints: Set<EdgeEndpoint> = []

    var isEmpty: Bool { endpoints.isEmpty }

    func contains(_ endpoint: EdgeEndpoint) -> Bool {
        !endpoints.isEmpty && endpoints.contains(endpoint)
    }

    /// Reads them on `connection`'s snapshot: one indexed query (the partial index on
    /// `_expires`) per collection that allows expiry.
    static func read(collections: [String], now: Date, on connection: Connection) throws
        -> ExpiredNodes
    {
        var out = ExpiredNodes()
        for name in collections {
            let layout = DocumentLayout(name: name, schema: DocumentSchema(id: .int64, fields: []))
            let statement = try connection.cachedStatement(
                "SELECT ?, \"id\" FROM \(layout.table) WHERE \(DocumentLayout.expiresColumn) <= ?")
            try statement.forEachRow([.text(name), .real(now.timeIntervalSince1970)]) { row in
                out.endpoints.insert(EdgeEndpoint(row, column: 0))
            }
        }
        return out
    }
}

/// An adjacency that skips neighbours that are hidden (expired records).
struct VisibleAdjacency<Base: AdjacencyReading>: AdjacencyReading {
    let base: Base
    let isHidden: (Base.Node) -> Bool

    func forEachNeighbour(
        of node: Base.Node, _ body: (Base.Node, Int64, String, Double, Bool) throws -> Void
    ) throws {
        try base.forEachNeighbour(of: node) { neighbour, edge, label, weight, reversed in
            guard !isHidden(neighbour) else { return }
            try body(neighbour, edge, label, weight, reversed)
        }
    }
}

extension GraphStore {
    /// The expired records a traversal on `connection` must skip, measured with `clock`.
    ///
    /// Which collections allow expiry is read from the schema (collections with the `_expires`
    /// partial index) once per schema version.
    func expiredNodes(clock: any ExpiryClock, on connection: Connection) throws -> ExpiredNodes {
        let collections = try expiringCollections(on: connection)
        guard !collections.isEmpty else { return ExpiredNodes() }
        return try ExpiredNodes.read(collections: collections, now: clock.now, on: connection)
    }

    private func expiringCollections(on connection: Connection) throws -> [String] {
        let version = try connection.scalar("PRAGMA schema_version")?.int64Value ?? 0
        if let cached = cachedExpiring(version) { return cached }
        // Every collection that allows expiry has the partial index `<name>_expires`.
        let names = try connection.query(
            "SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = tbl_name || '_expires' ORDER BY tbl_name"
        ).compactMap { $0.string(at: 0) }
        storeExpiring(names, version: version)
        return names
    }
}
