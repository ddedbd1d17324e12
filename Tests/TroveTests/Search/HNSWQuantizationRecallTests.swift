import Foundation
import Testing
import Trove
import TroveTestSupport

/// A document vector field's HNSW index, for each quantization, with nothing but `.hnsw(quantization:)`
/// set, finds at least 9 of the exact 10 nearest (a flat field over the same vectors) on 2,000
/// seeded random 32-d vectors.
@Suite("HNSW quantization recall on document fields")
struct HNSWQuantizationRecallTests {
    @Test(
        "recall@10 >= 0.9 against the exact scan with the defaults",
        arguments: HNSWQuantization.allCases)
    func defaultRecall(quantization: HNSWQuantization) async throws {
        var generator = SeededGenerator(seed: 24)
        let vectors = (0..<2_000).map { _ in generator.vector(dimension: 32) }
        let questions = (0..<100).map { _ in generator.vector(dimension: 32) }
        let database = try Database()
        func collection(_ name: String, _ kind: IndexKind) async throws -> DocumentCollection {
            let collection = try await database.documents(
                name,
                schema: DocumentSchema(
                    fields: [.vector("embedding", dimension: 32)],
                    vectorIndexes: ["embedding": kind]))
            try await collection.insert(
                vectors.enumerated().map {
                    Document(id: .int(Int64($0.offset + 1)), ["embedding": .vector($0.element)])
                })
            return collection
        }
        let exact = try await collection("exact", .flat)
        let approximate = try await collection("approximate", .hnsw(quantization: quantization))
        var found = 0
        for question in questions {
            let query = Query().nearest(to: question, in: "embedding").limit(10)
            let truth = Set(try await exact.search(query).map(\.record.id))
            #expect(truth.count == 10)
            found += try await approximate.search(query).filter { truth.contains($0.record.id) }
                .count
        }
        let recall = Double(found) / Double(questions.count * 10)
        #expect(recall >= 0.9, "\(quantization): recall@10 \(recall)")
    }
}
