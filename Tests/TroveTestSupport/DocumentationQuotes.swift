import Foundation

/// The repository's Markdown (README.md, the DocC catalog) and the example programs it quotes.
/// Docs show code only by quoting a program in Examples/, which ExamplesTests builds and runs, so
/// a test that every code block is such a quote keeps the docs from drifting from tested code.
public enum DocumentationQuotes {
    /// The repository's root (this file is Tests/TroveTestSupport/DocumentationQuotes.swift).
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The DocC catalog of the Trove module, relative to the repository.
    public static let catalog = "Sources/Trove/Trove.docc"

    /// A file of the repository as text.
    public static func text(_ relativePath: String) throws -> String {
        try String(contentsOf: repository.appendingPathComponent(relativePath), encoding: .utf8)
    }

    /// The catalog's Markdown files, by path relative to the repository, sorted.
    public static func articles() throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(
            atPath: repository.appendingPathComponent(catalog).path)
        return names.filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
    }

    /// Every Swift file under Examples/, by path relative to the repository, with its text.
    public static func examples() throws -> [(path: String, text: String)] {
        let root = repository.appendingPathComponent("Examples")
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var paths: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".swift") { paths.append("Examples/\(path)") }
        }
        return try paths.sorted().map { ($0, try text($0)) }
    }

    /// The bodies of the fenced code blocks of one language (```swift ... ```), in order.
    public static func codeBlocks(in markdown: String, language: String = "swift") -> [String] {
        var blocks: [String] = []
        var body: [Substring] = []
        var fence: Substring?  // the opening line of the block being read
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if let opening = fence {
                if line == "```" {
                    if opening == "```" + language { blocks.append(body.joined(separator: "\n")) }
                    fence = nil
                } else {
                    body.append(line)
                }
            } else if line.hasPrefix("```") {
                fence = line
                body = []
            }
        }
        return blocks
    }

    /// The text under a heading (`### Places`), up to the next heading of the same or a higher
    /// level; nil when the heading is missing.
    public static func section(_ heading: String, of markdown: String) -> String? {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(where: { $0 == heading }) else { return nil }
        let level = heading.prefix { $0 == "#" }.count
        var inCode = false
        var end = lines.endIndex
        for index in lines.index(after: start)..<lines.endIndex {
            let line = lines[index]
            if line.hasPrefix("```") { inCode.toggle() }
            let hashes = line.prefix { $0 == "#" }.count
            if !inCode, hashes > 0, hashes <= level, line.dropFirst(hashes).first == " " {
                end = index
                break
            }
        }
        return lines[start..<end].joined(separator: "\n")
    }

    /// Whether `block` is a run of whole, consecutive lines of `source`, with one common
    /// indentation taken off (so a quote from inside a `do { }` may start at the margin).
    public static func isExcerpt(_ block: String, of source: String) -> Bool {
        let quoted = block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard !quoted.isEmpty, quoted.count <= lines.count else { return false }
        for start in 0...(lines.count - quoted.count) {
            guard let indent = indentation(of: lines[start], quoting: quoted[0]) else { continue }
            if zip(lines[start..<(start + quoted.count)], quoted).allSatisfy({ line, quote in
                quote.isEmpty ? line.allSatisfy(\.isWhitespace) : line == indent + quote
            }) {
                return true
            }
        }
        return false
    }

    /// The example file a block quotes, or nil when it quotes none.
    public static func quotedExample(_ block: String, in examples: [(path: String, text: String)])
        -> String?
    {
        examples.first { isExcerpt(block, of: $0.text) }?.path
    }

    private static func indentation(of line: String, quoting first: String) -> String? {
        guard !first.isEmpty, line.hasSuffix(first) else { return nil }
        let indent = String(line.dropLast(first.count))
        return indent.allSatisfy { $0 == " " } ? indent : nil
    }
}
