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

    /// A node as the hash map keys it: the collection interned (a handful of names, hashed once
    /// each) and the raw id, so a lookup hashes an integer rather than a string.
    private struct NodeKey: Hashable {
        var collection: UInt32
        var id: EdgeEndpoint.RawID
    }

    private(set) var endpoints: [EdgeEndpoint] = []
    private var slots: [NodeKey: UInt32] = [:]
    private var collectionSlots: [String: UInt32] = [:]
    /// The last collection looked up: links mostly come in runs of one collection.
    private var lastCollection: (name: String, slot: UInt32)?
    private(set) var labels: [String] = []
    private var labelSlots: [String: UInt32] = [:]
    private(set) var outgoing: [[HalfEdge]] = []
    private(set) var incoming: [[HalfEdge]] = []
    /// Link id -> endpoints, to find a deleted link's half-edges.
    private var links: [Int64: (from: UInt32, to: UInt32)] = [:]
    private var loaded = false

    var name: String { "adjacency(\(EdgeTable.name))" }
    var columns: [String] {
        ["from_collection", "from_id", "label", "to_collection", "to_id", "weight"]
    }
    var isLoaded: Bool { loaded }
    var linkCount: Int { links.count }

    func reset() {
        endpoints = []
        slots = [:]
        collectionSlots = [:]
        lastCollection = nil
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

    /// Called only while applying changes (exclusive lock).
    private func collectionSlot(_ name: String) -> UInt32 {
        if let last = lastCollection, last.name == name { return last.slot }
        let slot = collectionSlots[name] ?? UInt32(collectionSlots.count)
        collectionSlots[name] = slot
        lastCollection = (name, slot)
        return slot
    }

    private func slot(_ endpoint: EdgeEndpoint) -> UInt32 {
        let key = NodeKey(collection: collectionSlot(endpoint.collection), id: endpoint.id)
        if let slot = slots[key] { return slot }
        let slot = UInt32(endpoints.count)
        endpoints.append(endpoint)
        slots[key] = slot
        outgoing.append([])
        incoming.append([])
        return slot
    }

    private func labelSlot(_ label: String) -> UInt32 {
        if let last = labels.last, last == label { return UInt32(labels.count - 1) }
        if let slot = labelSlots[label] { return slot }
        let slot = UInt32(labels.count)
        labels.append(label)
        labelSlots[label] = slot
        return slot
    }

    /// Read-only (readers call it under the shared lock, so it must not touch `lastCollection`).
    func existingSlot(_ endpoint: EdgeEndpoint) -> UInt32? {
        guard let collection = collectionSlots[endpoint.collection] else { return nil }
        return slots[NodeKey(collection: collection, id: endpoint.id)]
    }
    func existingLabel(_ label: String) -> UInt32? { labelSlots[label] }

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        guard loaded else { return [] }
        let stored =
            try connection.scalar("SELECT count(*) FROM \(EdgeTable.table)")?.int64Value ?? 0
        return Int(stored) == links.count
            ? [] : ["\(name): \(links.count) links in memory, \(stored) in the table"]
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {}
}
