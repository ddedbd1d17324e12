import Foundation

/// Everything that can go wrong while loading or running an embedding model.
///
/// Errors are values: match them by case, never by their description.
///
/// ```swift
/// do {
///     _ = try BERTEmbedder(modelDirectory: BERTEmbedder.defaultModelDirectory)
/// } catch EmbeddingError.missingModelFile(let path) {
///     print("model not installed, missing \(path)")
/// }
/// ```
public enum EmbeddingError: Error, Equatable, Sendable {
    /// A file the model needs is not there. The description says how to install the model.
    case missingModelFile(path: String)
    /// A model file exists but could not be read or parsed (JSON configuration, vocabulary).
    case invalidModelFile(path: String, reason: String)
    /// A safetensors file is malformed or truncated.
    case invalidSafeTensors(path: String, reason: String)
    /// The weights lack a tensor the encoder needs.
    case missingTensor(name: String)
    /// A tensor has an unexpected element type or shape.
    case tensorMismatch(name: String, reason: String)
    /// The model configuration asks for something this encoder does not implement.
    case unsupportedModel(reason: String)
    /// The embedder produced no vector for this text (the system `NLEmbedding` can refuse some).
    case textNotEmbeddable(String)
}

extension EmbeddingError: CustomStringConvertible, LocalizedError {
    public var description: String {
        switch self {
        case .missingModelFile(let path):
            // The model is told apart by its weights file; a BERT folder is all-MiniLM-L6-v2's.
            let model: BuiltInModel =
                path.hasSuffix(E5Embedder.weightsFileName) ? .multilingualE5Small : .allMiniLML6v2
            return
                "missing model file \(path); install \(model.rawValue) with `\(model.installCommand)` "
                + "(it downloads into the model cache, ~/.cache/trove/models/\(model.rawValue) by default)"
        case .invalidModelFile(let path, let reason):
            return "invalid model file \(path): \(reason)"
        case .invalidSafeTensors(let path, let reason):
            return "invalid safetensors file \(path): \(reason)"
        case .missingTensor(let name):
            return "the weights have no tensor named \(name)"
        case .tensorMismatch(let name, let reason):
            return "tensor \(name): \(reason)"
        case .unsupportedModel(let reason):
            return "unsupported model: \(reason)"
        case .textNotEmbeddable(let text):
            return "the embedder returned no vector for \(text.debugDescription)"
        }
    }

    public var errorDescription: String? { description }
}
