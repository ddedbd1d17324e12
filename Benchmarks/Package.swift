// swift-tools-version: 6.0
// Benchmarks live in their own package so their code never reaches library users.
// Run from this folder: swift run -c release trove-bench <area> [options]
import PackageDescription

let package = Package(
    name: "TroveBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [.package(name: "Trove", path: "..")],
    targets: [
        // libpq itself, for the raw-libpq limit the sync-postgres area measures Trove against.
        .systemLibrary(name: "CBenchLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // glibc's allocator statistics, for heap bytes per model (contexts).
        .systemLibrary(name: "CBenchMalloc"),
        // Trove's process spawner (Foundation's Process.run can crash on Linux), for the
        // PostgreSQL server the sync areas start (TestPostgresServer.swift, shared with the tests;
        // ChildProcess.swift is compiled into trove-bench). Its own name: target names are unique
        // across the package graph.
        .target(name: "CBenchChildProcess"),
        .executableTarget(
            name: "trove-bench",
            dependencies: [
                .product(name: "Trove", package: "Trove"),
                .product(name: "TroveEmbeddings", package: "Trove"),
                .product(name: "TroveSync", package: "Trove"),
                "CBenchLibPQ",
                "CBenchMalloc",
                "CBenchChildProcess",
            ],
            path: "Sources/TroveBench"
        )
    ],
    swiftLanguageModes: [.v6]
)
