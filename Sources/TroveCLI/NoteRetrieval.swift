import Foundation
import Trove

/// What `trove get` and `trove multi-get` print and the MCP server's get and multi_get tools
/// return: one place computes both, so the tool and the command agree.
enum NoteRetrieval {
    /// One note's text, or the lines asked for.
    struct Page: Sendable {
        var note: Note
        var text: String
        var range: LineRange?
        /// Lines in the whole note.
        var lines: Int
        /// Whether the text came from the file on disk (else from the indexed chunks).
        var fromFile: Bool
        /// The collections holding the note, with their contexts (what their notes are).
        var collections: [(name: String, context: String?)]
        /// Whether the whole note is empty (no line to print, not one blank line).
        var noteIsEmpty = false

        /// What `trove get` prints: every line asked for ended by a newline, blank ones included
        /// (``text`` joins them, so a range ending in blank lines ends in newlines only).
        var printed: String { noteIsEmpty ? "" : text + "\n" }

        var result: GetResult {
            GetResult(
                path: note.file, documentID: note.documentID, shortID: note.shortID,
                source: note.source, fromLine: range?.from ?? 1,
                toLine: min(range?.to ?? lines, lines), lines: lines,
                origin: fromFile ? "file" : "index",
                collections: collections.map {
                    GetResult.Collection(name: $0.name, context: $0.context)
                },
                text: text)
        }
    }

    /// The note `reference` names (see ``Notebook/note(_:environment:currentDirectory:command:)``),
    /// whole or the lines of `range`.
    static func get(
        _ reference: String, range: LineRange?, notebook: Notebook, context: CommandContext
    ) async throws -> Page {
        let note = try await notebook.note(
            reference, environment: context.console.environment,
            currentDirectory: context.console.currentDirectory, command: context.spec.name)
        let (whole, fromFile) = try await notebook.text(of: note)
        let (text, lines) = try (range ?? LineRange(from: 1, to: nil)).apply(
            to: whole, command: context.spec.name)
        let holding = try await notebook.collections(of: note)
        let collections = try await notebook.collections().filter { holding.contains($0.name) }.map
        {
            ($0.name, $0.context)
        }
        return Page(
            note: note, text: text, range: range, lines: lines, fromFile: fromFile,
            collections: collections,
            noteIsEmpty: whole.isEmpty)
    }

    /// Several notes within a byte budget.
    struct Batch: Sendable {
        /// The notes given, each whole or cut at a line end (``Entry/cut``).
        var entries: [Entry]
        /// Notes that matched but did not fit at all.
        var leftOut: [(note: Note, bytes: Int)]
        var maxBytes: Int

        struct Entry: Sendable {
            var note: Note
            var text: String
            /// The whole note's size in UTF-8 bytes.
            var totalBytes: Int
            var cut: Bool { text.utf8.count < totalBytes }
        }

        var bytes: Int { entries.reduce(0) { $0 + $1.text.utf8.count } }

        var result: MultiGetResult {
            MultiGetResult(
                maxBytes: maxBytes, bytes: bytes,
                notes: entries.map { entry in
                    MultiGetResult.Entry(
                        path: entry.note.file, documentID: entry.note.documentID,
                        shortID: entry.note.shortID, bytes: entry.text.utf8.count,
                        totalBytes: entry.totalBytes, cut: entry.cut, text: entry.text)
                },
                leftOut: leftOut.map { item in
                    MultiGetResult.LeftOut(
                        path: item.note.file, documentID: item.note.documentID,
                        shortID: item.note.shortID, totalBytes: item.bytes)
                })
        }
    }

    /// The default budget of `multi-get` and the multi_get tool: 64 KiB, a few dozen notes, a
    /// modest share of an assistant's context window.
    static let defaultMaxBytes = 65_536

    /// The notes matching any of `patterns` (globs, paths, short ids or record ids), in path
    /// order, filled into `maxBytes` of text: each note whole while it fits; the first that
    /// does not fit is cut after its last whole line that fits (left out when not even one
    /// does); once the budget is spent the rest are left out and listed.
    /// - Throws: ``CLIError/notFound(_:)`` when a pattern matches nothing.
    static func multiGet(
        _ patterns: [String], maxBytes: Int, notebook: Notebook, context: CommandContext
    ) async throws -> Batch {
        let environment = context.console.environment
        let directory = context.console.currentDirectory
        var selected: [Note] = []
        var all: [Note]?
        for pattern in patterns {
            if NotePattern.isPattern(pattern) {
                if all == nil { all = try await notebook.notes() }
                let glob = try NotePattern(
                    pattern, environment: environment, currentDirectory: directory,
                    command: context.spec.name)
                let matches = all!.filter { glob.matches($0.file) }
                if matches.isEmpty { throw CLIError.notFound("no indexed note matches \(pattern)") }
                selected += matches
            } else {
                selected.append(
                    try await notebook.note(
                        pattern, environment: environment, currentDirectory: directory,
                        command: context.spec.name))
            }
        }
        var seen = Set<String>()
        selected = selected.filter { seen.insert($0.label).inserted }
            .sorted { ($0.file, $0.documentID ?? "") < ($1.file, $1.documentID ?? "") }

        var batch = Batch(entries: [], leftOut: [], maxBytes: maxBytes)
        var remaining = maxBytes
        for note in selected {
            let text = try await notebook.text(of: note).text
            let size = text.utf8.count
            if size <= remaining {
                batch.entries.append(.init(note: note, text: text, totalBytes: size))
                remaining -= size
                continue
            }
            let head = prefix(of: text, lineBytes: remaining)
            if !head.isEmpty {
                batch.entries.append(.init(note: note, text: head, totalBytes: size))
            } else {
                batch.leftOut.append((note, size))
            }
            remaining = 0
        }
        return batch
    }

    /// The longest run of whole lines from the start of `text` within `limit` UTF-8 bytes.
    static func prefix(of text: String, lineBytes limit: Int) -> String {
        var end = text.startIndex
        var used = 0
        var index = text.startIndex
        while index < text.endIndex {
            let lineEnd =
                text[index...].firstIndex(of: "\n").map { text.index(after: $0) } ?? text.endIndex
            let size = text[index..<lineEnd].utf8.count
            if used + size > limit { break }
            used += size
            end = lineEnd
            index = lineEnd
        }
        return String(text[..<end])
    }
}
