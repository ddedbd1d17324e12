import Foundation
import Testing
import TroveTestSupport

/// The README is a map: a quick start a newcomer can paste, the commands CI runs, and links that
/// lead somewhere. Its code is quoted from Examples/ (checked for every block by ExamplesTests).
@Suite("README")
struct ReadmeTests {
    static func readme() throws -> String { try DocumentationQuotes.text("README.md") }

    @Test("the quick start quotes Examples/Quickstart whole, from its imports on")
    func quickStart() throws {
        let section = try #require(
            DocumentationQuotes.section("## Quick start", of: try Self.readme()))
        let source = try DocumentationQuotes.text("Examples/Quickstart/main.swift")
        let program = try #require(
            source.range(of: "import Foundation").map { String(source[$0.lowerBound...]) })
        #expect(
            DocumentationQuotes.codeBlocks(in: section).contains(
                program.trimmingCharacters(in: .newlines)))
    }

    @Test("the quick start's manifest lines name the product Package.swift declares")
    func manifestLines() throws {
        let section = try #require(
            DocumentationQuotes.section("## Quick start", of: try Self.readme()))
        let manifest = try #require(
            DocumentationQuotes.codeBlocks(in: section).first { $0.hasPrefix("// Package.swift") })
        #expect(manifest.contains(#".product(name: "Trove", package: "Trove")"#))
        #expect(manifest.contains(".package("))
        let package = try DocumentationQuotes.text("Package.swift")
        #expect(package.contains(#"name: "Trove","#))
        #expect(package.contains(#".library(name: "Trove", targets: ["Trove"])"#))
    }

    @Test("the README's test command is the one CI runs")
    func testCommand() throws {
        let ci = try DocumentationQuotes.text(".ci/run")
        let command = try #require(
            ci.split(separator: "\n").first { $0.hasPrefix("swift test") }
                .map { String($0.prefix { $0 != "#" }).trimmingCharacters(in: .whitespaces) })
        let setUp = try #require(
            DocumentationQuotes.section("## Set up, try it, test it", of: try Self.readme()))
        let commands = DocumentationQuotes.codeBlocks(in: setUp, language: "bash").joined(
            separator: "\n"
        )
        .split(separator: "\n").map {
            String($0.prefix { $0 != "#" }).trimmingCharacters(in: .whitespaces)
        }
        #expect(
            commands.contains(command), "README runs the tests as \(commands), CI as \(command)")
        #expect(commands.contains("make demo"))
    }

    @Test("every capability links to its article, and every relative link leads to a file")
    func links() throws {
        let readme = try Self.readme()
        let targets = readme.matches(of: /\]\(([^)#]+)(#[^)]*)?\)/).map { String($0.output.1) }
            .filter { !$0.hasPrefix("http") }
        #expect(!targets.isEmpty)
        for target in targets {
            #expect(
                FileManager.default.fileExists(
                    atPath: DocumentationQuotes.repository.appendingPathComponent(target).path),
                "README links to \(target), which is missing")
        }
        for article in try DocumentationQuotes.articles() where !article.hasSuffix("/Trove.md") {
            #expect(targets.contains(article), "README does not link to \(article)")
        }
    }

    @Test(
        "the README, ARCHITECTURE and BENCHMARKS stay maps",
        arguments: [
            ("README.md", 300), ("Documentation/ARCHITECTURE.md", 400), ("BENCHMARKS.md", 400),
        ])
    func lengths(_ file: String, _ maximum: Int) throws {
        let lines =
            try DocumentationQuotes.text(file).split(
                separator: "\n", omittingEmptySubsequences: false
            ).count - 1
        #expect(lines <= maximum, "\(file) has \(lines) lines; at most \(maximum)")
    }
}
