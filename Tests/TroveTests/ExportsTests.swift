// This file imports Trove alone (and Testing): every type below must be visible through Trove's
// re-exports (Sources/Trove/Exports.swift), or this file does not compile.
import Foundation
import Testing
import Trove

@Suite("import Trove alone")
struct ExportsTests {
    @Test(
        "what the API throws is catchable by type: SQLiteError (with its ResultCode), EncryptionError"
    )
    func errors() async throws {
        let database = try Database()
        do {
            _ = try await database.query("SELECT * FROM no_such_table", bindings: [])
            Issue.record("expected an error")
        } catch let error as SQLiteError {
            let code: ResultCode = error.code
            #expect(code == .error)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "exports-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("secret.trove").path
        let encryption: Encryption = .passphrase("correct horse")
        let info: EncryptionInfo? = try Database(path: path, encryption: encryption).encryption
        #expect(info != nil)
        do {
            _ = try Database(path: path, encryption: .passphrase("wrong"))
            Issue.record("expected wrongKey")
        } catch EncryptionError.wrongKey {
        }
        let file: EncryptedFile = .database
        #expect(file.rawValue == "database")
    }

    @Test(
        "what the API takes and returns: rows, values, metrics, HNSW parameters, tokenizers, embedders"
    )
    func signatures() async throws {
        let database = try Database()
        let rows: [Row] = try await database.query("SELECT ?", bindings: [SQLValue.text("x")])
        #expect(rows.count == 1)
        let metric: DistanceMetric = .cosine
        let quantization: HNSWQuantization = .binary
        let configuration: HNSWConfiguration? = IndexKind.hnsw(quantization: quantization)
            .hnswConfiguration
        #expect(configuration?.quantization == .binary && metric == .cosine)
        let tokenizer: TokenizerConfiguration = .multilingual
        #expect(
            FullTextDefinition(fields: ["body"], tokenizer: tokenizer.fts5TokenizeArgument)
                .tokenizer.hasPrefix("trove")
        )
        func embedderTypes(_ embedder: any Embedder) -> EmbeddingManifest { embedder.manifest }
        _ = embedderTypes
        let errors: [any Error] = [
            VectorIndexError.notASnapshot, EmbeddingError.missingTensor(name: "w"),
        ]
        #expect(errors.count == 2)
    }
}
