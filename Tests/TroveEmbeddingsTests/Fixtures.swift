import Foundation
import TroveEmbeddings

/// The reference fixtures copied from sentence-transformers (see Fixtures/README.md).
enum Fixtures {
    struct TokenizerCase: Decodable, Sendable, CustomTestStringConvertibleCase {
        let text: String
        let ids: [Int32]
    }

    struct EmbeddingCase: Decodable, Sendable {
        let text: String
        let tokens: Int
        let embedding: [Float]
    }

    static func url(_ name: String) -> URL {
        Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: nil)
            ?? Bundle.module.bundleURL.appendingPathComponent("Fixtures/\(name)")
    }

    static func jsonLines<T: Decodable>(_ name: String, as type: T.Type) throws -> [T] {
        let data = try Data(contentsOf: url(name))
        let decoder = JSONDecoder()
        return try data.split(separator: UInt8(ascii: "\n")).map {
            try decoder.decode(T.self, from: Data($0))
        }
    }

    static let tokenizerCases: [TokenizerCase] =
        (try? jsonLines("tokenizer_cases.jsonl", as: TokenizerCase.self)) ?? []
    static let embeddingCases: [EmbeddingCase] =
        (try? jsonLines("embeddings.jsonl", as: EmbeddingCase.self)) ?? []

    /// The model folder the golden tests use: `TROVE_MODEL_DIR` or the default cache folder.
    static var modelDirectory: URL { BERTEmbedder.defaultModelDirectory }

    /// Fails (never skips) when the model is not installed, naming the script that installs it.
    static func requireModel() throws -> URL {
        let dir = modelDirectory
        let weights = dir.appendingPathComponent("model.safetensors").path
        guard FileManager.default.fileExists(atPath: weights) else {
            throw ModelNotInstalled(directory: dir.path)
        }
        return dir
    }

    struct ModelNotInstalled: Error, CustomStringConvertible {
        let directory: String
        var description: String {
            "all-MiniLM-L6-v2 is not installed at \(directory): run `trove model install all-MiniLM-L6-v2` (or `bash scripts/setup.sh`) "
                + "(or set TROVE_MODEL_DIR to a folder holding it)"
        }
    }
}

/// Shows the text (shortened) instead of the whole struct in test reports.
protocol CustomTestStringConvertibleCase: CustomStringConvertible { var text: String { get } }
extension CustomTestStringConvertibleCase {
    var description: String { String(text.prefix(40)).debugDescription }
}
