import Foundation
import Trove
import TroveEmbeddings

/// What the commands get from outside: the embedding model. Tests swap in a small
/// deterministic embedder where the model itself is not what is being tested.
///
/// ```swift
/// let services = Services(loadEmbedder: { folder in try BERTEmbedder(modelDirectory: folder) })
/// let status = await TroveCommandLine.run(["search", "tea"], console: .process, services: services)
/// ```
struct Services: Sendable {
    /// Loads the embedder from a model folder.
    var loadEmbedder: @Sendable (URL) throws -> any Embedder
    /// The models `trove model` knows (tests add a small one with a known checksum).
    var modelCatalog: [ModelPackage]

    init(
        loadEmbedder: @escaping @Sendable (URL) throws -> any Embedder,
        modelCatalog: [ModelPackage] = ModelPackage.builtIn
    ) {
        self.loadEmbedder = loadEmbedder
        self.modelCatalog = modelCatalog
    }

    /// The built-in models: a folder with `e5-small-q4.bin` runs multilingual-e5-small
    /// (``E5Embedder``), any other a sentence-transformers BERT such as all-MiniLM-L6-v2
    /// (``BERTEmbedder``).
    static let standard = Services(loadEmbedder: { try BuiltInModel.load(directory: $0) })
}

extension Locations {
    /// The model folder: `--model DIR`, else `$TROVE_MODEL_DIR`, else
    /// `${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/all-MiniLM-L6-v2` — the folder
    /// `trove model install all-MiniLM-L6-v2` installs into.
    static func modelDirectory(
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

extension Locations {
    /// The folder of one `--model` value: a path (it contains `/` or starts with `.` or `~`),
    /// else a name in the model cache, `${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/NAME`;
    /// `all-MiniLM-L6-v2` honours `$TROVE_MODEL_DIR` and `multilingual-e5-small`
    /// `$TROVE_E5_MODEL_DIR`, as `trove model install` does.
    ///
    /// ```swift
    /// Locations.modelDirectory(value: "multilingual-e5-small", environment: ["HOME": "/home/ana"],
    ///                          currentDirectory: "/")  // /home/ana/.cache/trove/models/multilingual-e5-small
    /// ```
    static func modelDirectory(
        value: String, environment: [String: String], currentDirectory: String
    ) -> URL {
        if value.contains("/") || value.hasPrefix(".") || value.hasPrefix("~") {
            return URL(
                fileURLWithPath: absolute(
                    value, environment: environment, currentDirectory: currentDirectory),
                isDirectory: true)
        }
        let model = BuiltInModel(name: value)
        let override = model.flatMap {
            environment[$0 == .allMiniLML6v2 ? "TROVE_MODEL_DIR" : "TROVE_E5_MODEL_DIR"]
        }
        if let override, !override.isEmpty {
            return URL(
                fileURLWithPath: absolute(
                    override, environment: environment, currentDirectory: currentDirectory),
                isDirectory: true)
        }
        let cache: String
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            cache = xdg
        } else {
            cache = ((environment["HOME"] ?? NSHomeDirectory()) as NSString).appendingPathComponent(
                ".cache")
        }
        return URL(
            fileURLWithPath: (cache as NSString).appendingPathComponent(
                "trove/models/\(model?.rawValue ?? value)"),
            isDirectory: true)
    }
}

extension CommandContext {
    /// The model folders named by `--model` (in order), else the default: all-MiniLM-L6-v2,
    /// joined by multilingual-e5-small when that is installed (`scripts/setup.sh` installs
    /// both). Together they find more than either alone on notes-dev (hybrid hit@1 76 against
    /// 71 and 66, multilingual 5 of 9 against 2) for about four times the indexing time
    /// (BENCHMARKS.md, "Retrieval quality"; the DocC article Embeddings).
    var modelDirectories: [URL] {
        let values = options.models
        guard !values.isEmpty else {
            let e5 = Locations.modelDirectory(
                value: BuiltInModel.multilingualE5Small.rawValue, environment: console.environment,
                currentDirectory: console.currentDirectory)
            let installed = FileManager.default.fileExists(
                atPath: e5.appendingPathComponent(E5Embedder.weightsFileName).path)
            return installed ? [modelDirectory, e5] : [modelDirectory]
        }
        return values.map {
            Locations.modelDirectory(
                value: $0, environment: console.environment,
                currentDirectory: console.currentDirectory)
        }
    }

