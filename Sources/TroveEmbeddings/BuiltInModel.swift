import Foundation

/// The models Trove can run itself, by the name `trove model install` gives their folder in the
/// model cache (`${XDG_CACHE_HOME:-~/.cache}/trove/models/NAME`).
///
/// | name | languages | dimension | weights | install |
/// |---|---|---|---|---|
/// | `all-MiniLM-L6-v2` | English | 384 | 90 MB float32 | `trove model install all-MiniLM-L6-v2` |
/// | `multilingual-e5-small` | about 100 | 384 | 72 MB 4-bit | `trove model install multilingual-e5-small` |
///
/// ```swift
/// let embedder = try BuiltInModel.load(directory: BuiltInModel.multilingualE5Small.defaultDirectory)
/// BuiltInModel(name: "multilingual-e5-small")  // .multilingualE5Small
/// ```
public enum BuiltInModel: String, Sendable, CaseIterable {
    case allMiniLML6v2 = "all-MiniLM-L6-v2"
    case multilingualE5Small = "multilingual-e5-small"

    /// The model for a cache folder name (case-insensitive), if it is one of the built-in ones.
    public init?(name: String) {
        guard
            let model = Self.allCases.first(where: { $0.rawValue.lowercased() == name.lowercased() }
            )
        else {
            return nil
        }
        self = model
    }

    /// The model whose vectors carry this manifest's model id, if built in.
    public init?(manifest: EmbeddingManifest) {
        switch manifest.modelID {
        case "sentence-transformers/all-MiniLM-L6-v2": self = .allMiniLML6v2
        case E5Embedder.modelID: self = .multilingualE5Small
        default: return nil
        }
    }

    /// Where `trove model install` puts it (honouring `TROVE_MODEL_DIR` and `TROVE_E5_MODEL_DIR`).
    public var defaultDirectory: URL {
        switch self {
        case .allMiniLML6v2: BERTEmbedder.defaultModelDirectory
        case .multilingualE5Small: E5Embedder.defaultModelDirectory
        }
    }

    /// The command that installs it: `trove model install NAME`.
    public var installCommand: String { "trove model install \(rawValue)" }

    /// Loads the model in a folder, telling the kinds apart by their files: `e5-small-q4.bin`
    /// is multilingual-e5 (``E5Embedder``), anything else a sentence-transformers BERT folder
    /// (``BERTEmbedder``).
    ///
    /// - Throws: the embedder's ``EmbeddingError`` (``EmbeddingError/missingModelFile(path:)``
    ///   when the folder holds neither model).
    public static func load(directory: URL) throws -> any Embedder {
        let e5 = directory.appendingPathComponent(E5Embedder.weightsFileName)
        if FileManager.default.fileExists(atPath: e5.path) {
            return try E5Embedder(modelDirectory: directory)
        }
        return try BERTEmbedder(modelDirectory: directory)
    }
}
