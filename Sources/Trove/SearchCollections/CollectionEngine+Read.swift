import Foundation
import TroveSQLite
import TroveVectors

extension CollectionEngine {
    func fetch(id: Int64) throws -> VectorEntry? {
        let statement = try connection.cachedStatement(
            "SELECT id, content, source, metadata, embedding FROM \(schema.table) WHERE id = ?")
        try statement.bind([.integer(id)])
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return VectorEntry(
            id: statement.int64(at: 0), content: statement.string(at: 1) ?? "",
            source: statement.string(at: 2) ?? "", metadata: statement.string(at: 3),
            vector: statement.blob(at: 4).map(Self.floats) ?? [])
    }

    static func floats(_ bytes: [UInt8]) -> [Float] {
        bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    func contains(id: Int64) throws -> Bool {
        try connection.scalar("SELECT 1 FROM \(schema.table) WHERE id = ?", [.integer(id)]) != nil
    }

    func count(source: String?) throws -> Int {
        if let source {
            return Int(try connection.scalar("SELECT count(*) FROM \(schema.table) WHERE source = ?", [.text(source)])?.int64Value ?? 0)
        }
        return Int(try connection.scalar("SELECT count(*) FROM \(schema.table)")?.int64Value ?? 0)
    }

    func sources() throws -> [SourceSummary] {
        try connection.query(
            "SELECT source, count(*), max(updated_at) FROM \(schema.table) GROUP BY source ORDER BY source"
        ).map {
            SourceSummary(source: $0.string(at: 0) ?? "", count: $0.int(at: 1) ?? 0,
                          lastUpdated: Date(timeIntervalSince1970: $0.double(at: 2) ?? 0))
        }
    }
}

/// How many rows came from one source.
public struct SourceSummary: Hashable, Sendable {
    /// The source label.
    public var source: String
    /// How many rows have it.
    public var count: Int
    /// When the most recently written row of this source was written.
    public var lastUpdated: Date
}
