// libFuzzer target: the HNSW index snapshot loader (HNSWIndex(snapshot:)).
// Each input is tried twice: as given (exercising the magic/version/size/checksum checks) and
// with its checksum trailer recomputed, so mutations reach the structural checks of the body
// (slot states, levels, link counts and ranges, graph invariants) instead of stopping at the
// checksum. Properties: malformed bytes throw VectorIndexError, never trap or read out of bounds
// (ASan); an accepted snapshot answers a search, keeps its invariants, and its own snapshot
// round-trips.
// Seeds: TROVE_FUZZ_WRITE_SEEDS=<dir> Fuzz/.build/SnapshotLoader  writes real snapshots and exits.
import Foundation

@_cdecl("LLVMFuzzerInitialize")
public func fuzzSnapshotInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    guard let dir = ProcessInfo.processInfo.environment["TROVE_FUZZ_WRITE_SEEDS"] else { return 0 }
    var state: UInt64 = 42
    func next() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: state >> 11) % 2001 - 1000) / 1000
    }
    var n = 0
    for metric in DistanceMetric.allCases {
        for quantization in HNSWQuantization.allCases {
            for (count, dimension) in [(0, 3), (1, 2), (12, 3), (40, 4)] {
                let index = try! HNSWIndex(
                    dimension: dimension, metric: metric,
                    configuration: HNSWConfiguration(m: 4, efConstruction: 16, efSearch: 8, seed: 7, quantization: quantization))
                for id in 0..<count { index.insert(id: Int64(id), vector: (0..<dimension).map { _ in next() + 0.001 }) }
                if count > 10 { _ = index.remove(id: 3); _ = index.remove(id: 5) }
                let bytes = index.snapshot()
                _ = FileManager.default.createFile(atPath: "\(dir)/seed-\(n)", contents: Data(bytes))
                n += 1
            }
        }
    }
    print("wrote \(n) seeds to \(dir)")
    exit(0)
}

private func tryLoad(_ bytes: [UInt8]) {
    do {
        let index = try HNSWIndex(snapshot: bytes)
        let query = [Float](repeating: 0.5, count: index.dimension)
        let hits = index.search(query, k: 5)
        precondition(hits.count <= min(5, index.count), "more hits than vectors")
        precondition(index.invariantViolations(limit: 1).isEmpty, "accepted snapshot breaks invariants")
        // Reserved bytes and unused link entries need not survive, so the property is that the
        // index's own snapshot loads back to the same index (same bytes once canonical).
        let canonical = index.snapshot()
        let again = try HNSWIndex(snapshot: canonical)
        precondition(again.snapshot() == canonical, "a snapshot of an accepted index does not round-trip")
        precondition(Set(again.ids) == Set(index.ids), "ids changed in the round trip")
    } catch is VectorIndexError {
        // expected for malformed input
    } catch {
        fatalError("unexpected error type: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSnapshotLoader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    tryLoad(bytes)
    if bytes.count >= 16 {
        let checksum = snapshotChecksum(bytes[0..<(bytes.count - 8)])
        for i in 0..<8 { bytes[bytes.count - 8 + i] = UInt8(truncatingIfNeeded: checksum >> (8 * UInt64(i))) }
        tryLoad(bytes)
    }
    return 0
}
