// swift-tools-version: 6.0
// Trove: an embedded, on-device store with first-class search. See Documentation/ARCHITECTURE.md.
import CompilerPluginSupport
import PackageDescription

/// The runnable examples: (executable target, folder under Examples/).
let examples: [(target: String, folder: String)] = [
    ("example-quickstart", "Quickstart"),
    ("example-documents", "DocumentsAndAggregates"),
    ("example-transaction", "Transaction"),
    ("example-hybrid", "HybridSearch"),
    ("example-search-collection", "SearchCollection"),
    ("example-relationships", "Relationships"),
    ("example-expiry", "Expiry"),
    ("example-admin", "Administration"),
    ("example-links", "Links"),
    ("example-places", "Places"),
    ("example-models", "Models"),
    ("example-live-queries", "LiveQueries"),
    ("example-migrations", "Migrations"),
    ("example-vector-index", "VectorIndex"),
    ("example-text-search", "TextSearch"),
    ("example-key-storage", "KeyStorage"),
    ("example-sync", "Sync"),
    ("example-model-context", "ModelContext"),
]

/// Products some examples use besides Trove and TroveEmbeddings.
let exampleExtras: [String: [Target.Dependency]] = [
    "example-key-storage": [.target(name: "TroveSecretService", condition: .when(platforms: [.linux]))],
    // Only the sync example links TroveSync (and with it libpq).
    "example-sync": ["TroveSync"],
]

