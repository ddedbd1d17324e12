import Foundation
import Testing
import Trove
import TroveTestSupport
import TroveVectors

/// Codes-only HNSW (`keepsFloatVectors: false`) on a document collection's vector field: the walk
/// over int8 codes, exact distances from the table.
@Suite("Codes-only HNSW on document collections")
struct DocumentCodesOnlyTests {
    static let dimension = 16
    static let schema = DocumentSchema(
        fields: [.integer("group", indexed: true), .vector("v", dimension: dimension)],
        vectorIndexes: ["v": .hnsw(quantization: .int8, keepsFloatVectors: false)])

    static func exact(
        _ query: [Float], _ vectors: [Int64: [Float]], k: Int,
        where allows: (Int64) -> Bool = { _ in true }
    ) -> [Int64] {
        var scored: [(id: Int64, distance: Float)] = []
        for (id, vector) in vectors where allows(id) {
            scored.append((id, DistanceMetric.cosine.distance(query, vector)))
        }
        scored.sort { $0.distance != $1.distance ? $0.distance < $1.distance : $0.id < $1.id }
        return scored.prefix(k).map(\.id)
    }

    static func rid(_ id: DocumentID) -> Int64 {
        if case .int(let v) = id { return v }
        return -1
    }

    @Test(
        "walks, filtered walks and exact scans answer from the table's vectors; writes reach the codes"
    )
    func searches() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("c.trove"))
        let docs = try await db.documents("docs", schema: Self.schema)
        var rng = SeededGenerator(seed: 77)
        var vectors: [Int64: [Float]] = [:]
        var documents: [Document] = []
        for id in Int64(1)...3_000 {
            let v = rng.unitVector(dimension: Self.dimension)
            vectors[id] = v
            documents.append(Document(id: .int(id), ["group": .int(id % 100), "v": .vector(v)]))
        }
        try await docs.insert(documents)
        #expect(
            try await docs.explain(Query().nearest(to: vectors[1]!, in: "v")).contains {
                $0.contains("int8 codes")
            })
        var found = 0
        var wanted = 0
        for _ in 0..<20 {
            let q = rng.unitVector(dimension: Self.dimension)
            // Unfiltered walk: re-scored from the table, so each distance is the exact one.
            let hits = try await docs.search(Query().nearest(to: q, in: "v").limit(10))
            for hit in hits {
                let exactDistance = DistanceMetric.cosine.distance(
                    q, vectors[Self.rid(hit.record.id)]!)
                #expect(abs(hit.distances[0]! - Double(exactDistance)) < 1e-5)
            }
            found +=
                Set(hits.map { Self.rid($0.record.id) }).intersection(
                    Self.exact(q, vectors, k: 10)
                ).count
            wanted += 10
            // Few candidates (30 rows): an exact scan of their stored vectors, equal to the oracle.
            let few = try await docs.search(
                Query(Field("group") == 7).nearest(to: q, in: "v").limit(5))
            #expect(
                few.map { Self.rid($0.record.id) }
                    == Self.exact(q, vectors, k: 5) { $0 % 100 == 7 })
            // Many candidates (half the rows): a filtered walk; every hit passes the filter.
            let many = try await docs.search(
                Query(Field("group") < 50).nearest(to: q, in: "v").limit(10))
            #expect(many.count == 10)
            #expect(many.allSatisfy { Self.rid($0.record.id) % 100 < 50 })
        }
        #expect(Double(found) / Double(wanted) >= 0.9)
        // A raw SQL write reaches the codes on the next query.
        let target: [Float] = (0..<Self.dimension).map { $0 == 3 ? 1 : 0 }
        let blob = target.withUnsafeBytes { [UInt8]($0) }
        _ = try await db.execute("UPDATE docs SET v = ? WHERE id = 1234", bindings: [.blob(blob)])
        #expect(
            try await docs.search(Query().nearest(to: target, in: "v").limit(1)).first?.record.id
                == .int(1234))
        #expect(try await db.verify().isHealthy)
    }
}
