import Foundation

/// A node of the link graph: a record of a collection, named by collection and id. The record
/// need not exist: a link may point at an id that is not (yet) a record, and such a node can be
/// traversed like any other.
///
/// ```swift
/// let manual = GraphNode("docs", 7)
/// let chunk = GraphNode("chunks", 70)
/// ```
public struct GraphNode: Hashable, Sendable, CustomStringConvertible {
    /// The collection's name.
    public var collection: String
    /// The record's id in that collection.
    public var id: DocumentID

    public init(_ collection: String, _ id: DocumentID) {
        self.collection = collection
        self.id = id
    }

    public var description: String { "\(collection)/\(id)" }
}

/// Which way links are followed from a node.
public enum LinkDirection: String, Hashable, Sendable, Codable {
    /// From the node to the targets of its links.
    case outgoing
    /// From the node to the sources of links pointing at it.
    case incoming
    /// Both.
    case both
}

/// One directed, labelled, weighted link.
public struct Link: Hashable, Sendable, CustomStringConvertible {
    public var from: GraphNode
    public var label: String
    public var to: GraphNode
    /// 1 unless given; never negative (shortest paths add weights).
    public var weight: Double

    public init(from: GraphNode, label: String, to: GraphNode, weight: Double = 1) {
        self.from = from
        self.label = label
        self.to = to
        self.weight = weight
    }

    public var description: String { "\(from) -\(label)(\(weight))-> \(to)" }
}

/// A node found by a traversal, with its depth (hops from the start, 1 for a neighbour).
public struct ReachedNode: Hashable, Sendable {
    public var node: GraphNode
    public var depth: Int
}

/// A shortest path: the nodes from start to end, the links taken and their summed weight.
public struct GraphPath: Hashable, Sendable {
    public var nodes: [GraphNode]
    public var links: [Link]
    public var totalWeight: Double
}

/// "Within `maxHops` links of `origin`": the part of a query that a graph traversal answers.
///
/// ```swift
/// // Chunks linked from document 7 (one hop, label "has"):
/// Filter.linked(GraphScope(from: GraphNode("docs", 7), maxHops: 1, labels: ["has"]))
/// ```
public struct GraphScope: Hashable, Sendable {
    /// Where the traversal starts (it is not itself part of the result).
    public var origin: GraphNode
    /// The most hops (1...64).
    public var maxHops: Int
    /// Only links with these labels (nil: any).
    public var labels: Set<String>?
    /// Which way links are followed.
    public var direction: LinkDirection

    public init(
        from origin: GraphNode, maxHops: Int = 1, labels: Set<String>? = nil,
        direction: LinkDirection = .outgoing
    ) {
        self.origin = origin
        self.maxHops = maxHops
        self.labels = labels
        self.direction = direction
    }

    static let maximumHops = 64

    func validate() throws {
        guard (1...Self.maximumHops).contains(maxHops) else {
            throw TroveError.invalidQuery(
                "maxHops must be in 1...\(Self.maximumHops), got \(maxHops)")
        }
    }
}
