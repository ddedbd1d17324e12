import Testing
import TroveTestSupport

@testable import TroveVectors

/// Each quantization's defaults reach recall@10 >= 0.9 against the exact scan on the workload a
/// new user tried: 2,000 random 32-d vectors, default efSearch.
@Suite("HNSW quantization defaults")
struct HNSWQuantizationDefaultsTests {
    @Test(
        "recall@10 >= 0.9 with the default efSearch and re-scoring factor",
        arguments: HNSWQuantization.allCases)
    func defaultRecall(quantization: HNSWQuantization) throws {
        let configuration = HNSWConfiguration(quantization: quantization)
        #expect(configuration.efSearch == 64)
        #expect(
            configuration.rescoreFactor == HNSWConfiguration.defaultRescoreFactor(for: quantization)
        )
        for seed: UInt64 in [7, 11] {
            var fixture = try HNSWFixture(
                count: 2_000, dimension: 32, configuration: configuration, seed: seed)
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

    @Test(
        "converted(to:) with rescoreFactor nil takes the new quantization's default (issue 42)",
        arguments: [HNSWQuantization.int8, .binary])
    func convertedTakesTheDefault(quantization: HNSWQuantization) throws {
        let documented = HNSWConfiguration.defaultRescoreFactor(for: quantization)
        for seed: UInt64 in [7, 11] {
            // A float32 graph (factor 4), walked with codes as a new user converts it.
            let fixture = try HNSWFixture(count: 2_000, dimension: 32, seed: seed)
            let byDefault = try fixture.index.converted(to: quantization)
            #expect(byDefault.configuration.rescoreFactor == documented)
            var withNil = fixture
            var withDocumented = fixture
            withNil.index = byDefault
            withDocumented.index = try fixture.index.converted(
                to: quantization, rescoreFactor: documented)
            // The same seeded queries against the exact scan for both.
            let (recallNil, shortNil) = withNil.recall(queries: 200)
            let (recallDocumented, _) = withDocumented.recall(queries: 200)
            #expect(shortNil == 0)
            #expect(
                recallNil >= recallDocumented,
                "\(quantization) seed \(seed): nil \(recallNil), \(documented): \(recallDocumented)"
            )
            #expect(recallNil >= 0.9, "\(quantization) seed \(seed): recall@10 \(recallNil)")
        }
        // An explicit factor still wins over the default.
        let small = try HNSWIndex(dimension: 4, metric: .cosine)
        small.insert(id: 1, vector: [1, 0, 0, 0])
        #expect(
            try small.converted(to: quantization, rescoreFactor: 7).configuration.rescoreFactor == 7
        )
    }
}
