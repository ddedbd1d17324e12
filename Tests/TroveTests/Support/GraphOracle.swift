import Foundation
import Trove

/// A brute-force link graph for tests: a plain list of links, breadth-first search by
/// repeated scans and shortest paths by Bellman-Ford (so nothing is shared with Trove's
/// adjacency lists or its Dijkstra).
struct GraphOracle {
    var links: [Link] = []

    mutating func link(_ link: Link) {
        links.removeAll { $0.from == link.from && $0.to == link.to && $0.label == link.label }
        links.append(link)
    }

    mutating func unlink(_ from: GraphNode, _ to: GraphNode, label: String?) {
        links.removeAll { $0.from == from && $0.to == to && (label == nil || $0.label == label) }
    }

    mutating func delete(_ node: GraphNode) { links.removeAll { $0.from == node || $0.to == node } }

    /// (neighbour, link) pairs along the allowed links.
    func steps(from node: GraphNode, labels: Set<String>?, direction: LinkDirection) -> [(
        GraphNode, Link
    )] {
        links.compactMap { link in
            guard labels?.contains(link.label) ?? true else { return nil }
            if direction != .incoming, link.from == node { return (link.to, link) }
            if direction != .outgoing, link.to == node { return (link.from, link) }
            return nil
        }
    }

    func neighbours(of node: GraphNode, labels: Set<String>?, direction: LinkDirection) -> [Link] {
        var out: [Link] = []
        if direction != .incoming {
            out += links.filter { $0.from == node && (labels?.contains($0.label) ?? true) }
        }
        if direction != .outgoing {
            out += links.filter { $0.to == node && (labels?.contains($0.label) ?? true) }
        }
        return out
    }

    /// Hop distance of every node within maxHops (start excluded).
    func depths(from start: GraphNode, maxHops: Int, labels: Set<String>?, direction: LinkDirection)
        -> [GraphNode: Int]
    {
        var depth: [GraphNode: Int] = [start: 0]
        var frontier: Set<GraphNode> = [start]
        for hop in 1...maxHops {
            var next: Set<GraphNode> = []
            for node in frontier {
                for (neighbour, _) in steps(from: node, labels: labels, direction: direction)
                where depth[neighbour] == nil {
                    depth[neighbour] = hop
                    next.insert(neighbour)
                }
            }
            frontier = next
        }
        depth[start] = nil
        return depth
    }

    /// The least total weight from start to end (Bellman-Ford), nil when unreachable.
    func distance(
        from start: GraphNode, to end: GraphNode, labels: Set<String>?, direction: LinkDirection
    ) -> Double? {
        var best: [GraphNode: Double] = [start: 0]
        var changed = true
        while changed {
            changed = false
            for link in links where labels?.contains(link.label) ?? true {
                var pairs: [(GraphNode, GraphNode)] = []
                if direction != .incoming { pairs.append((link.from, link.to)) }
                if direction != .outgoing { pairs.append((link.to, link.from)) }
                for (a, b) in pairs {
                    if let d = best[a], d + link.weight < (best[b] ?? .infinity) - 1e-12 {
                        best[b] = d + link.weight
                        changed = true
                    }
                }
            }
        }
        return best[end]
    }
}