    /// Loads every model of ``modelDirectories`` (twice the same model is a usage error).
    func loadEmbedders() throws -> [any Embedder] {
        let embedders = try modelDirectories.map(loadEmbedder(from:))
        let manifests = embedders.map(\.manifest)
        guard Set(manifests).count == manifests.count else {
            throw CLIError.usage("the same model was given twice with --model", command: spec.name)
        }
        return embedders
    }

    /// The models for writing to the database at `path`: `--model` when given, else those it
    /// was indexed with, else the default.
    func loadEmbedders(forDatabaseAt path: String) async throws -> [any Embedder] {
        if options.models.isEmpty, FileManager.default.fileExists(atPath: path) {
            let manifests = try await Notebook.manifests(
                of: try EncryptionPassphrase.openDatabase(path: path, context: self))
            if !manifests.isEmpty { return try loadEmbedders(matching: manifests) }
        }
        return try loadEmbedders()
    }

    /// Loads the models a database was indexed with: the `--model` values when given, else
    /// each built-in model by its recorded id, and the default folder for any other.
    func loadEmbedders(matching manifests: [EmbeddingManifest]) throws -> [any Embedder] {
        if !options.models.isEmpty { return try loadEmbedders() }
        return try manifests.map { manifest in
            switch BuiltInModel(manifest: manifest) {
            case .multilingualE5Small?:
                return try loadEmbedder(
                    from: Locations.modelDirectory(
                        value: BuiltInModel.multilingualE5Small.rawValue,
                        environment: console.environment,
                        currentDirectory: console.currentDirectory))
            default:
                // all-MiniLM-L6-v2, or a model indexed from a folder: the default folder.
                return try loadEmbedder(from: modelDirectory)
            }
        }
    }

    /// The default model folder: `$TROVE_MODEL_DIR`, else the cache's all-MiniLM-L6-v2.
    var modelDirectory: URL {
        Locations.modelDirectory(
            flag: nil, environment: console.environment, currentDirectory: console.currentDirectory)
    }

    /// Loads the first model of ``modelDirectories`` (commands that use one model).
    func loadEmbedder() throws -> any Embedder { try loadEmbedder(from: modelDirectories[0]) }

    /// Loads the embedding model in `directory`, turning a missing model into the command that
    /// installs it.
    func loadEmbedder(from directory: URL) throws -> any Embedder {
        // A folder of the cache named for a built-in model is that model; any other folder is
        // taken for all-MiniLM-L6-v2, the default.
        let install = (BuiltInModel(name: directory.lastPathComponent) ?? .allMiniLML6v2)
            .installCommand
        do {
            return try services.loadEmbedder(directory)
        } catch EmbeddingError.missingModelFile(let path) {
            throw CLIError.modelMissing(
                """
                the embedding model is not installed (missing \(path)).
                Install it with:  \(install)
                (it installs into \(directory.path))
                """)
        } catch let error as EmbeddingError {
            throw CLIError.failure(
                "cannot load the embedding model from \(directory.path): \(error.description)\n"
                    + "Reinstall it with:  \(install)")
        }
    }

    /// A chunker of chunks of at most `limit` tokens, counting real model tokens when the
    /// embedder has a tokenizer.
    func chunker(for embedder: any Embedder, maxTokens limit: Int) throws -> Chunker {
        if let bert = embedder as? BERTEmbedder {
            let tokenizer = bert.tokenizer
            return Chunker(maxTokens: limit) { tokenizer.wordPieceIDs(String($0)).count }
        }
        if let e5 = embedder as? E5Embedder {
            return Chunker(maxTokens: limit) { e5.pieceIDs(String($0)).count }
        }
        return Chunker(maxTokens: limit)
    }
}
