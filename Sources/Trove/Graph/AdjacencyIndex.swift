import Foundation
import TroveSQLite

/// A link endpoint as stored: the collection and the id's SQL value (integer or text).
struct EdgeEndpoint: Hashable, Sendable {
    enum RawID: Hashable, Sendable {
        case int(Int64)
        case text(String)
    }
    let collection: String
    let id: RawID

    init(collection: String, id: RawID) {
        self.collection = collection
        self.id = id
    }

    init(_ node: GraphNode) {
        collection = node.collection
        switch node.id.sqlValue {
        case .integer(let v): id = .int(v)
        case .text(let v): id = .text(v)
        default: preconditionFailure("document ids are integers or text")
        }
    }

    /// Reads an endpoint from columns `column` (collection) and `column + 1` (id).
    init(_ statement: Statement, column: Int) {
        collection = statement.string(at: column) ?? ""
        if case .text(let v) = statement.value(at: column + 1) {
            id = .text(v)
        } else {
            id = .int(statement.int64(at: column + 1))
        }
    }

    var sqlID: SQLValue {
        switch id {
        case .int(let v): .integer(v)
        case .text(let v): .text(v)
        }
    }
}

/// The in-memory adjacency lists of every link in the file (a ``DerivedIndex`` over
/// `_trove_edges`, caught up from `_trove_edges_log`): traversals and shortest paths walk
/// arrays instead of running one indexed SELECT per node.
///
/// Memory: per link two 24-byte half-edges and one entry of the link-id map (about 80 bytes
/// in all); per node its endpoint (collection and id) and its slot in the hash map. Nodes whose
/// links are all gone keep their slot until the next rebuild.
final class AdjacencyIndex: DerivedIndex {
    /// One direction of a link, stored in the adjacency list of one of its endpoints.
    struct HalfEdge {
        var node: UInt32
        var label: UInt32
        var weight: Double
        var edge: Int64
    }

    private(set) var endpoints: [EdgeEndpoint] = []
    private var slots: [EdgeEndpoint: UInt32] = [:]
    private(set) var labels: [String] = []
    private var labelSlots: [String: UInt32] = [:]
    private(set) var outgoing: [[HalfEdge]] = []
    private(set) var incoming: [[HalfEdge]] = []
    /// Link id -> endpoints, to find a deleted link's half-edges.
    private var links: [Int64: (from: UInt32, to: UInt32)] = [:]
    private var loaded = false

    var name: String { "adjacency(\(EdgeTable.name))" }
    var columns: [String] { ["from_collection", "from_id", "label", "to_collection", "to_id", "weight"] }
    var isLoaded: Bool { loaded }
    var linkCount: Int { links.count }

    func reset() {
        endpoints = []
        slots = [:]
        labels = []
        labelSlots = [:]
        outgoing = []
        incoming = []
        links = [:]
        loaded = true
    }

    func apply(rid: Int64, statement: Statement?, firstColumn c: Int) {
        if !loaded { reset() }
        remove(rid)
        guard let statement else { return }
        let from = slot(EdgeEndpoint(statement, column: c))
        let to = slot(EdgeEndpoint(statement, column: c + 3))
        let label = labelSlot(statement.string(at: c + 2) ?? "")
        let weight = statement.double(at: c + 5)
        outgoing[Int(from)].append(HalfEdge(node: to, label: label, weight: weight, edge: rid))
        incoming[Int(to)].append(HalfEdge(node: from, label: label, weight: weight, edge: rid))
        links[rid] = (from, to)
    }

    private func remove(_ rid: Int64) {
        guard let (from, to) = links.removeValue(forKey: rid) else { return }
        outgoing[Int(from)].removeAll { $0.edge == rid }
        incoming[Int(to)].removeAll { $0.edge == rid }
    }

    private func slot(_ endpoint: EdgeEndpoint) -> UInt32 {
        if let slot = slots[endpoint] { return slot }
        let slot = UInt32(endpoints.count)
        endpoints.append(endpoint)
        slots[endpoint] = slot
        outgoing.append([])
        incoming.append([])
        return slot
    }

    private func labelSlot(_ label: String) -> UInt32 {
        if let slot = labelSlots[label] { return slot }
        let slot = UInt32(labels.count)
        labels.append(label)
        labelSlots[label] = slot
        return slot
    }

    func existingSlot(_ endpoint: EdgeEndpoint) -> UInt32? { slots[endpoint] }
    func existingLabel(_ label: String) -> UInt32? { labelSlots[label] }

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard loaded else { return [] }
        let stored = try connection.scalar("SELECT count(*) FROM \(EdgeTable.table)")?.int64Value ?? 0
        return Int(stored) == links.count ? [] : ["\(name): \(links.count) links in memory, \(stored) in the table"]
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}
}

/// Something whose neighbours a traversal can ask for: the in-memory adjacency lists or the
/// edge table itself.
protocol AdjacencyReading {
    associatedtype Node: Hashable
    /// Calls `body` with each neighbour of `node` along the links the reader follows: the
    /// neighbour, the link's id, label and weight, and whether the link points at `node`.
    func forEachNeighbour(of node: Node, _ body: (_ neighbour: Node, _ edge: Int64, _ label: String, _ weight: Double, _ reversed: Bool) throws -> Void) throws
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

    func forEachNeighbour(of node: UInt32, _ body: (UInt32, Int64, String, Double, Bool) throws -> Void) throws {
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

    func forEachNeighbour(of node: EdgeEndpoint, _ body: (EdgeEndpoint, Int64, String, Double, Bool) throws -> Void) throws {
        let labelCondition = labels == nil ? "" : " AND label IN (SELECT value FROM json_each(?))"
        var bindings: [SQLValue] = [.text(node.collection), node.sqlID]
        if let labels { bindings.append(.text(try JSONCoding.text(.array(labels.sorted().map { .string($0) })))) }
        if direction != .incoming {
            let statement = try connection.cachedStatement(
                "SELECT to_collection, to_id, id, label, weight FROM \(EdgeTable.table) WHERE from_collection = ? AND from_id = ?\(labelCondition)")
            try statement.forEachRow(bindings) { row in
                try body(EdgeEndpoint(row, column: 0), row.int64(at: 2), row.string(at: 3) ?? "", row.double(at: 4), false)
            }
        }
        if direction != .outgoing {
            let statement = try connection.cachedStatement(
                "SELECT from_collection, from_id, id, label, weight FROM \(EdgeTable.table) WHERE to_collection = ? AND to_id = ?\(labelCondition)")
            try statement.forEachRow(bindings) { row in
                try body(EdgeEndpoint(row, column: 0), row.int64(at: 2), row.string(at: 3) ?? "", row.double(at: 4), true)
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
    static func breadthFirst<A: AdjacencyReading>(_ adjacency: A, from start: A.Node, maxHops: Int) throws -> [(node: A.Node, depth: Int)] {
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
    static func shortestPath<A: AdjacencyReading>(_ adjacency: A, from start: A.Node, to goal: A.Node)
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
                    previous[neighbour] = (node, Step(node: neighbour, edge: edge, label: label, weight: weight, reversed: reversed))
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
                let l = 2 * i + 1, r = l + 1
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
