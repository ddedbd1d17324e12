import Foundation
import TroveSQLite

/// The links of one database file: the edge table's operations and its in-memory adjacency
/// index, shared by the writer and every reader (like a ``DocumentStore``).
///
/// Sendable: the adjacency lists are guarded by the ``DerivedIndexSet``'s lock; the id-kind
/// cache by its own lock.
final class GraphStore: @unchecked Sendable {
    // @unchecked Sendable: `adjacency` is only read under `indexes.lock` (shared) and changed
    // under it (exclusive, catch-up); `kinds` and `tableSeen` only under `lock`.
    let adjacency = AdjacencyIndex()
    let indexes: DerivedIndexSet
    private let lock = NSLock()
    private var kinds: [String: IDKind] = [:]
    private var tableSeen = false
    /// The collections that allow expiry, at one schema version (see GraphStore+Expiry.swift).
    private var expiring: (version: Int64, names: [String])?
    private var expiryClock: any ExpiryClock = SystemClock()

    /// The clock expired records are hidden by; the owning database's.
    var clock: any ExpiryClock {
        get { lock.withLock { expiryClock } }
        set { lock.withLock { expiryClock = newValue } }
    }

    func cachedExpiring(_ version: Int64) -> [String]? {
        lock.withLock { expiring?.version == version ? expiring?.names : nil }
    }

    func storeExpiring(_ names: [String], version: Int64) {
        lock.withLock { expiring = (version, names) }
    }

    init() {
        indexes = DerivedIndexSet(layout: EdgeTable.layout, indexes: [adjacency])
    }

    /// Where a traversal reads links from.
    typealias Source = DocumentStore.VectorSource

    // MARK: Writing (inside the caller's write transaction)

    /// Adds links, or changes the weight of those that exist.
    ///
    /// - Throws: ``TroveError/invalidValue(field:reason:)`` for a negative or non-finite weight
    ///   or an empty label or collection name (checked for every link before the first write).
    func link(_ links: [Link], on connection: Connection) throws {
        for link in links {
            guard link.weight >= 0, link.weight.isFinite else {
                throw TroveError.invalidValue(
                    field: "weight",
                    reason: "a link weight must be finite and >= 0, got \(link.weight)")
            }
            guard !link.label.isEmpty else {
                throw TroveError.invalidValue(field: "label", reason: "a link needs a label")
            }
            for node in [link.from, link.to] {
                guard !node.collection.isEmpty else {
                    throw TroveError.invalidValue(
                        field: "collection", reason: "a node needs a collection name")
                }
                if case .string(let s) = node.id, s.isEmpty {
                    throw TroveError.invalidValue(
                        field: "id", reason: "a string id cannot be empty")
                }
            }
        }
        try createTableIfNeeded(connection)
        let statement = try connection.cachedStatement(
            """
            INSERT INTO \(EdgeTable.table)(from_collection, from_id, label, to_collection, to_id, weight) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(from_collection, from_id, label, to_collection, to_id) DO UPDATE SET weight = excluded.weight
            WHERE weight IS NOT excluded.weight
            """)
        for link in links {
            try statement.execute([
                .text(link.from.collection), link.from.id.sqlValue, .text(link.label),
                .text(link.to.collection), link.to.id.sqlValue, .real(link.weight),
            ])
        }
        try EdgeTable.layout.changeLog.pruneIfNeeded(connection)
    }

    /// Removes links (nil label: every label between the two). - Returns: how many existed.
    func unlink(from: GraphNode, to: GraphNode, label: String?, on connection: Connection) throws
        -> Int
    {
        guard try EdgeTable.exists(connection) else { return 0 }
        var sql =
            "DELETE FROM \(EdgeTable.table) WHERE from_collection = ? AND from_id = ? AND to_collection = ? AND to_id = ?"
        var bindings: [SQLValue] = [
            .text(from.collection), from.id.sqlValue, .text(to.collection), to.id.sqlValue,
        ]
        if let label {
            sql += " AND label = ?"
            bindings.append(.text(label))
        }
        try connection.cachedStatement(sql).execute(bindings)
        let removed = connection.changes
        try EdgeTable.layout.changeLog.pruneIfNeeded(connection)
        return removed
    }

