import Foundation
import Testing
import TroveTestSupport

@testable import TroveEmbeddings

func cosine(_ a: [Float], _ b: [Float]) -> Float {
    var dot: Float = 0
    var na: Float = 0
    var nb: Float = 0
    for i in a.indices {
        dot += a[i] * b[i]
        na += a[i] * a[i]
        nb += b[i] * b[i]
    }
    return dot / (na.squareRoot() * nb.squareRoot())
}

func maxAbsDifference(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}

/// Loaded once per backend: loading is cheap, but the golden tests share one instance.
enum SharedEmbedder {
    static let blas = Result<BERTEmbedder, any Error> {
        try BERTEmbedder(modelDirectory: try Fixtures.requireModel(), backend: .blas)
    }
    static let swift = Result<BERTEmbedder, any Error> {
        try BERTEmbedder(modelDirectory: try Fixtures.requireModel(), backend: .swift)
    }
    static let native = Result<BERTEmbedder, any Error> {
        try BERTEmbedder(modelDirectory: try Fixtures.requireModel(), backend: .native)
    }

    static func get(_ backend: MatrixBackend) throws -> BERTEmbedder {
        switch backend {
        case .native: try native.get()
        case .blas: try blas.get()
        case .swift: try swift.get()
        }
    }
}

@Suite("BERTEmbedder")
struct BERTEmbedderTests {
    @Test("fixture file has all 92 reference embeddings")
    func fixtureCount() {
        #expect(Fixtures.embeddingCases.count == 92)
    }

