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
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent(E5Embedder.weightsFileName).path) else {
            throw ModelMissing()
        }
        return try E5Embedder(modelDirectory: dir)
    }

    struct ModelMissing: Error, CustomStringConvertible {
        var description: String { "multilingual-e5-small is not installed: run `trove model install multilingual-e5-small`" }
    }

    @Test("a passage collection refuses the query embedder, and the reverse; the same prefix opens")
    func prefixes() async throws {
        let passages = try Self.e5()
        let queries = passages.with(prefix: .query)
        let database = try Database()
        _ = try await database.collection("notes", embedder: passages)
        await #expect(throws: TroveError.self) { _ = try await database.collection(named: "notes", embedder: queries) }
        do {
            _ = try await database.collection(named: "notes", embedder: queries)
        } catch TroveError.embeddingMismatch(_, let stored, let requested) {
            #expect(stored.inputPrefix == "passage: " && requested.inputPrefix == "query: ")
        }
        await #expect(throws: TroveError.self) { _ = try await database.collection("notes", embedder: queries) }
        _ = try await database.collection(named: "notes", embedder: passages)

        _ = try await database.collection("questions", embedder: queries)
        await #expect(throws: TroveError.self) { _ = try await database.collection(named: "questions", embedder: passages) }
    }

    @Test("a collection of another model's vectors refuses e5, and e5's refuses it")
    func models() async throws {
        let e5 = try Self.e5()
        let other = HashingEmbedder(dimension: 384, modelID: "sentence-transformers/all-MiniLM-L6-v2")
        let database = try Database()
        _ = try await database.collection("minilm", embedder: other)
        await #expect(throws: TroveError.self) { _ = try await database.collection(named: "minilm", embedder: e5) }
        _ = try await database.collection("e5", embedder: e5)
        await #expect(throws: TroveError.self) { _ = try await database.collection(named: "e5", embedder: other) }
    }

    @Test("a manifest stored before prefixes existed still opens with the same model")
    func oldManifestsDecode() throws {
        let old = #"{"modelID":"m","checksum":"c","dimension":3,"pooling":"mean","normalized":true,"maxSequenceLength":8}"#
        let manifest = try JSONDecoder().decode(EmbeddingManifest.self, from: Data(old.utf8))
        #expect(manifest.inputPrefix == nil)
        #expect(manifest == EmbeddingManifest(
            modelID: "m", checksum: "c", dimension: 3, pooling: "mean", normalized: true, maxSequenceLength: 8))
        let encoded = String(decoding: try JSONEncoder().encode(manifest), as: UTF8.self)
        #expect(!encoded.contains("inputPrefix"))
    }
}
