import Foundation
import Trove
import TroveEmbeddings

/// What `trove index` did; printed as one line, or as JSON with `--json`:
///
/// ```
/// indexed 62 files: 62 added, 0 updated, 0 removed, 0 unchanged (77 chunks) in 9.7 s
/// {"added":62,"updated":0,"removed":0,"unchanged":0,"failed":0,"skipped":0,"chunks":77,...}
/// ```
struct IndexSummary: Sendable, Equatable {
    var added = 0
    var updated = 0
    var removed = 0
    var unchanged = 0
    var failed = 0
    /// Binary files passed over (not notes).
    var skipped = 0
    /// Chunks written (added and updated files).
    var chunks = 0
    var seconds = 0.0
    /// Files looked at and bytes read, for the progress bar.
    var processed = 0
    var bytesRead = 0

    var json: JSONValue {
        .object([
            ("added", .int(Int64(added))), ("updated", .int(Int64(updated))),
            ("removed", .int(Int64(removed))), ("unchanged", .int(Int64(unchanged))),
            ("failed", .int(Int64(failed))), ("skipped", .int(Int64(skipped))),
            ("chunks", .int(Int64(chunks))),
            ("seconds", .double((seconds * 1000).rounded() / 1000)),
        ])
    }

    var line: String {
        var text =
            "\(added) added, \(updated) updated, \(removed) removed, \(unchanged) unchanged"
        if failed > 0 { text += ", \(failed) failed" }
        if skipped > 0 { text += ", \(skipped) binary skipped" }
        return text + " (\(chunks) chunks) in " + String(format: "%.1f", seconds) + " s"
    }
}

/// `trove index [PATH...]`: refreshes every collection (or those named with `-c`); PATHs not
/// yet in a collection are first added to the implicit one (``NoteCollection/implicitName``)
/// or to the one named with `-c`.
enum IndexCommand {
    static func run(_ context: CommandContext) async throws -> Int32 {
        let started = Date()
        let path = try context.databasePath()
        let names = context.arguments.all("collection")
        for name in names { try NoteCollection.validate(name: name, command: "index") }
        if !context.arguments.positionals.isEmpty, names.count > 1 {
            throw CLIError.usage(
                "PATHs go into one collection: give at most one -c with them", command: "index")
        }
        // Paths are checked before anything is written or loaded.
        let paths = try context.arguments.positionals.map { try checkedPath($0, context: context) }
        let embedders = try await context.loadEmbedders(forDatabaseAt: path)
        // Chunks are sized with the first model's tokenizer.
        let chunker = try context.chunker(for: embedders[0])
        let notebook = try await Notebook.openForWriting(
            path: path, embedders: embedders, context: context,
            encrypt: context.arguments.flag("encrypt"))

        var collections = try await notebook.collections()
        if !paths.isEmpty {
            let name = names.first ?? NoteCollection.implicitName
            var target =
                collections.first { $0.name == name }
                ?? NoteCollection(name: name, paths: [], mask: .standard, context: nil)
            // A path already inside a collection is refreshed with it, not added twice.
            let new = paths.filter { path in !collections.contains { $0.contains(path: path) } }
            if !new.isEmpty || !collections.contains(where: { $0.name == name }) {
                target.paths += new
                try await notebook.save(target)
                collections = try await notebook.collections()
            }
        }
        guard !collections.isEmpty else {
            throw CLIError.usage(
                "nothing to index: give PATH... or add a collection with 'trove collection add PATH --name NAME'",
                command: "index")
        }
        var selected = collections
        if !names.isEmpty {
            selected = try names.map { name in
                guard let found = collections.first(where: { $0.name == name }) else {
                    throw CollectionCommand.unknown(name, among: collections, command: "index")
                }
                return found
            }
        }

        let indexer = Indexer(
            notebook: notebook, embedders: embedders, chunker: chunker, context: context)
        var summary = IndexSummary()
        try await indexer.refresh(selected, into: &summary)
        // The store merges FTS5 segments once writes pause, but this process ends right away:
        // merge now, so snippets and FTS5 queries don't read one segment per batch (a fraction
        // of a second even for tens of thousands of chunks).
        if summary.added + summary.updated + summary.removed > 0 {
            try await notebook.database.mergeTextIndexes()
        }
        summary.seconds = Date().timeIntervalSince(started)
        report(summary, collections: selected, path: path, context: context)
        if context.arguments.flag("watch") {
            return try await Watcher.run(collections: selected, indexer: indexer, context: context)
        }
        return summary.failed > 0 ? ExitCode.failure : ExitCode.success
    }

    /// A PATH argument made absolute, refused when missing, not a file or folder, or a folder
    /// that cannot be listed.
    static func checkedPath(_ raw: String, context: CommandContext) throws -> String {
        let path = Locations.absolute(
            raw, environment: context.console.environment,
            currentDirectory: context.console.currentDirectory)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            if let link = FileDiscovery.brokenLink(path) {
                throw CLIError.notFound("cannot read \(raw): \(link)")
            }
            throw CLIError.notFound("no such file or folder: \(raw)")
        }
        // A folder that cannot be listed would be indexed as an empty one, silently.
        if isDirectory.boolValue { try FileDiscovery.checkReadable(folder: path, as: raw) }
        if !isDirectory.boolValue,
            let type = try? FileManager.default.attributesOfItem(atPath: path)[.type]
                as? FileAttributeType, type != .typeRegular, type != .typeSymbolicLink
        {
            throw CLIError.failure("\(raw) is not a regular file or folder")
        }
        return path
    }

    /// The summary line on stderr, or the JSON summary on stdout.
    static func report(
        _ summary: IndexSummary, collections: [NoteCollection], path: String,
        context: CommandContext
    ) {
        let console = context.console
        if context.json {
            var members = summary.json.members ?? []
            members.append(("collections", .array(collections.map { .string($0.name) })))
            members.append(("database", .string(path)))
            console.out.write(JSONValue.object(members).serialized() + "\n")
        } else if !context.arguments.flag("quiet") {
            let style = Style(
                enabled: console.colorEnabled(
                    terminal: console.stderrIsTerminal,
                    noColorFlag: context.arguments.flag("no-color")))
            let files = summary.processed
            console.err.write(
                "\(style.green("indexed")) \(files) file\(files == 1 ? "" : "s"): \(summary.line)\n"
            )
        }
    }
}
