import Testing
import TroveTestSupport
@testable import TroveVectors

@Suite("VectorMatrix")
struct VectorMatrixTests {
    /// Fills a matrix in place as a snapshot load does, `chunk` bytes at a time.
    static func filled(ids: [Int64], floats: [Float], dimension: Int, chunk: Int) -> VectorMatrix? {
        VectorMatrix(dimension: dimension, count: ids.count) { idBytes, rows in
            ids.withUnsafeBytes { idBytes.copyMemory(from: $0) }
            floats.withUnsafeBytes { source in
                var offset = 0
                while offset < source.count {
                    let n = min(chunk, source.count - offset)
                    UnsafeMutableRawBufferPointer(rebasing: rows[offset..<offset + n])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[offset..<offset + n]))
                    offset += n
                }
            }
            return true
        }
    }

    // 12 MB of rows: above the huge-page threshold, where a second thread populates the pages
    // while the fill writes them; every byte written must survive.
    @Test("A matrix filled in place holds exactly what was written", arguments: [(count: 6_000, dimension: 512), (count: 5, dimension: 3)])
    func fillingKeepsEveryByte(shape: (count: Int, dimension: Int)) throws {
        var rng = SeededGenerator(seed: 27)
        let ids = (0..<shape.count).map { Int64($0 * 5 + 1) }
        let floats = (0..<shape.count * shape.dimension).map { _ in Float.random(in: -1...1, using: &rng) }
        let matrix = try #require(Self.filled(ids: ids, floats: floats, dimension: shape.dimension, chunk: 3_904))
        #expect(matrix.count == shape.count)
        #expect(matrix.ids == ids)
        for slot in 0..<shape.count {
            let expected = Array(floats[slot * shape.dimension..<(slot + 1) * shape.dimension])
            guard matrix.row(forID: ids[slot]) == expected else {
                Issue.record("row \(slot) differs from what was written")
                return
            }
        }
    }

    @Test("A fill that fails or repeats an id gives no matrix")
    func refusedFill() {
        #expect(VectorMatrix(dimension: 4, count: 3) { _, _ in false } == nil)
        #expect(Self.filled(ids: [1, 2, 1], floats: Array(repeating: 0.5, count: 12), dimension: 4, chunk: 16) == nil)
    }
}
