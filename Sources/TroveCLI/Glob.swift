import Foundation

/// A collection's file mask: a shell-style glob matched against a path relative to the
/// collection's folder, `/` separating folders.
///
/// - `*` matches any run of characters inside one folder or file name;
/// - `**` as a whole path component matches any number of folders, none included
///   (`**/*.md` matches `a.md` and `x/y/a.md`);
/// - `?` matches one character other than `/`;
/// - `[abc]`, `[a-z]`, `[!a]` match one character of (or not of) a set;
/// - `{md,txt}` matches any of its comma-separated alternatives (no nesting).
///
/// ```swift
/// let mask = try Glob("**/*.{md,txt}")
/// mask.matches("journal/2026/march.md")   // true
/// mask.matches("photo.jpg")               // false
/// ```
struct Glob: Sendable, Equatable, CustomStringConvertible {
    /// The mask as written.
    let pattern: String
    /// The pattern with `{…}` expanded: a path matches when one of them matches.
    private let alternatives: [[Character]]

    /// The mask of collections added without `--mask`: every format `trove` reads.
    static let defaultPattern = "**/*.{txt,text,md,markdown,jsonl,ndjson}"

    /// ``defaultPattern`` parsed.
    // The literal parses; a failure is a bug in this file.
    static let standard = try! Glob(defaultPattern)

    /// Parses a mask.
    /// - Throws: ``CLIError/usage(_:command:)`` for an empty mask, an unclosed `[` or `{`, or
    ///   nested braces.
    init(_ pattern: String) throws {
        guard !pattern.isEmpty else {
            throw CLIError.usage("--mask must not be empty", command: "collection")
        }
        self.pattern = pattern
        alternatives = try Self.expandBraces(Array(pattern))
        for alternative in alternatives {
            var index = 0
            while index < alternative.count {
                if alternative[index] == "[" {
                    guard Self.classEnd(alternative, from: index) != nil else {
                        throw CLIError.usage(
                            "--mask '\(pattern)' has an unclosed '['", command: "collection")
                    }
                }
                index += 1
            }
        }
    }

    var description: String { pattern }

    /// Whether `relativePath` (folders separated by `/`, no leading `/`) matches the mask.
    /// - Complexity: O(p · n) for a pattern of p characters and a path of n, per alternative.
    func matches(_ relativePath: String) -> Bool {
        let path = Array(relativePath)
        return alternatives.contains { Self.match($0, 0, path, 0) }
    }

    private static func expandBraces(_ pattern: [Character]) throws -> [[Character]] {
        guard let open = pattern.firstIndex(of: "{") else { return [pattern] }
        guard let close = pattern[open...].firstIndex(of: "}") else {
            throw CLIError.usage(
                "--mask '\(String(pattern))' has an unclosed '{'", command: "collection")
        }
        let inner = pattern[(open + 1)..<close]
        if inner.contains("{") {
            throw CLIError.usage(
                "--mask '\(String(pattern))': braces do not nest", command: "collection")
        }
        let head = Array(pattern[..<open])
        let tails = try expandBraces(Array(pattern[(close + 1)...]))
        var out: [[Character]] = []
        for option in inner.split(separator: ",", omittingEmptySubsequences: false) {
            for tail in tails { out.append(head + option + tail) }
        }
        return out
    }

    /// The index of the `]` closing the class opened at `start`.
    private static func classEnd(_ pattern: [Character], from start: Int) -> Int? {
        var index = start + 1
        if index < pattern.count, pattern[index] == "!" || pattern[index] == "^" { index += 1 }
        if index < pattern.count, pattern[index] == "]" { index += 1 }  // `[]]` holds `]`
        while index < pattern.count {
            if pattern[index] == "]" { return index }
            index += 1
        }
        return nil
    }

    private static func classMatches(
        _ pattern: [Character], _ start: Int, _ end: Int, _ character: Character
    ) -> Bool {
        var index = start + 1
        var negated = false
        if pattern[index] == "!" || pattern[index] == "^" {
            negated = true
            index += 1
        }
        var found = false
        while index < end {
            if index + 2 < end, pattern[index + 1] == "-" {
                if pattern[index] <= character && character <= pattern[index + 2] { found = true }
                index += 3
            } else {
                if pattern[index] == character { found = true }
                index += 1
            }
        }
        return found != negated
    }

    /// Backtracking match of `pattern[p...]` against `path[s...]`.
    private static func match(_ pattern: [Character], _ p: Int, _ path: [Character], _ s: Int)
        -> Bool
    {
        if p == pattern.count { return s == path.count }
        let character = pattern[p]
        // `**/` at the start of a component: any number of whole folders.
        if character == "*", p + 1 < pattern.count, pattern[p + 1] == "*",
            p == 0 || pattern[p - 1] == "/"
        {
            var next = p + 2
            if next < pattern.count, pattern[next] == "/" { next += 1 }
            if next == p + 2 {
                // A trailing `**`: everything below.
                return true
            }
            var position = s
            while true {
                if match(pattern, next, path, position) { return true }
                guard let slash = path[position...].firstIndex(of: "/") else { return false }
                position = slash + 1
            }
        }
        switch character {
        case "*":
            var position = s
            while true {
                if match(pattern, p + 1, path, position) { return true }
                guard position < path.count, path[position] != "/" else { return false }
                position += 1
            }
        case "?":
            return s < path.count && path[s] != "/" && match(pattern, p + 1, path, s + 1)
        case "[":
            guard let end = classEnd(pattern, from: p), s < path.count, path[s] != "/" else {
                return false
            }
            return classMatches(pattern, p, end, path[s]) && match(pattern, end + 1, path, s + 1)
        default:
            return s < path.count && path[s] == character && match(pattern, p + 1, path, s + 1)
        }
    }
}