let package = Package(
    name: "Trove",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .library(name: "Trove", targets: ["Trove"]),
        .library(name: "TroveEmbeddings", targets: ["TroveEmbeddings"]),
        .library(name: "TroveVecKit", targets: ["TroveVecKit"]),
        .library(name: "TroveSync", targets: ["TroveSync"]),
        .library(name: "TroveSecretService", targets: ["TroveSecretService"]),
        .executable(name: "trove", targets: ["trove"]),
    ],
    dependencies: [
        // The model macros' compiler plug-in; swift-syntax takes a major version per Swift release.
        .package(url: "https://github.com/swiftlang/swift-syntax.git", "602.0.0"..<"700.0.0")
    ],
    targets: [
        // The system SQLite (Debian: libsqlite3-dev; Apple: the SDK's sqlite3).
        // Only TroveSQLite imports it.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "TroveSQLite", dependencies: ["CSQLite", "CTroveCipher"]),
        // OpenSSL's libcrypto (Debian: libssl-dev) for AES-256-GCM and PBKDF2 on Linux; Apple
        // platforms use CryptoKit. Only CTroveCipher uses it.
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The encrypting VFS (encryption at rest); see its header and ARCHITECTURE.md.
        .target(
            name: "CTroveCipher",
            dependencies: [.target(name: "CCrypto", condition: .when(platforms: [.linux]))]),
        // Pure Swift, no I/O: kernels, matrices, exact and approximate indexes.
        .target(name: "TroveVectors", dependencies: ["CTroveKernels"]),
        // AVX2/FMA distance kernels chosen at run time (x86-64), portable C elsewhere; see its header.
        .target(name: "CTroveKernels"),
        // Pure Swift, no SQLite: tokenizer, safetensors, BERT encoder. BLAS is found at run time.
        .target(name: "TroveEmbeddings", dependencies: ["CTroveEncoderKernels"]),
        // AVX2/FMA and AVX-512 (VNNI) encoder kernels (packed-weight matmul, Q4 x Q8, attention, LayerNorm) chosen at run time; see its header.
        .target(name: "CTroveEncoderKernels"),
        // Pure Swift, no SQLite: text tokenization (shared with FTS5), BM25 inverted index, typed queries.
        .target(name: "TroveText"),
        // The model macros (@Model, @Attribute, @Relationship, #Index, ...): a compiler plug-in, run
        // at build time only; nothing of swift-syntax is linked into apps.
        .macro(
            name: "TroveMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]),
        // The store.
        .target(
            name: "Trove",
            dependencies: ["TroveSQLite", "TroveVectors", "TroveEmbeddings", "TroveText", "CTroveKernels", "TroveMacros"]),
        // SQLiteVecKit's VectorStore API over the document engine (a drop-in import).
        .target(name: "TroveVecKit", dependencies: ["Trove", "TroveSQLite"]),
        // PostgreSQL's client library (Debian: libpq-dev) for sync; only TroveSync imports it.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // Sync between devices through PostgreSQL (or an app's own SyncTransport); see Documentation/SYNC.md.
        .target(
            name: "TroveSync", dependencies: ["Trove", "TroveSQLite", "CLibPQ"],
            // The server SQL, one file read at run time (Bundle.module) and by psql alike.
            resources: [.copy("Postgres/trove-sync.sql")]),
        // The freedesktop Secret Service client (Debian: libsecret-1-dev); only TroveSecretService imports it.
        .systemLibrary(
            name: "CLibSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        // Database keys kept in the Linux keyring (SecretServiceKeyStore), a product of its own.
        .target(name: "TroveSecretService", dependencies: ["TroveSQLite", "CLibSecret"]),
        // The command-line tool: logic in a library so it can be tested, `main` kept thin.
        .target(name: "TroveCLI", dependencies: ["Trove", "TroveText", "TroveSync", "TroveChildProcess"]),
        // Child processes started with posix_spawn, in Process's shape (Foundation's Process.run
        // can crash on Linux): `trove model install` and the tests use it; not a product.
        .target(name: "TroveChildProcess", dependencies: ["CChildProcess"]),
        .target(name: "CChildProcess"),
        .executableTarget(name: "trove", dependencies: ["TroveCLI"]),
        // Reliability: the child process the crash and multi-process tests start and kill (no product).
        .executableTarget(name: "TroveCrashChild", dependencies: ["Trove"]),
        // The child process the HNSW crash test (TroveTests) starts and kills; not a product.
        .executableTarget(name: "TroveANNCrashChild", dependencies: ["Trove"]),
        // The child process the sync crash tests (TroveSyncTests) start and kill; not a product.
        .executableTarget(name: "TroveSyncCrashChild", dependencies: ["TroveSync", "Trove"]),

        // Examples/: small programs a user can run (`swift run example-quickstart`); ExamplesTests runs
        // each and compares its output with the expected-output.txt beside it.
    ] + examples.map { example -> Target in
        .executableTarget(name: example.target, dependencies: ["Trove", "TroveEmbeddings"] + exampleExtras[example.target, default: []],
                          path: "Examples/\(example.folder)",
                          exclude: ["expected-output.txt"])
    } + [
        // Shared test helpers: temporary directories, seeded RNG, exact-scan oracle, child processes.
        .target(
            name: "TroveTestSupport", dependencies: ["TroveVectors", "TroveEmbeddings", "TroveChildProcess"],
            path: "Tests/TroveTestSupport"),
        .testTarget(name: "TroveSQLiteTests", dependencies: ["TroveSQLite", "TroveTestSupport"]),
        .testTarget(name: "TroveVectorsTests", dependencies: ["TroveVectors", "TroveTestSupport"]),
        .testTarget(
            name: "TroveEmbeddingsTests", dependencies: ["TroveEmbeddings", "TroveTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(name: "TroveTextTests", dependencies: ["TroveText", "TroveTestSupport"]),
        .testTarget(name: "TroveTests", dependencies: ["Trove", "TroveTestSupport", "TroveChildProcess"], exclude: ["Fixtures"]),
        .testTarget(
            name: "TroveMacrosTests",
            dependencies: [
                "TroveMacros",
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]),
        .testTarget(name: "TroveVecKitTests", dependencies: ["TroveVecKit", "Trove", "TroveTestSupport"]),
        // Fixes the keyring tests' session-bus address before main (setenv during the run races).
        .target(name: "CTestSessionBus", path: "Tests/CTestSessionBus"),
        .testTarget(
            name: "TroveSecretServiceTests",
            dependencies: ["TroveSecretService", "Trove", "TroveTestSupport", "CTestSessionBus"]),
        .testTarget(name: "TroveSyncTests", dependencies: ["TroveSync", "Trove", "TroveTestSupport", "TroveChildProcess", "TroveSyncCrashChild"]),
        .testTarget(name: "TroveCLITests", dependencies: ["TroveCLI", "trove", "TroveTestSupport", "TroveChildProcess"]),
        .testTarget(
            name: "ExamplesTests",
            dependencies: ["TroveTestSupport", "TroveChildProcess"] + examples.map { Target.Dependency.target(name: $0.target) }),
        .testTarget(
            name: "TroveReliabilityTests",
            dependencies: ["Trove", "TroveCLI", "TroveEmbeddings", "TroveSQLite", "TroveVectors", "TroveTestSupport", "TroveChildProcess", "TroveCrashChild"]),
    ],
    swiftLanguageModes: [.v6]
)
