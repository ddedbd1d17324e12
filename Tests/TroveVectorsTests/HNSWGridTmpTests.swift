import Testing
import TroveTestSupport
@testable import TroveVectors

@Suite("TMP grid")
struct HNSWGridTmpTests {
    @Test("grid") func grid() throws {
        for q in HNSWQuantization.allCases {
            for factor in [4, 8, 12, 16, 20, 32] {
                if q != .binary && factor > 8 { continue }
                var f = try HNSWFixture(count: 2_000, dimension: 32, configuration: HNSWConfiguration(quantization: q, rescoreFactor: factor), seed: 11)
                let r = f.recall(queries: 200).recall
                print("GRID \(q) factor \(factor) ef64 recall \(r)")
            }
        }
    }
}
