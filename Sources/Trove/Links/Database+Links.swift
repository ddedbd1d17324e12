import Foundation
import TroveSQLite

extension Database {
    /// The file's link graph: directed, labelled, weighted links between records of any
    /// collections (or ids that are not records).
    ///
    /// ```swift
    /// let links = database.links
    /// try await links.link(GraphNode("docs", 7), to: GraphNode("chunks", 70), label: "has")
    /// let chunks = try await links.neighbours(of: GraphNode("docs", 7), labels: ["has"])
    /// ```
    public nonisolated var links: Links { Links(database: self) }
}

/// The link graph of a database: link, unlink, neighbours, traversal and shortest paths.
///
/// Links live in one table (`_trove_edges`); deleting a record deletes its links in the same
/// transaction, whether through the API or raw SQL. Reads run on the reader pool over an
/// in-memory adjacency index caught up from the edge table's change log. Cheap to copy, Sendable.
public struct Links: Sendable {
    /// The database.
    public let database: Database

    var graph: GraphStore { database.documentStores.graph }

    // MARK: Writing (each call is one transaction)

    /// Links `from` to `to` under `label`; linking again changes the weight.
    ///
    /// - Throws: ``TroveError/invalidValue(field:reason:)`` for a negative or non-finite weight
    ///   or an empty label.
    public func link(_ from: GraphNode, to: GraphNode, label: String, weight: Double = 1)
        async throws
    {
        try await link([Link(from: from, label: label, to: to, weight: weight)])
    }

    /// Adds (or re-weights) links, all or nothing.
    ///
    /// - Complexity: one indexed upsert per link in one transaction.
    public func link(_ links: [Link]) async throws {
        let graph = self.graph
        try await database.writing { try graph.link(links, on: $0) }
    }

    /// Removes the link from `from` to `to` with `label` (nil: with any label).
    ///
    /// - Returns: how many links were removed.
    @discardableResult
    public func unlink(_ from: GraphNode, to: GraphNode, label: String? = nil) async throws -> Int {
        let graph = self.graph
        return try await database.writing {
            try graph.unlink(from: from, to: to, label: label, on: $0)
        }
    }

    // MARK: Reading (on a reader connection)

    /// The links of `node`: outgoing (default), incoming or both, optionally only some labels.
    public func neighbours(
        of node: GraphNode, labels: Set<String>? = nil, direction: LinkDirection = .outgoing
    )
        async throws -> [Link]
    {
        try await read { try $0.neighbours(of: node, labels: labels, direction: direction) }
    }

    /// Every node within `maxHops` of `start` (breadth-first; each node once, with its depth;
    /// `start` itself is not listed).
    ///
    /// ```swift
    /// let near = try await database.links.traverse(from: GraphNode("people", 1), maxHops: 2, labels: ["knows"])
    /// ```
    /// - Complexity: O(nodes + links reached).
    public func traverse(
        from start: GraphNode, maxHops: Int, labels: Set<String>? = nil,
        direction: LinkDirection = .outgoing
    ) async throws -> [ReachedNode] {
        try await read {
            try $0.traverse(from: start, maxHops: maxHops, labels: labels, direction: direction)
        }
    }

    /// The path of least total weight from `start` to `end` (Dijkstra), or nil when there is none.
    ///
    /// - Complexity: O((nodes + links) log nodes) over the nodes closer than `end`.
    public func shortestPath(
        from start: GraphNode, to end: GraphNode, labels: Set<String>? = nil,
        direction: LinkDirection = .outgoing
    ) async throws -> GraphPath? {
        try await read {
            try $0.shortestPath(from: start, to: end, labels: labels, direction: direction)
        }
    }

    /// Compares the adjacency index with the edge table. - Returns: the problems (empty when healthy).
    public func verify() async throws -> [String] {
        let graph = self.graph
        return try await database.writing { connection in
            guard try EdgeTable.exists(connection) else { return [] }
            return try graph.indexes.verify(connection)
        }
    }

    /// Rebuilds the adjacency index from the edge table at the next read.
    public func repair() async throws {
        let graph = self.graph
        try await database.writing { _ in graph.indexes.invalidate() }
    }

    private func read<T: Sendable>(_ body: @Sendable (LinkReader) throws -> T) async throws -> T {
        let graph = self.graph
        return try await database.reading(transaction: true) { connection, _ in
            try body(LinkReader(graph: graph, connection: connection, source: .indexes))
        }
    }
}

/// Link reads on one connection's snapshot (`database.read { }`, or a write transaction, where
/// they see its own uncommitted links).
public struct LinkReader {
    let graph: GraphStore
    let connection: Connection
    let source: GraphStore.Source

    /// The links of `node`.
    public func neighbours(
        of node: GraphNode, labels: Set<String>? = nil, direction: LinkDirection = .outgoing
    ) throws
        -> [Link]
    {
        try graph.neighbours(
            of: node, labels: labels, direction: direction, source: source, on: connection)
    }

    /// Every node within `maxHops` of `start`, breadth-first, with depths.
    public func traverse(
        from start: GraphNode, maxHops: Int, labels: Set<String>? = nil,
        direction: LinkDirection = .outgoing
    ) throws -> [ReachedNode] {
        try graph.traverse(
            GraphScope(from: start, maxHops: maxHops, labels: labels, direction: direction),
            source: source,
            on: connection)
    }

    /// The least-weight path, or nil.
    public func shortestPath(
        from start: GraphNode, to end: GraphNode, labels: Set<String>? = nil,
        direction: LinkDirection = .outgoing
    ) throws -> GraphPath? {
        try graph.shortestPath(
            from: start, to: end, labels: labels, direction: direction, source: source,
            on: connection)
    }
}

extension Transaction {
    /// Links read and written inside this transaction.
    ///
    /// ```swift
    /// try await database.write { tx in
    ///     try tx.documents("chunks").insert(Document(id: 71, ["text": "..."]))
    ///     try tx.link(GraphNode("docs", 7), to: GraphNode("chunks", 71), label: "has")
    /// }
    /// ```
    public var links: LinkReader {
        LinkReader(graph: graph, connection: connection, source: .table)
    }

    /// Links `from` to `to` in this transaction (re-linking changes the weight).
    public func link(_ from: GraphNode, to: GraphNode, label: String, weight: Double = 1) throws {
        try graph.link([Link(from: from, label: label, to: to, weight: weight)], on: connection)
    }

    /// Removes links in this transaction. - Returns: how many.
    @discardableResult
    public func unlink(_ from: GraphNode, to: GraphNode, label: String? = nil) throws -> Int {
        try graph.unlink(from: from, to: to, label: label, on: connection)
    }
}

extension ReadTransaction {
    /// Link reads on this snapshot.
    public var links: LinkReader {
        LinkReader(graph: graph, connection: connection, source: .indexes)
    }
}
