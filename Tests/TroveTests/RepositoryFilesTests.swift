import Foundation
import Testing
import TroveTestSupport

/// The files a newcomer's tools read before any code: the license a package index and a lawyer
/// look for, and the editor settings every editor applies (issue 42).
@Suite("Repository files")
struct RepositoryFilesTests {
    @Test("LICENSE is the MIT license of The Trove authors, 2026, and the README points to it")
    func license() throws {
        let license = try DocumentationQuotes.text("LICENSE")
        let lines = license.split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        #expect(lines.first == "MIT License")
        #expect(lines.contains("Copyright (c) 2026 The Trove authors"))
        // The MIT text's two operative sentences, so a truncated or altered copy fails.
        let flat = license.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(
            flat.contains(
                "Permission is hereby granted, free of charge, to any person obtaining a copy"))
        #expect(flat.contains(#"THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND"#))
        #expect(license.hasSuffix("SOFTWARE.\n"))
        let readme = try DocumentationQuotes.text("README.md")
        #expect(readme.contains("](LICENSE)"))
    }

    @Test(".editorconfig: LF and a final newline everywhere, four spaces for Swift")
    func editorConfig() throws {
        let sections = Self.sections(try DocumentationQuotes.text(".editorconfig"))
        #expect(sections[""]?["root"] == "true")
        #expect(sections["*"]?["end_of_line"] == "lf")
        #expect(sections["*"]?["insert_final_newline"] == "true")
        #expect(sections["*.swift"]?["indent_style"] == "space")
        #expect(sections["*.swift"]?["indent_size"] == "4")
    }

    /// An EditorConfig file as `[section: [key: value]]`; keys before the first section under "".
    static func sections(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current = ""
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                current = String(line.dropFirst().dropLast())
                continue
            }
            let parts = line.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            if parts.count == 2 {
                sections[current, default: [:]][parts[0].lowercased()] = parts[1].lowercased()
            }
        }
        return sections
    }
}