    @Test(
        "all 92 reference embeddings: cosine >= 0.9999 and same token count",
        arguments: [MatrixBackend.native, .blas])
    func goldenEmbeddings(_ backend: MatrixBackend) async throws {
        let embedder = try SharedEmbedder.get(backend)
        let cases = Fixtures.embeddingCases
        let vectors = try await embedder.embed(cases.map(\.text))
        var worst: Float = 1
        for (testCase, vector) in zip(cases, vectors) {
            #expect(embedder.tokenizer.encode(testCase.text).count == testCase.tokens)
            #expect(vector.count == 384)
            let similarity = cosine(vector, testCase.embedding)
            worst = min(worst, similarity)
            #expect(
                similarity >= 0.9999,
                "\(testCase.text.prefix(60).debugDescription): cosine \(similarity)")
        }
        #expect(worst >= 0.9999)
    }

    @Test("vectors have unit length")
    func unitLength() async throws {
        let embedder = try SharedEmbedder.blas.get()
        for vector in try await embedder.embed([
            "a", "groceries for sunday", String(repeating: "long text ", count: 50),
        ]) {
            let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
            #expect(abs(norm - 1) < 1e-5)
        }
    }

    @Test("a text's vector does not depend on its batch", arguments: [MatrixBackend.native, .blas])
    func batchEqualsSingle(_ backend: MatrixBackend) async throws {
        let embedder = try SharedEmbedder.get(backend)
        let texts = Array(Fixtures.embeddingCases.map(\.text).prefix(24))
        let batched = try await embedder.embed(texts)
        for (text, vector) in zip(texts, batched) {
            let single = try await embedder.embed(text)
            #expect(maxAbsDifference(single, vector) < 1e-5, "\(text.prefix(40))")
        }
        // A different order and batch split gives the same vectors too.
        let reversed = try await embedder.embed(texts.reversed())
        for (vector, other) in zip(batched, reversed.reversed()) {
            #expect(maxAbsDifference(vector, other) < 1e-5)
        }
    }

    @Test("texts longer than 256 tokens are truncated like the reference")
    func truncation() async throws {
        let embedder = try SharedEmbedder.blas.get()
        #expect(embedder.manifest.maxSequenceLength == 256)
        let long = String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 60)
        let ids = embedder.tokenizer.encode(long)
        #expect(ids.count == 256)
        // Extra text past the cut changes nothing.
        let longer = long + String(repeating: "completely different words here ", count: 40)
        let vectors = try await embedder.embed([long, longer])
        #expect(maxAbsDifference(vectors[0], vectors[1]) == 0)
        // And the truncated fixture texts match the reference (they are in the golden set).
        let truncatedCases = Fixtures.embeddingCases.filter { $0.tokens == 256 }
        #expect(!truncatedCases.isEmpty)
        for testCase in truncatedCases {
            #expect(cosine(try await embedder.embed(testCase.text), testCase.embedding) >= 0.9999)
        }
    }

    @Test(
        "empty and whitespace-only texts embed as [CLS] [SEP]", arguments: ["", " ", "\n\t  \r\n"])
    func emptyText(_ text: String) async throws {
        let embedder = try SharedEmbedder.blas.get()
        let reference = try #require(Fixtures.embeddingCases.first { $0.text.isEmpty })
        let vector = try await embedder.embed(text)
        #expect(cosine(vector, reference.embedding) >= 0.9999)
    }

    @Test("pure-Swift fallback matches the BLAS backend")
    func fallbackMatchesBLAS() async throws {
        let swift = try SharedEmbedder.swift.get()
        let blas = try SharedEmbedder.blas.get()
        #expect(swift.encoder.backend == .swift)
        let cases = Array(Fixtures.embeddingCases.prefix(3))
        let a = try await swift.embed(cases.map(\.text))
        let b = try await blas.embed(cases.map(\.text))
        for i in cases.indices {
            #expect(maxAbsDifference(a[i], b[i]) < 1e-4)
            #expect(cosine(a[i], cases[i].embedding) >= 0.9999)
        }
    }

    @Test("native kernels match the BLAS backend")
    func nativeMatchesBLAS() async throws {
        let native = try SharedEmbedder.native.get()
        let blas = try SharedEmbedder.blas.get()
        #expect(native.encoder.backend == .native)
        // Short and long texts: one 6-row tile, edge tiles, and several row blocks per part.
        let texts = Array(Fixtures.embeddingCases.map(\.text).prefix(40))
        let a = try await native.embed(texts)
        let b = try await blas.embed(texts)
        for i in texts.indices { #expect(maxAbsDifference(a[i], b[i]) < 1e-4) }
    }

    @Test("TROVE_BLAS=none and TROVE_BLAS=blas are honoured by .preferred")
    func environmentOverride() {
        let value = ProcessInfo.processInfo.environment["TROVE_BLAS"]
        let expected: MatrixBackend =
            switch value {
            case "none": .swift
            case "blas": MatrixBackend.isBLASAvailable ? .blas : .swift
            default:
                MatrixBackend.isNativeAccelerated
                    ? .native : MatrixBackend.isBLASAvailable ? .blas : .swift
            }
        #expect(MatrixBackend.preferred == expected)
    }

    @Test("manifest describes the model, with the SHA-256 of the weights")
    func manifest() throws {
        let embedder = try SharedEmbedder.blas.get()
        let manifest = embedder.manifest
        #expect(manifest.dimension == 384)
        #expect(embedder.dimension == 384)
        #expect(manifest.pooling == "mean")
        #expect(manifest.normalized)
        #expect(manifest.maxSequenceLength == 256)
        #expect(manifest.modelID == "sentence-transformers/all-MiniLM-L6-v2")
        // `trove model install` verified the file against this pinned digest before writing the sidecar.
        #expect(manifest.checksum == BERTEmbedder.allMiniLML6v2Checksum)
    }

    @Test("checksum: sidecar when fresh, else the SHA-256 of the weights file")
    func checksumSidecar() throws {
        let dir = try TemporaryDirectory()
        let weights = dir.url.appendingPathComponent("model.safetensors")
        let sidecar = dir.url.appendingPathComponent("model.safetensors.sha256")
        var rng = SeededGenerator(seed: 9)
        let bytes = Data((0..<5000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        try bytes.write(to: weights)
        let computed = SHA256.hexDigest(bytes)
        // No sidecar: computed from the file.
        #expect(try BERTEmbedder.weightsChecksum(modelDirectory: dir.url) == computed)
        // A sidecar at least as new as the weights is trusted (that is what makes loading cheap).
        let recorded = String(repeating: "ab", count: 32)
        try "\(recorded)  model.safetensors\n".write(to: sidecar, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.modificationDate: Date()], ofItemAtPath: sidecar.path)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -60)], ofItemAtPath: weights.path)
        #expect(try BERTEmbedder.weightsChecksum(modelDirectory: dir.url) == recorded)
        // Weights replaced after the sidecar was written: the sidecar is ignored.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: weights.path)
        #expect(try BERTEmbedder.weightsChecksum(modelDirectory: dir.url) == computed)
        // A malformed sidecar is ignored.
        try "not a digest".write(to: sidecar, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 120)], ofItemAtPath: sidecar.path)
        #expect(try BERTEmbedder.weightsChecksum(modelDirectory: dir.url) == computed)
    }

    @Test("a missing model folder names the folder and the install script")
    func missingFolder() throws {
        let dir = try TemporaryDirectory()
        let missing = dir.url.appendingPathComponent("no-model")
        #expect(throws: EmbeddingError.missingModelFile(path: missing.path)) {
            _ = try BERTEmbedder(modelDirectory: missing)
        }
        #expect(
            EmbeddingError.missingModelFile(path: missing.path).description.contains(
                "trove model install all-MiniLM-L6-v2"))
    }

    @Test(
        "an incomplete model folder names the first missing file",
        arguments: BERTEmbedder.requiredFiles)
    func missingFile(_ absent: String) throws {
        let model = try Fixtures.requireModel()
        let dir = try TemporaryDirectory()
        for name in BERTEmbedder.requiredFiles where name != absent {
            let target = dir.url.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                at: target, withDestinationURL: model.appendingPathComponent(name))
        }
        let expected = dir.url.appendingPathComponent(absent).path
        #expect(throws: EmbeddingError.missingModelFile(path: expected)) {
            _ = try BERTEmbedder(modelDirectory: dir.url)
        }
    }

    @Test("batch splitting keeps order and balances tokens")
    func split() {
        var rng = SeededGenerator(seed: 3)
        for count in [1, 2, 3, 7, 32] {
            let sequences = (0..<count).map { _ in
                [Int32](repeating: 1, count: Int.random(in: 2...90, using: &rng))
            }
            for parts in 1...4 {
                let ranges = BERTEmbedder.split(sequences, into: parts)
                #expect(ranges.count == min(parts, count))
                #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == count)
                for (a, b) in zip(ranges, ranges.dropFirst()) {
                    #expect(a.upperBound == b.lowerBound && !a.isEmpty)
                }
            }
        }
    }

    @Test("cancellation stops between batches")
    func cancellation() async throws {
        let embedder = try BERTEmbedder(modelDirectory: try Fixtures.requireModel(), batchSize: 1)
        let task = Task {
            try await embedder.embed(Array(repeating: "some text to embed", count: 500))
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
    }
}

