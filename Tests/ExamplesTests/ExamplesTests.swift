import Foundation
import Testing
import TroveTestSupport

/// Runs every program in Examples/ and compares what it prints with the expected-output.txt
/// checked in beside it, so the examples (and the docs that quote them) cannot drift from the code.
@Suite("Examples")
struct ExamplesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The example binaries are built next to the test bundle.
    static func binary(_ name: String) -> String? {
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var dir = start
            for _ in 0..<4 {
                candidates.append(dir.appendingPathComponent(name))
                dir = dir.deletingLastPathComponent()
            }
        }
        candidates.append(repository.appendingPathComponent(".build/debug/\(name)"))
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("each example prints its expected output", arguments: [
        ("example-quickstart", "Quickstart"), ("example-documents", "DocumentsAndAggregates"),
        ("example-transaction", "Transaction"), ("example-hybrid", "HybridSearch"),
        ("example-search-collection", "SearchCollection"), ("example-relationships", "Relationships"),
        ("example-expiry", "Expiry"), ("example-admin", "Administration"),
        ("example-links", "Links"), ("example-places", "Places"),
        ("example-models", "Models"),
        ("example-live-queries", "LiveQueries"),
        ("example-migrations", "Migrations"),
    ])
    func example(_ binary: String, _ folder: String) throws {
        let path = try #require(Self.binary(binary), "\(binary) is not built")
        let dir = try TemporaryDirectory()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [dir.path("")]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expectedURL = Self.repository.appendingPathComponent("Examples/\(folder)/expected-output.txt")
        let expected = (try? String(contentsOf: expectedURL, encoding: .utf8)) ?? ""
        if output != expected, ProcessInfo.processInfo.environment["TROVE_RECORD_EXAMPLES"] == "1" {
            try output.write(to: expectedURL, atomically: true, encoding: .utf8)
        }
        #expect(output == expected, "\(folder): got\n\(output)")
    }

    /// The README quotes each example from its start marker to the end of the file, as it is.
    @Test("README quotes the examples as they are", arguments: [
        ("Models", "import Foundation"),
        ("Relationships", "let database"),
        ("Expiry", "// A clock the example controls"),
        ("Administration", "let database = try Database(path: file(\"app.trove\"))"),
    ])
    func readmeQuotes(_ folder: String, _ start: String) throws {
        let source = try String(
            contentsOf: Self.repository.appendingPathComponent("Examples/\(folder)/main.swift"), encoding: .utf8)
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let quoted = try #require(source.range(of: start).map { String(source[$0.lowerBound...]) })
        #expect(readme.contains("```swift\n" + quoted.trimmingCharacters(in: .newlines) + "\n```"))
    }
}
