import Foundation
import Trove

/// `trove get`: one note, or a range of its lines.
struct GetCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "get",
        summary: "print one note, or a range of its lines, by path or #shortid",
        usage: "get [options] PATH|#SHORTID|ID [:FROM[-TO]]",
        discussion: """
            A note is an indexed file, or one document of an indexed .jsonl file (PATH#DOCID).
            Its short id is # and 8 hex digits, shown by 'trove search' (a unique start of at
            least 4 digits will do). A record id from 'trove search --json' (a UUID) works too.
            The text is the file as it is on disk now; for a .jsonl document, or a file that is
            gone, the indexed chunks. :FROM-TO prints lines FROM to TO (from 1), :FROM to the end.
            """,
        options: Commands.database + Commands.common,
        positionals: (1, 2),
        examples: [
            ("trove get notes/dentist.md", "the whole note"),
            ("trove get '#3f2a9c01' :10-20", "lines 10 to 20 of the note with that short id"),
            ("trove get --json export.jsonl#n42", "one .jsonl document, as JSON"),
        ])

    /// A path, `#shortid` or record id.
    var reference: String
    var range: LineRange?

    init(reference: String, range: LineRange?) { (self.reference, self.range) = (reference, range) }

    init(parsing arguments: ParsedArguments) throws {
        let positionals = arguments.positionals
        reference = positionals[0]
        range = try positionals.count > 1 ? LineRange(parsing: positionals[1]) : nil
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let page = try await NoteRetrieval.get(
            reference, range: range, notebook: notebook, context: context)
        if context.json {
            try context.printJSON(page.result)
        } else {
            context.console.out.write(page.printed)
        }
        return ExitCode.success
    }
}

/// `trove multi-get`: several notes by glob or list, within a byte budget.
struct MultiGetCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "multi-get",
        summary: "print several notes by glob or list, within a byte budget",
        usage: "multi-get [options] GLOB|PATH|#SHORTID...",
        discussion: """
            Globs match note paths: * and ? within a folder name, ** across folders. A relative
            glob matches paths under the current folder, or the end of any path ('*.md': every
            Markdown note). Notes print in path order, each under a ==> PATH #SHORTID <== line,
            while they fit in --max-bytes; the first that does not fit is cut after its last
            whole line that does, and the others are left out. Both are named on stderr (and
            in --json: "cut", "left_out").
            """,
        options: [
            OptionSpec(
                "max-bytes", value: "N",
                help:
                    "budget for all texts, in UTF-8 bytes (default \(NoteRetrieval.defaultMaxBytes))"
            )
        ] + Commands.database + Commands.common,
        positionals: (1, nil),
        examples: [
            ("trove multi-get 'journal/2025-05-*.md'", "every May 2025 journal note"),
            (
                "trove multi-get --max-bytes 4000 '#3f2a9c01' '#77b0e512'",
                "two notes, 4000 bytes at most"
            ),
            ("trove multi-get --json '**/*.md' | jq '.left_out'", "what did not fit"),
        ])

    /// Globs, paths and short ids.
    var patterns: [String]
    var maxBytes: Int

    init(patterns: [String], maxBytes: Int) {
        (self.patterns, self.maxBytes) = (patterns, maxBytes)
    }

    init(parsing arguments: ParsedArguments) throws {
        patterns = arguments.positionals
        maxBytes = try arguments.integer(
            "max-bytes", default: NoteRetrieval.defaultMaxBytes, in: 1...1_073_741_824,
            command: "multi-get")
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let batch = try await NoteRetrieval.multiGet(
            patterns, maxBytes: maxBytes, notebook: notebook, context: context)
        if context.json {
            try context.printJSON(batch.result)
            return ExitCode.success
        }
        let style = context.style
        let environment = context.console.environment
        let directory = context.console.currentDirectory
        func display(_ note: Note) -> String {
            SearchCommand.displayPath(
                note.file, environment: environment, currentDirectory: directory)
                + (note.documentID.map { "#\($0)" } ?? "")
        }
        for (index, entry) in batch.entries.enumerated() {
            var header = "==> \(display(entry.note)) \(entry.note.shortID)"
            if entry.cut {
                header += " (cut: \(entry.text.utf8.count) of \(entry.totalBytes) bytes)"
            }
            header += " <=="
            context.console.out.write((index > 0 ? "\n" : "") + style.bold(header) + "\n")
            context.console.out.write(
                entry.text.hasSuffix("\n") || entry.text.isEmpty ? entry.text : entry.text + "\n")
        }
        for entry in batch.entries where entry.cut {
            context.warn(
                "\(display(entry.note)) was cut to \(entry.text.utf8.count) of \(entry.totalBytes) bytes "
                    + "(--max-bytes \(maxBytes))")
        }
        if !batch.leftOut.isEmpty {
            context.warn(
                "left out \(batch.leftOut.count) note\(batch.leftOut.count == 1 ? "" : "s") over the "
                    + "--max-bytes \(maxBytes) budget: "
                    + batch.leftOut.map { display($0.note) }.joined(separator: ", "))
        }
        return ExitCode.success
    }
}