@Suite("MatrixMultiplier")
struct MatrixMultiplierTests {
    static func naive(
        m: Int, n: Int, k: Int, a: [Float], b: [Float], transposeB: Bool
    ) -> [Float] {
        var c = [Float](repeating: 0, count: m * n)
        for i in 0..<m {
            for j in 0..<n {
                var s: Double = 0
                for p in 0..<k {
                    s += Double(a[i * k + p]) * Double(transposeB ? b[j * k + p] : b[p * n + j])
                }
                c[i * n + j] = Float(s)
            }
        }
        return c
    }

    @Test("every backend agrees with a naive multiply", arguments: MatrixBackend.allCases)
    func againstNaive(_ backend: MatrixBackend) {
        var rng = SeededGenerator(seed: 11)
        let multiplier = MatrixMultiplier(backend: backend)
        for (m, n, k) in [
            (1, 1, 1), (3, 5, 7), (4, 8, 16), (13, 9, 33), (17, 64, 12), (5, 384, 70),
        ] {
            for transposeB in [false, true] {
                let a = rng.vector(dimension: m * k)
                let b = rng.vector(dimension: k * n)
                var c = [Float](repeating: .nan, count: m * n)
                a.withUnsafeBufferPointer { a in
                    b.withUnsafeBufferPointer { b in
                        c.withUnsafeMutableBufferPointer { c in
                            multiplier.multiply(
                                m: m, n: n, k: k, a: a.baseAddress!, lda: k, b: b.baseAddress!,
                                ldb: transposeB ? k : n, transposeB: transposeB, c: c.baseAddress!,
                                ldc: n)
                        }
                    }
                }
                let expected = Self.naive(m: m, n: n, k: k, a: a, b: b, transposeB: transposeB)
                #expect(
                    maxAbsDifference(c, expected) < 1e-4, "\(m)x\(n)x\(k) transposeB=\(transposeB)")
            }
        }
    }
}

