import Foundation
import Testing

@testable import TroveVectors

/// Bugs the fuzzers and the harness found, each pinned by a test named after it.
@Suite("Regressions found by fuzzing")
struct RegressionTests {
    /// Fuzz/Targets/SnapshotLoader: a snapshot header with a body length near UInt64.max made
    /// `headerSize + bodyLength + 8` overflow, trapping instead of throwing.
    @Test("HNSW snapshot with a body length near UInt64.max throws instead of overflowing")
    func snapshotBodyLengthOverflow() throws {
        let index = try HNSWIndex(
            dimension: 2, metric: .l2, configuration: HNSWConfiguration(m: 4, efConstruction: 8))
        index.insert(id: 1, vector: [0, 1])
        for bodyLength in [UInt64.max, UInt64.max - 87, UInt64(Int.max)] {
            var bytes = index.snapshot()
            // Body length: UInt64 at offset 64 of the header (little-endian).
            for i in 0..<8 {
                bytes[64 + i] = UInt8(truncatingIfNeeded: bodyLength >> (8 * UInt64(i)))
            }
            #expect(throws: VectorIndexError.self) { _ = try HNSWIndex(snapshot: bytes) }
        }
    }
}

extension RegressionTests {
    /// Fuzz/Targets/SnapshotLoader: a snapshot (with a valid checksum) holding a NaN or infinite
    /// component trapped in the int8 encoder while loading instead of being rejected as corrupt.
    @Test(
        "HNSW snapshot with a non-finite vector component is corrupt, not a trap",
        arguments: [HNSWQuantization.none, .int8, .binary])
    func snapshotNonFiniteComponent(_ quantization: HNSWQuantization) throws {
        let index = try HNSWIndex(
            dimension: 2, metric: .l2,
            configuration: HNSWConfiguration(m: 4, efConstruction: 8, quantization: quantization))
        index.insert(id: 1, vector: [0.25, 1])
        let good = index.snapshot()
        let pattern = withUnsafeBytes(of: Float(0.25).bitPattern.littleEndian) { Array($0) }
        // The first vector starts after the 80-byte header and the (one) slot's id, state and level.
        let offset = 80 + 10
        #expect(Array(good[offset..<(offset + 4)]) == pattern)
        for bad in [Float.nan, .infinity, -.infinity] {
            var bytes = good
            withUnsafeBytes(of: bad.bitPattern.littleEndian) {
                for i in 0..<4 { bytes[offset + i] = $0[i] }
            }
            let checksum = snapshotChecksum(bytes[0..<(bytes.count - 8)])
            for i in 0..<8 {
                bytes[bytes.count - 8 + i] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt64(i)))
            }
            #expect(throws: VectorIndexError.self) { _ = try HNSWIndex(snapshot: bytes) }
        }
    }
}

extension RegressionTests {
    /// Fuzz/Targets/SnapshotLoader: the int8 encoder divided by maxAbs / 127, which underflows to
    /// zero for subnormal vectors, so inserting (or loading) such a vector trapped.
    @Test("HNSW int8 index accepts a vector of subnormal components without trapping")
    func int8SubnormalVector() throws {
        let index = try HNSWIndex(
            dimension: 3, metric: .l2,
            configuration: HNSWConfiguration(m: 4, efConstruction: 8, quantization: .int8))
        index.insert(id: 1, vector: [Float(bitPattern: 7), -Float(bitPattern: 1), 0])
        index.insert(id: 2, vector: [1, 0, 0])
        let loaded = try HNSWIndex(snapshot: index.snapshot())
        #expect(loaded.count == 2)
        #expect(loaded.search([0, 0, 0], k: 1).first?.id == 1)
    }
}
