import Foundation
import Trove

/// `trove get` and `trove multi-get`.
enum GetCommand {
    static func get(_ context: CommandContext) async throws -> Int32 {
        let positionals = context.arguments.positionals
        let range = try positionals.count > 1 ? LineRange(parsing: positionals[1]) : nil
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let page = try await NoteRetrieval.get(
            positionals[0], range: range, notebook: notebook, context: context)
        if context.json {
            context.console.out.write(page.json.serialized() + "\n")
        } else {
            context.console.out.write(page.printed)
        }
        return ExitCode.success
    }

    static func multiGet(_ context: CommandContext) async throws -> Int32 {
        let maxBytes = try context.arguments.integer(
            "max-bytes", default: NoteRetrieval.defaultMaxBytes, in: 1...1_073_741_824,
            command: "multi-get")
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let batch = try await NoteRetrieval.multiGet(
            context.arguments.positionals, maxBytes: maxBytes, notebook: notebook, context: context)
        if context.json {
            context.console.out.write(batch.json.serialized() + "\n")
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
