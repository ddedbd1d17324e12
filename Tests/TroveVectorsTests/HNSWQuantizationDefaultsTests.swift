import Testing
import TroveTestSupport
@testable import TroveVectors

/// Each quantization's defaults reach recall@10 >= 0.9 against the exact scan on the workload a
/// new user tried: 2,000 random 32-d vectors, default efSearch.
@Suite("HNSW quantization defaults")
struct HNSWQuantizationDefaultsTests {
    @Test("recall@10 >= 0.9 with the default efSearch and re-scoring factor", arguments: HNSWQuantization.allCases)
    func defaultRecall(quantization: HNSWQuantization) throws {
        let configuration = HNSWConfiguration(quantization: quantization)
        #expect(configuration.efSearch == 64)
        #expect(configuration.rescoreFactor == HNSWConfiguration.defaultRescoreFactor(for: quantization))
        for seed: UInt64 in [7, 11] {
            var fixture = try HNSWFixture(count: 2_000, dimension: 32, configuration: configuration, seed: seed)
            let (recall, short) = fixture.recall(queries: 200)
            #expect(short == 0)
            #expect(recall >= 0.9, "\(quantization) seed \(seed): recall@10 \(recall)")
        }
    }

    @Test("an explicit re-scoring factor is kept, and survives a snapshot")
    func explicitFactor() throws {
        let configuration = HNSWConfiguration(quantization: .binary, rescoreFactor: 5)
        #expect(configuration.rescoreFactor == 5)
        let index = try HNSWIndex(dimension: 4, metric: .cosine, configuration: configuration)
        index.insert(id: 1, vector: [1, 0, 0, 0])
        #expect(try HNSWIndex(snapshot: index.snapshot()).configuration.rescoreFactor == 5)
    }
}