@Suite("SHA256")
struct SHA256Tests {
    @Test("FIPS 180-4 test vectors")
    func vectors() {
        #expect(
            SHA256.hexDigest(Data())
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hexDigest(Data("abc".utf8))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hexDigest(Data("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        // Longer than one block, not a multiple of 64: exercises the buffered path.
        #expect(
            SHA256.hexDigest(Data(repeating: UInt8(ascii: "a"), count: 1000))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test("chunked updates equal one update")
    func chunked() {
        var rng = SeededGenerator(seed: 5)
        let bytes = Data((0..<1000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        var hasher = SHA256()
        for start in stride(from: 0, to: bytes.count, by: 37) {
            hasher.update(bytes[start..<min(start + 37, bytes.count)])
        }
        #expect(hasher.finalize() == SHA256.hexDigest(bytes))
    }

    @Test("the byte digest is the hex digest's bytes, from an array as from Data")
    func bytes() {
        let digest = SHA256.digest(Array("abc".utf8))
        #expect(digest.count == 32)
        #expect(
            digest.map { String(format: "%02x", $0) }.joined() == SHA256.hexDigest(Data("abc".utf8))
        )
        #expect(digest.prefix(4) == [0xba, 0x78, 0x16, 0xbf])
    }
}

@Suite("VectorMath")
struct VectorMathTests {
    @Test("exp matches libm within 1e-6 relative over the softmax range")
    func exp() {
        var x: Float = -87
        while x < 88 {
            let expected = Foundation.exp(Double(x))
            let got = Double(VectorMath.exp(x))
            #expect(abs(got - expected) <= 1e-6 * expected, "x = \(x)")
            x += 0.173
        }
        #expect(VectorMath.exp(-1000) < 1e-37)
        #expect(VectorMath.exp(0) == 1)
    }

    @Test("erf matches libm within 5e-7 absolute (A&S 7.1.26 plus Float rounding)")
    func erf() {
        var x: Float = -6
        while x < 6 {
            #expect(abs(Double(VectorMath.erf(x)) - Foundation.erf(Double(x))) <= 5e-7, "x = \(x)")
            x += 0.0137
        }
    }

    @Test("softmax rows sum to one and keep order")
    func softmax() {
        var rng = SeededGenerator(seed: 13)
        for width in [1, 5, 8, 13, 86] {
            var m = rng.vector(dimension: 3 * width).map { $0 * 20 }
            let original = m
            m.withUnsafeMutableBufferPointer {
                VectorMath.softmaxRows($0.baseAddress!, rows: 3, width: width, scale: 0.125)
            }
            for r in 0..<3 {
                let row = Array(m[(r * width)..<((r + 1) * width)])
                #expect(abs(row.reduce(0, +) - 1) < 1e-5)
                let maxIndex = original[(r * width)..<((r + 1) * width)].indices.max {
                    original[$0] < original[$1]
                }!
                #expect(row.indices.max { row[$0] < row[$1] }! == maxIndex - r * width)
            }
        }
    }
}
