import Testing

@testable import TroveCLI

/// The glob masks of collections.
@Suite("Glob")
struct GlobTests {
    @Test(
        "matches",
        arguments: [
            ("**/*.md", "a.md", true), ("**/*.md", "x/y/a.md", true), ("**/*.md", "a.txt", false),
            ("*.md", "x/a.md", false), ("*.md", "a.md", true), ("notes/**", "notes/a/b.txt", true),
            ("**/*.{md,txt}", "a/b.txt", true), ("**/*.{md,txt}", "a/b.jsonl", false),
            ("journal/202?/*.md", "journal/2026/m.md", true),
            ("journal/202?/*.md", "journal/20261/m.md", false),
            ("[a-c]*.md", "b.md", true), ("[!a-c]*.md", "b.md", false),
            ("**/draft-*", "x/draft-1.md", true),
            ("a/**/b.md", "a/b.md", true), ("a/**/b.md", "a/x/y/b.md", true),
            ("a/**/b.md", "ab.md", false),
        ])
    func matches(pattern: String, path: String, expected: Bool) throws {
        #expect(try Glob(pattern).matches(path) == expected)
    }

    @Test("malformed masks are usage errors", arguments: ["", "[abc", "{a,b", "{a,{b}}"])
    func malformed(pattern: String) {
        #expect(throws: CLIError.self) { try Glob(pattern) }
    }
}
