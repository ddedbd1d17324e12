import CTroveEncoderKernels
import Foundation
import Testing

@testable import TroveEmbeddings

/// The e5 encoder's resident memory stays near its 12 MB of layer weights: the word-embedding
/// table (54 MB) is read with pread, never through the mapping; the header pages copied out at
/// load are given back; activations are reused, one set per concurrent caller.
@Suite("E5Memory")
struct E5MemoryTests {
    /// A private mapping of the model file (not the suite-wide embedder), so that only this
    /// test's reads count in its resident bytes.
    static func privateEncoder() throws -> E5Encoder {
        let url = E5Embedder.defaultModelDirectory.appendingPathComponent(
            E5Embedder.weightsFileName)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw E5Fixtures.ModelNotInstalled(path: url.path)
        }
        return try E5Encoder(file: E5ModelFile(url: url))
    }

    @Test("whole pages of a byte range: partial pages at either end are kept")
    func wholePages() {
        let page = 4096
        #expect(
            MappedPages.wholePages(address: 0, byteCount: 3 * page, pageSize: page)
                == 0..<(3 * page))
        #expect(
            MappedPages.wholePages(address: 1, byteCount: 3 * page, pageSize: page)
                == page..<(3 * page))
        #expect(
            MappedPages.wholePages(address: page - 1, byteCount: page + 2, pageSize: page)
                == page..<(2 * page))
        #expect(MappedPages.wholePages(address: 10, byteCount: page, pageSize: page) == nil)
        #expect(MappedPages.wholePages(address: page, byteCount: 0, pageSize: page) == nil)
        #expect(MappedPages.wholePages(address: page, byteCount: page, pageSize: 0) == nil)
    }

    @Test(
        "word rows read from the file equal the mapped rows, and leave the table out of resident memory"
    )
    func wordRowsStayOutOfMemory() throws {
        let encoder = try Self.privateEncoder()
        let file = encoder.file
        let h = encoder.configuration.hiddenSize
        let rows = encoder.configuration.vocabularyRows
        #if !os(Linux)
            return  // residentMappedBytes reads /proc/self/smaps
        #endif
        let before = try #require(file.residentMappedBytes)
        // After load, the header and vocabulary pages (about 7 MB) were given back. What stays is
        // under a few MB: the kernel's fault-around maps the neighbours of each page touched when
        // they are already in the page cache, which another test loading the same file (in this
        // process, at the same time) puts there.
        #expect(before < 4 << 20, "\(before) bytes of the mapping resident right after load")

        // 6,000 ids spread over the whole table: through the mapping, each would map a page
        // (on Linux 6, a whole page-cache folio), about all 54 MB of it.
        let ids = (0..<6000).map { Int32($0 * (rows - 1) / 5999) }
        let buffer = UnsafeMutableRawPointer.allocate(
            byteCount: encoder.wordRowBytes, alignment: 16)
        defer { buffer.deallocate() }
        var read = [Float](repeating: 0, count: ids.count * h)
        read.withUnsafeMutableBufferPointer { out in
            for (n, id) in ids.enumerated() {
                encoder.wordEmbedding(id, buffer: buffer, into: out.baseAddress! + n * h)
            }
        }
        let after = try #require(file.residentMappedBytes)
        #expect(
            after - before < 2 << 20,
            "word lookups put \(after - before) bytes of the mapping in memory")

        // The same rows through the mapping (which does map them in; checked last).
        let words = try file.q4Blocks("emb.word", rows: rows, columns: h)
        var mapped = [Float](repeating: 0, count: h)
        for n in stride(from: 0, to: ids.count, by: 499) {
            trove_q4_dequantize(words + Int(ids[n]) * encoder.wordRowBytes, h, &mapped)
            #expect(Array(read[(n * h)..<((n + 1) * h)]) == mapped, "row \(ids[n])")
        }
    }

    @Test("a forward pass over many distinct tokens keeps the mapping near the layers' size")
    func forwardPassResidency() throws {
        let encoder = try Self.privateEncoder()
        let rows = encoder.configuration.vocabularyRows
        #if !os(Linux)
            return  // residentMappedBytes reads /proc/self/smaps
        #endif
        // Two passes of 120 tokens with ids spread over the table (`<s>` and `</s>` around them).
        for pass in 0..<2 {
            let ids = (0..<120).map { Int32(3 + (pass * 120 + $0) * (rows - 4) / 240) }
            _ = encoder.meanPooled([[0] + ids + [2]], threads: 1)
        }
        let resident = try #require(encoder.file.residentMappedBytes)
        if encoder.usesPackedWeights {
            // The layers were copied at load with pread (packed for AVX-512 VNNI): of the mapping
            // only the float tensors (position table, biases, norms) and the header are used. The
            // kernel's fault-around maps the neighbours of those small tensors (layer pages already
            // in the page cache when another test loads the same file), so the bound is the layers'
            // size; the word table alone would be 54 MB.
            #expect(resident > 0, "the measure is not live")
            #expect(
                resident < 20 << 20, "\(resident) bytes of the mapping resident after two passes")
        } else {
            // The layers were read through the mapping: they are resident, the measure is live.
            #expect(
                resident > 8 << 20,
                "only \(resident) bytes of the mapping resident after two passes")
            // The layers are 12 MB and the position table 0.8 MB; the word table alone is 54 MB.
            #expect(
                resident < 20 << 20, "\(resident) bytes of the mapping resident after two passes")
        }
        // The activations of the two passes (one caller at a time) were one reused set.
        #expect(encoder.activations.idleCount == 1)
    }

    @Test(
        "concurrent callers each get their own activations, kept for reuse, at most one per caller")
    func activationPool() {
        let pool = E5Activations.Pool()
        let small = E5Activations.Shape(floats: 32, codes: 32, attention: 16, row: 18)
        let large = E5Activations.Shape(floats: 512, codes: 32, attention: 16, row: 18)
        let a = pool.take(small)
        let b = pool.take(small)
        #expect(a !== b)
        pool.give(a)
        pool.give(b)
        #expect(pool.idleCount == 2)
        let c = pool.take(small)
        #expect(c === b)  // reused
        pool.give(c)
        let d = pool.take(large)  // grows the set it took instead of adding one
        #expect(d.capacity.floats == 512)
        pool.give(d)
        #expect(pool.idleCount == 2)
    }
}
