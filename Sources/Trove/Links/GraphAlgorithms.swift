import Foundation
import TroveSQLite

/// Something whose neighbours a traversal can ask for: the in-memory adjacency lists or the
/// edge table itself.
protocol AdjacencyReading {
    associatedtype Node: Hashable
    /// Calls `body` with each neighbour of `node` along the links the reader follows: the
    /// neighbour, the link's id, label and weight, and whether the link points at `node`.
    func forEachNeighbour(
        of node: Node,
        _ body: (
            _ neighbour: Node, _ edge: Int64, _ label: String, _ weight: Double, _ reversed: Bool
        ) throws -> Void)
        throws
}

/// The in-memory lists, restricted to some labels and one direction. Read under the index
/// set's shared lock.
struct MemoryAdjacency: AdjacencyReading {
    let index: AdjacencyIndex
    /// Label slots followed (nil: all).
    let labels: Set<UInt32>?
    let direction: LinkDirection

    init(_ index: AdjacencyIndex, labels: Set<String>?, direction: LinkDirection) {
        self.index = index
        self.labels = labels.map { Set($0.compactMap(index.existingLabel)) }
        self.direction = direction
    }

    func forEachNeighbour(
        of node: UInt32, _ body: (UInt32, Int64, String, Double, Bool) throws -> Void
    ) throws {
        if direction != .incoming {
            for half in index.outgoing[Int(node)] where labels?.contains(half.label) ?? true {
                try body(half.node, half.edge, index.labels[Int(half.label)], half.weight, false)
            }
        }
        if direction != .outgoing {
            for half in index.incoming[Int(node)] where labels?.contains(half.label) ?? true {
                try body(half.node, half.edge, index.labels[Int(half.label)], half.weight, true)
            }
        }
    }
}

/// The edge table read with one indexed SELECT per node and direction: what a write
/// transaction uses (the shared index never holds uncommitted links).
struct SQLAdjacency: AdjacencyReading {
    let connection: Connection
    let labels: Set<String>?
    let direction: LinkDirection

    func forEachNeighbour(
        of node: EdgeEndpoint, _ body: (EdgeEndpoint, Int64, String, Double, Bool) throws -> Void
    )
        throws
    {
        let labelCondition = labels == nil ? "" : " AND label IN (SELECT value FROM json_each(?))"
        var bindings: [SQLValue] = [.text(node.collection), node.sqlID]
        if let labels {
            bindings.append(.text(try JSONCoding.text(.array(labels.sorted().map { .string($0) }))))
        }
        if direction != .incoming {
            let statement = try connection.cachedStatement(
                "SELECT to_collection, to_id, id, label, weight FROM \(EdgeTable.table) WHERE from_collection = ? AND from_id = ?\(labelCondition)"
            )
            try statement.forEachRow(bindings) { row in
                try body(
                    EdgeEndpoint(row, column: 0), row.int64(at: 2), row.string(at: 3) ?? "",
                    row.double(at: 4), false)
            }
        }
        if direction != .outgoing {
            let statement = try connection.cachedStatement(
                "SELECT from_collection, from_id, id, label, weight FROM \(EdgeTable.table) WHERE to_collection = ? AND to_id = ?\(labelCondition)"
            )
            try statement.forEachRow(bindings) { row in
                try body(
                    EdgeEndpoint(row, column: 0), row.int64(at: 2), row.string(at: 3) ?? "",
                    row.double(at: 4), true)
            }
        }
    }
}

/// Breadth-first traversal and Dijkstra's shortest path, written once over any adjacency.
enum GraphAlgorithms {
    /// Every node within `maxHops` of `start` (not `start` itself), each once, with its depth,
    /// in breadth-first order.
    ///
    /// - Complexity: O(nodes + links reached).
    static func breadthFirst<A: AdjacencyReading>(_ adjacency: A, from start: A.Node, maxHops: Int)
        throws -> [(
            node: A.Node, depth: Int
        )]
    {
        var seen: Set<A.Node> = [start]
        var out: [(node: A.Node, depth: Int)] = []
        var frontier = [start]
        var depth = 0
        while !frontier.isEmpty, depth < maxHops {
            depth += 1
            var next: [A.Node] = []
            for node in frontier {
                try adjacency.forEachNeighbour(of: node) { neighbour, _, _, _, _ in
                    if seen.insert(neighbour).inserted {
                        next.append(neighbour)
                        out.append((neighbour, depth))
                    }
                }
            }
            frontier = next
        }
        return out
    }

    struct Step<Node> {
        var node: Node
        var edge: Int64
        var label: String
        var weight: Double
        var reversed: Bool
    }

    /// The path of least total weight from `start` to `goal` (Dijkstra 1959 with a binary heap;
    /// weights are never negative), or nil when `goal` is unreachable. Ties go to the path found
    /// first.
    ///
    /// - Complexity: O((nodes + links) log nodes) over the part of the graph closer than `goal`.
    static func shortestPath<A: AdjacencyReading>(
        _ adjacency: A, from start: A.Node, to goal: A.Node
    )
        throws -> (nodes: [A.Node], steps: [Step<A.Node>], weight: Double)?
    {
        if start == goal { return ([start], [], 0) }
        var distance: [A.Node: Double] = [start: 0]
        var previous: [A.Node: (from: A.Node, step: Step<A.Node>)] = [:]
        var done: Set<A.Node> = []
        var heap = MinHeap<A.Node>()
        heap.push(start, priority: 0)
        while let (node, d) = heap.pop() {
            guard done.insert(node).inserted else { continue }
            if node == goal { break }
            try adjacency.forEachNeighbour(of: node) { neighbour, edge, label, weight, reversed in
                let candidate = d + weight
                if !done.contains(neighbour), candidate < distance[neighbour] ?? .infinity {
                    distance[neighbour] = candidate
                    previous[neighbour] = (
                        node,
                        Step(
                            node: neighbour, edge: edge, label: label, weight: weight,
                            reversed: reversed)
                    )
                    heap.push(neighbour, priority: candidate)
                }
            }
        }
        guard let total = distance[goal], done.contains(goal) else { return nil }
        var nodes = [goal]
        var steps: [Step<A.Node>] = []
        var current = goal
        while let (from, step) = previous[current] {
            steps.append(step)
            nodes.append(from)
            current = from
        }
        return (nodes.reversed(), steps.reversed(), total)
    }
}

/// A binary min-heap of (element, priority); lazy deletion (stale entries are skipped by the
/// caller).
struct MinHeap<Element> {
    private var items: [(element: Element, priority: Double)] = []

    mutating func push(_ element: Element, priority: Double) {
        items.append((element, priority))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].priority < items[parent].priority else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    mutating func pop() -> (Element, Double)? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1
                let r = l + 1
                var smallest = i
                if l < items.count, items[l].priority < items[smallest].priority { smallest = l }
                if r < items.count, items[r].priority < items[smallest].priority { smallest = r }
                guard smallest != i else { break }
                items.swapAt(i, smallest)
                i = smallest
            }
        }
        return (top.element, top.priority)
    }
}
