import Foundation
import Testing
import TroveChildProcess
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

    @Test(
        "each example prints its expected output",
        arguments: [
            ("example-quickstart", "Quickstart"), ("example-documents", "DocumentsAndAggregates"),
            ("example-transaction", "Transaction"), ("example-hybrid", "HybridSearch"),
            ("example-search-collection", "SearchCollection"),
            ("example-relationships", "Relationships"),
            ("example-expiry", "Expiry"), ("example-admin", "Administration"),
            ("example-links", "Links"), ("example-places", "Places"),
            ("example-models", "Models"),
            ("example-live-queries", "LiveQueries"),
            ("example-migrations", "Migrations"),
            ("example-vector-index", "VectorIndex"), ("example-text-search", "TextSearch"),
            ("example-key-storage", "KeyStorage"),
            ("example-sync", "Sync"),
            ("example-model-context", "ModelContext"),
        ])
    func example(_ binary: String, _ folder: String) throws {
        let path = try #require(Self.binary(binary), "\(binary) is not built")
        let dir = try TemporaryDirectory()
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = [dir.path("")]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(
            decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expectedURL = Self.repository.appendingPathComponent(
            "Examples/\(folder)/expected-output.txt")
        let expected = (try? String(contentsOf: expectedURL, encoding: .utf8)) ?? ""
        if output != expected, ProcessInfo.processInfo.environment["TROVE_RECORD_EXAMPLES"] == "1" {
            try output.write(to: expectedURL, atomically: true, encoding: .utf8)
        }
        #expect(output == expected, "\(folder): got\n\(output)")
    }

    /// Docs show code only by quoting these programs: every Swift block of the README and the
    /// DocC catalog is a run of consecutive lines of an example (the README's manifest lines
    /// excepted, which ReadmeTests checks against Package.swift).
    @Test("every Swift block of the README and the DocC catalog quotes an example")
    func docsQuoteExamples() throws {
        let examples = try DocumentationQuotes.examples()
        for file in ["README.md"] + (try DocumentationQuotes.articles()) {
            for block in DocumentationQuotes.codeBlocks(in: try DocumentationQuotes.text(file))
            where !block.hasPrefix("// Package.swift") {
                #expect(
                    DocumentationQuotes.quotedExample(block, in: examples) != nil,
                    "\(file) has a block that is no example's code:\n\(block)")
            }
        }
    }

    @Test("every example is quoted by the DocC catalog")
    func everyExampleDocumented() throws {
        let examples = try DocumentationQuotes.examples()
        let blocks = try DocumentationQuotes.articles().flatMap {
            DocumentationQuotes.codeBlocks(in: try DocumentationQuotes.text($0))
        }
        let quoted = Set(blocks.compactMap { DocumentationQuotes.quotedExample($0, in: examples) })
        for example in examples where example.path.hasSuffix("/main.swift") {
            #expect(quoted.contains(example.path), "no article quotes \(example.path)")
        }
    }

    /// The articles quote each short example whole, from the line where its work starts to its end.
    @Test(
        "each capability's article quotes its example whole",
        arguments: [
            ("DocumentsAndQueries", "DocumentsAndAggregates", "let database"),
            ("DocumentsAndQueries", "Transaction", "struct InsufficientFunds"),
            ("SearchCollections", "SearchCollection", "let database"),
            ("ExpiringDocuments", "Expiry", "// A clock the example controls"),
            ("Administration", "Administration", "let database"),
        ])
    func articleQuotesExample(_ article: String, _ folder: String, _ start: String) throws {
        let source = try DocumentationQuotes.text("Examples/\(folder)/main.swift")
        let quoted = try #require(source.range(of: start).map { String(source[$0.lowerBound...]) })
        let blocks = DocumentationQuotes.codeBlocks(
            in: try DocumentationQuotes.text("\(DocumentationQuotes.catalog)/\(article).md"))
        #expect(
            blocks.contains(quoted.trimmingCharacters(in: .newlines)),
            "\(article).md does not quote Examples/\(folder) whole")
    }
}
