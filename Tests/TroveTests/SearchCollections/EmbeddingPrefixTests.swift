import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

/// Vectors of two prefixes of one model, or of two models, never share a collection (issue 15).
/// Uses multilingual-e5-small as installed by `trove model install multilingual-e5-small`.
@Suite("Embedding manifests refuse mixed prefixes and models")
struct EmbeddingPrefixTests {
    static func e5() throws -> E5Embedder {
        let dir = E5Embedder.defaultModelDirectory
        guard
            FileManager.default.fileExists(
                atPath: dir.appendingPathComponent(E5Embedder.weightsFileName).path)
        else {
            throw ModelMissing()
        }
        return try E5Embedder(modelDirectory: dir)
    }

    struct ModelMissing: Error, CustomStringConvertible {
        var description: String {
            "multilingual-e5-small is not installed: run `trove model install multilingual-e5-small`"
        }
    }

    @Test("a passage collection refuses the query embedder, and the reverse; the same prefix opens")
    func prefixes() async throws {
        let passages = try Self.e5()
        let queries = passages.with(prefix: .query)
        let database = try Database()
        _ = try await SearchCollection("notes", in: database, embedder: passages)
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(named: "notes", in: database, embedder: queries)
        }
        do {
            _ = try await SearchCollection(named: "notes", in: database, embedder: queries)
        } catch TroveError.embeddingMismatch(_, let stored, let requested) {
            #expect(stored.inputPrefix == "passage: " && requested.inputPrefix == "query: ")
        }
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection("notes", in: database, embedder: queries)
        }
        _ = try await SearchCollection(named: "notes", in: database, embedder: passages)

        _ = try await SearchCollection("questions", in: database, embedder: queries)
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(named: "questions", in: database, embedder: passages)
        }
    }

    @Test("a collection of another model's vectors refuses e5, and e5's refuses it")
    func models() async throws {
        let e5 = try Self.e5()
        let other = HashingEmbedder(
            dimension: 384, modelID: "sentence-transformers/all-MiniLM-L6-v2")
        let database = try Database()
        _ = try await SearchCollection("minilm", in: database, embedder: other)
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(named: "minilm", in: database, embedder: e5)
        }
        _ = try await SearchCollection("e5", in: database, embedder: e5)
        await #expect(throws: TroveError.self) {
            _ = try await SearchCollection(named: "e5", in: database, embedder: other)
        }
    }

    @Test("a manifest stored before prefixes existed still opens with the same model")
    func oldManifestsDecode() throws {
        let old =
            #"{"modelID":"m","checksum":"c","dimension":3,"pooling":"mean","normalized":true,"maxSequenceLength":8}"#
        let manifest = try JSONDecoder().decode(EmbeddingManifest.self, from: Data(old.utf8))
        #expect(manifest.inputPrefix == nil)
        #expect(
            manifest
                == EmbeddingManifest(
                    modelID: "m", checksum: "c", dimension: 3, pooling: "mean", normalized: true,
                    maxSequenceLength: 8))
        let encoded = String(decoding: try JSONEncoder().encode(manifest), as: UTF8.self)
        #expect(!encoded.contains("inputPrefix"))
    }
}

/// `SearchCollection.search(_:)` embeds the question as a query, as `trove search` does (issue 42):
/// with e5 a question embedded as a passage ranks worse.
@Suite("Text search embeds the question as a query")
struct QueryEmbeddingTests {
    static func cosineDistance(_ a: [Float], _ b: [Float]) -> Double {
        1 - Double(zip(a, b).reduce(0) { $0 + $1.0 * $1.1 })
    }

    /// Embeds queries unlike passages, as a model trained with instructions does: a query's
    /// vector is its passage vector plus the same vector shifted by one component, normalised.
    struct TwoSidedEmbedder: Embedder {
        let base = HashingEmbedder(dimension: 64, modelID: "test/two-sided")
        var manifest: EmbeddingManifest { base.manifest }
        func embed(_ texts: [String]) async throws -> [[Float]] { texts.map(base.vector) }
        func embedQueries(_ texts: [String]) async throws -> [[Float]] {
            texts.map { text in
                let v = base.vector(text)
                let mixed = v.indices.map { v[$0] + v[($0 + 1) % v.count] }
                let norm = mixed.reduce(0) { $0 + $1 * $1 }.squareRoot()
                return mixed.map { $0 / norm }
            }
        }
    }

    func check(_ embedder: some Embedder, passage: String, question: String) async throws {
        let notes = try await SearchCollection("notes", in: Database(), embedder: embedder)
        try await notes.insert(VectorEntry(content: passage))
        let stored = try await embedder.embed(passage)
        let asQuery = Self.cosineDistance(try await embedder.embedQuery(question), stored)
        let asPassage = Self.cosineDistance(try await embedder.embed(question), stored)
        // The two embeddings of the question are far enough apart for the check to tell them apart.
        #expect(abs(asQuery - asPassage) > 1e-3)
        for mode in [SearchMode.vector, .hybrid] {
            let hit = try #require(try await notes.search(question, mode: mode).first)
            let distance = try #require(hit.distance)
            #expect(
                abs(distance - asQuery) < 1e-4,
                "\(mode): distance \(distance); as a query \(asQuery), as a passage \(asPassage)")
        }
    }

    @Test("the query vector is embedQuery's, not embed's (an embedder whose queries differ)")
    func prefixingEmbedder() async throws {
        try await check(
            TwoSidedEmbedder(), passage: "dentist appointment on Tuesday at ten",
            question: "when is the dentist")
    }

    @Test("the query vector is multilingual-e5's `query: ` embedding")
    func multilingualE5() async throws {
        try await check(
            try EmbeddingPrefixTests.e5(), passage: "The dentist appointment is on Tuesday at ten.",
            question: "when do I see the dentist?")
    }
}
