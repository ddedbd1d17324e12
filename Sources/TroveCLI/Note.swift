import Foundation
import TroveEmbeddings

/// A note: one indexed file, or one document of an indexed .jsonl file. Search results collapse
/// a note's chunks into its best one; `trove get`, `trove multi-get` and the MCP server print
/// and serve whole notes.
///
/// Its short id is `#` and the first 8 hex digits of the SHA-256 of its file's absolute path
/// (for a .jsonl document, the path, a NUL and the document's id): stable while the file stays
/// where it is, whatever its content, and short enough to type (`trove get '#3f2a9c01'`). Eight
/// digits give about one chance in 40,000 that two of 1,000 notes share one; a short id that
/// matches two notes is refused with both paths.
///
/// ```swift
/// let note = Note(file: "/home/ana/notes/tea.md", documentID: nil, source: "/home/ana/notes/tea.md")
/// note.shortID   // "#" + 8 hex digits
/// ```
struct Note: Sendable, Equatable {
    /// The absolute path of the file it was indexed from.
    var file: String
    /// The document's id inside a .jsonl file; nil for a plain file.
    var documentID: String?
    /// The source its records carry (the file, or the .jsonl document's own source).
    var source: String

    /// `#` and 8 hex digits (see the type's discussion).
    var shortID: String { Self.shortID(file: file, documentID: documentID) }

    /// The short id of the note of `file` (and `documentID` inside a .jsonl file).
    static func shortID(file: String, documentID: String?) -> String {
        var key = Array(file.utf8)
        if let documentID { key += [0] + Array(documentID.utf8) }
        return "#" + SHA256.hexDigest(key).prefix(8)
    }

    /// The MCP resource URI of the note: `trove://note/` and its short id's digits.
    var uri: String { "trove://note/" + shortID.dropFirst() }

    /// The file, with `#id` after it for a .jsonl document.
    var label: String { documentID.map { "\(file)#\($0)" } ?? file }

    /// The MIME type clients are told: Markdown for .md/.markdown files, plain text otherwise.
    var mimeType: String {
        let ext = (file as NSString).pathExtension.lowercased()
        return documentID == nil && (ext == "md" || ext == "markdown")
            ? "text/markdown" : "text/plain"
    }
}

/// Lines `from` through `to` of a text, counted from 1 (`:FROM-TO` on the command line).
///
/// ```swift
/// try LineRange(parsing: ":10-20")   // lines 10 to 20
/// try LineRange(parsing: ":10")      // line 10 to the end
/// LineRange(from: 2, to: 3).apply(to: "a\nb\nc\nd")   // "b\nc"
/// ```
struct LineRange: Sendable, Equatable {
    /// The line numbers a range may name (the get tool's `from_line` and `to_line`).
    static let lines = 1...Int(Int32.max)

    var from: Int
    /// The last line, included; nil: to the end.
    var to: Int?

    /// - Precondition: `from >= 1` and `to`, when given, is at least `from` (checked by the
    ///   parsers, which throw instead).
    init(from: Int, to: Int?) {
        precondition(
            from >= 1 && (to ?? from) >= from,
            "a line range starts at line 1 or later and ends after its start")
        self.from = from
        self.to = to
    }

    /// Reads `:FROM`, `:FROM-TO` (the leading colon optional).
    /// - Throws: ``CLIError/usage(_:command:)`` when it is not a valid range.
    init(parsing text: String, command: String = "get") throws {
        let body = text.hasPrefix(":") ? text.dropFirst() : Substring(text)
        let parts = body.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first.flatMap({ Int($0) }), first >= 1 else {
            throw CLIError.usage(
                "'\(text)' is not a line range: use :FROM or :FROM-TO with line numbers from 1",
                command: command)
        }
        var last: Int?
        if parts.count == 2 {
            guard let number = Int(parts[1]), number >= first else {
                throw CLIError.usage(
                    "'\(text)' is not a line range: TO must be a line number not before FROM",
                    command: command)
            }
            last = number
        }
        self.init(from: first, to: last)
    }

    /// The lines of `text` in the range, joined by newlines, and how many lines `text` has.
    /// - Throws: ``CLIError/usage(_:command:)`` when the range starts after the last line.
    func apply(to text: String, command: String = "get") throws -> (text: String, lines: Int) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        // the final newline ends a line
        if lines.count > 1, lines.last == "" { lines.removeLast() }
        guard from <= lines.count else {
            throw CLIError.usage(
                "the note has \(lines.count) line\(lines.count == 1 ? "" : "s"); line \(from) is past its end",
                command: command)
        }
        let end = min(to ?? lines.count, lines.count)
        return (lines[(from - 1)..<end].joined(separator: "\n"), lines.count)
    }
}
