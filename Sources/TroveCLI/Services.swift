import Foundation
import TroveEmbeddings

/// What the commands get from outside: the embedding model. Tests swap in a small
/// deterministic embedder where the model itself is not what is being tested.
///
/// ```swift
/// let services = Services(loadEmbedder: { folder in try BERTEmbedder(modelDirectory: folder) })
/// let status = await TroveCommandLine.run(["search", "tea"], console: .process, services: services)
/// ```
public struct Services: Sendable {
    /// Loads the embedder from a model folder.
    public var loadEmbedder: @Sendable (URL) throws -> any Embedder

    public init(loadEmbedder: @escaping @Sendable (URL) throws -> any Embedder) {
        self.loadEmbedder = loadEmbedder
    }

    /// The built-in all-MiniLM-L6-v2 model run by ``BERTEmbedder``.
    public static let standard = Services(loadEmbedder: { try BERTEmbedder(modelDirectory: $0) })
}

extension Locations {
    /// The model folder: `--model DIR`, else `$TROVE_MODEL_DIR`, else
    /// `${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/all-MiniLM-L6-v2` — the folder
    /// `scripts/fetch-model.sh` installs into.
    public static func modelDirectory(
        flag: String?, environment: [String: String], currentDirectory: String
    ) -> URL {
        if let flag, !flag.isEmpty {
            return URL(
                fileURLWithPath: absolute(
                    flag, environment: environment, currentDirectory: currentDirectory),
                isDirectory: true)
        }
        if let dir = environment["TROVE_MODEL_DIR"], !dir.isEmpty {
            return URL(
                fileURLWithPath: absolute(
                    dir, environment: environment, currentDirectory: currentDirectory),
                isDirectory: true)
        }
        let cache: String
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            cache = xdg
        } else {
            cache = ((environment["HOME"] ?? NSHomeDirectory()) as NSString)
                .appendingPathComponent(".cache")
        }
        return URL(
            fileURLWithPath: (cache as NSString).appendingPathComponent(
                "trove/models/all-MiniLM-L6-v2"), isDirectory: true)
    }
}

extension CommandContext {
    /// The model folder for this command.
    var modelDirectory: URL {
        Locations.modelDirectory(
            flag: arguments.value("model"), environment: console.environment,
            currentDirectory: console.currentDirectory)
    }

    /// Loads the embedding model, turning a missing model into the command that installs it.
    func loadEmbedder() throws -> any Embedder {
        let directory = modelDirectory
        do {
            return try services.loadEmbedder(directory)
        } catch EmbeddingError.missingModelFile(let path) {
            throw CLIError.modelMissing(
                """
                the embedding model is not installed (missing \(path)).
                Install it with:  bash scripts/fetch-model.sh
                (from the Trove source folder; it installs all-MiniLM-L6-v2 into \(directory.path), \
                or into $TROVE_MODEL_DIR when set)
                """)
        } catch let error as EmbeddingError {
            throw CLIError.failure(
                "cannot load the embedding model from \(directory.path): \(error.description)\n"
                    + "Reinstall it with:  bash scripts/fetch-model.sh")
        }
    }

    /// A chunker counting real model tokens when the embedder has a tokenizer.
    func chunker(for embedder: any Embedder) throws -> Chunker {
        let limit = try arguments.integer(
            "chunk-tokens", default: Chunker.defaultMaxTokens, in: 16...250, command: spec.name)
        if let bert = embedder as? BERTEmbedder {
            let tokenizer = bert.tokenizer
            return Chunker(maxTokens: limit) { tokenizer.wordPieceIDs(String($0)).count }
        }
        return Chunker(maxTokens: limit)
    }
}