    func createTableIfNeeded(_ connection: Connection) throws {
        if lock.withLock({ tableSeen }) { return }
        if try !EdgeTable.exists(connection) {
            for statement in EdgeTable.createStatements {
                try connection.execute(script: statement)
            }
        }
    }

    // MARK: Reading

    /// The links of `node` (outgoing, incoming or both), with the given labels.
    func neighbours(
        of node: GraphNode, labels: Set<String>?, direction: LinkDirection, source: Source,
        on connection: Connection
    ) throws -> [Link] {
        var out: [Link] = []
        let expired = try expiredNodes(clock: clock, on: connection)
        guard !expired.contains(EdgeEndpoint(node)) else { return [] }
        try withAdjacency(labels: labels, direction: direction, source: source, on: connection) {
            memory, sql in
            let here = EdgeEndpoint(node)
            func emit(_ neighbour: EdgeEndpoint, label: String, weight: Double, reversed: Bool)
                throws
            {
                let other = try graphNode(neighbour, on: connection)
                out.append(
                    reversed
                        ? Link(from: other, label: label, to: node, weight: weight)
                        : Link(from: node, label: label, to: other, weight: weight))
            }
            if let memory {
                guard let slot = memory.index.existingSlot(here) else { return }
                try memory.forEachNeighbour(of: slot) { n, _, label, weight, reversed in
                    let endpoint = memory.index.endpoints[Int(n)]
                    guard !expired.contains(endpoint) else { return }
                    try emit(endpoint, label: label, weight: weight, reversed: reversed)
                }
            } else if let sql {
                try sql.forEachNeighbour(of: here) { n, _, label, weight, reversed in
                    guard !expired.contains(n) else { return }
                    try emit(n, label: label, weight: weight, reversed: reversed)
                }
            }
        }
        return out
    }

    /// Breadth-first from the scope's origin: each node once, with its depth.
    func traverse(_ scope: GraphScope, source: Source, on connection: Connection) throws
        -> [ReachedNode]
    {
        try reachable(scope, source: source, on: connection).map {
            ReachedNode(node: try graphNode($0.node, on: connection), depth: $0.depth)
        }
    }

    /// The endpoints within the scope, in breadth-first order.
    func reachable(_ scope: GraphScope, source: Source, on connection: Connection) throws -> [(
        node: EdgeEndpoint, depth: Int
    )] {
        try scope.validate()
        var out: [(node: EdgeEndpoint, depth: Int)] = []
        let expired = try expiredNodes(clock: clock, on: connection)
        let start = EdgeEndpoint(scope.origin)
        guard !expired.contains(start) else { return [] }
        try withAdjacency(
            labels: scope.labels, direction: scope.direction, source: source, on: connection
        ) {
            memory, sql in
            if let memory {
                guard let slot = memory.index.existingSlot(start) else { return }
                if expired.isEmpty {
                    out = try GraphAlgorithms.breadthFirst(
                        memory, from: slot, maxHops: scope.maxHops
                    )
                    .map { (memory.index.endpoints[Int($0.node)], $0.depth) }
                } else {
                    let visible = VisibleAdjacency(base: memory) {
                        expired.contains(memory.index.endpoints[Int($0)])
                    }
                    out = try GraphAlgorithms.breadthFirst(
                        visible, from: slot, maxHops: scope.maxHops
                    )
                    .map { (memory.index.endpoints[Int($0.node)], $0.depth) }
                }
            } else if let sql {
                let visible = VisibleAdjacency(base: sql) { expired.contains($0) }
                out = try GraphAlgorithms.breadthFirst(visible, from: start, maxHops: scope.maxHops)
            }
        }
        return out
    }

