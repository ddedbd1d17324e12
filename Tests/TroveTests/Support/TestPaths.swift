import Foundation

/// Where the repository and the test fixtures are, wherever a test file sits in the folders.
enum TestPaths {
    /// Tests/TroveTests/Support/TestPaths.swift → the repository root.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// Tests/TroveTests/Fixtures.
    static let fixtures = repository.appendingPathComponent("Tests/TroveTests/Fixtures")
}