    /// The least-weight path between two nodes, or nil.
    func shortestPath(
        from: GraphNode, to: GraphNode, labels: Set<String>?, direction: LinkDirection,
        source: Source,
        on connection: Connection
    ) throws -> GraphPath? {
        var result: GraphPath?
        let expired = try expiredNodes(clock: clock, on: connection)
        guard !expired.contains(EdgeEndpoint(from)), !expired.contains(EdgeEndpoint(to)) else {
            return nil
        }
        try withAdjacency(labels: labels, direction: direction, source: source, on: connection) {
            memory, sql in
            func path<Node>(
                _ found: (nodes: [Node], steps: [GraphAlgorithms.Step<Node>], weight: Double)?,
                _ endpoint: (Node) -> EdgeEndpoint
            ) throws -> GraphPath? {
                guard let found else { return nil }
                let nodes = try found.nodes.map { try graphNode(endpoint($0), on: connection) }
                var links: [Link] = []
                for (i, step) in found.steps.enumerated() {
                    let (a, b) = (nodes[i], nodes[i + 1])
                    links.append(
                        step.reversed
                            ? Link(from: b, label: step.label, to: a, weight: step.weight)
                            : Link(from: a, label: step.label, to: b, weight: step.weight))
                }
                return GraphPath(nodes: nodes, links: links, totalWeight: found.weight)
            }
            if let memory {
                guard let a = memory.index.existingSlot(EdgeEndpoint(from)) else { return }
                guard let b = memory.index.existingSlot(EdgeEndpoint(to)) else {
                    if from == to { result = GraphPath(nodes: [from], links: [], totalWeight: 0) }
                    return
                }
                let visible = VisibleAdjacency(base: memory) {
                    expired.contains(memory.index.endpoints[Int($0)])
                }
                result = try path(try GraphAlgorithms.shortestPath(visible, from: a, to: b)) {
                    memory.index.endpoints[Int($0)]
                }
            } else if let sql {
                let visible = VisibleAdjacency(base: sql) { expired.contains($0) }
                result = try path(
                    try GraphAlgorithms.shortestPath(
                        visible, from: EdgeEndpoint(from), to: EdgeEndpoint(to))
                ) { $0 }
            }
        }
        if result == nil, from == to { return GraphPath(nodes: [from], links: [], totalWeight: 0) }
        return result
    }

    /// Runs `body` with the in-memory adjacency (caught up on this connection's snapshot, read
    /// under the shared lock) or, for `.table`, the edge table; not at all when the file has no
    /// edge table yet.
    private func withAdjacency(
        labels: Set<String>?, direction: LinkDirection, source: Source, on connection: Connection,
        _ body: (MemoryAdjacency?, SQLAdjacency?) throws -> Void
    ) throws {
        if !lock.withLock({ tableSeen }) {
            guard try EdgeTable.exists(connection) else { return }
            // Remembered only from committed snapshots (a write transaction may still roll back).
            if source == .indexes { lock.withLock { tableSeen = true } }
        }
        switch source {
        case .indexes:
            try indexes.catchUp(connection)
            try indexes.lock.read {
                try body(MemoryAdjacency(adjacency, labels: labels, direction: direction), nil)
            }
        case .table:
            try body(
                nil, SQLAdjacency(connection: connection, labels: labels, direction: direction))
        }
    }

    /// The public node of a stored endpoint: text ids of UUID collections become UUIDs.
    func graphNode(_ endpoint: EdgeEndpoint, on connection: Connection) throws -> GraphNode {
        switch endpoint.id {
        case .int(let v): return GraphNode(endpoint.collection, .int(v))
        case .text(let v):
            if try kind(of: endpoint.collection, on: connection) == .uuid,
                let uuid = UUID(uuidString: v)
            {
                return GraphNode(endpoint.collection, .uuid(uuid))
            }
            return GraphNode(endpoint.collection, .string(v))
        }
    }

    private func kind(of collection: String, on connection: Connection) throws -> IDKind? {
        if let kind = lock.withLock({ kinds[collection] }) { return kind }
        guard
            let schema = try DocumentStore.storedSchema(
                connection, key: DocumentLayout.metaKeyPrefix + collection, name: collection)
        else {
            return nil
        }
        lock.withLock { kinds[collection] = schema.id }
        return schema.id
    }
}
