import Foundation
import Trove
import TroveEmbeddings

/// `trove index [PATH...]`: refreshes every collection (or those named with `-c`); PATHs not
/// yet in a collection are first added to the implicit one (``NoteCollection/implicitName``)
/// or to the one named with `-c`.
struct IndexCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "index",
        summary: "refresh the collections' notes in the database (incremental)",
        usage: "index [options] [PATH...]",
        discussion: """
            Refreshes every collection (see 'trove collection'), or those named with -c. PATHs
            not yet part of a collection are first added to the collection named with -c, else
            to the collection 'default', so 'trove index ~/notes' once and 'trove index' later
            keep ~/notes current.

            Reads .txt, .md and .markdown files as one document each, and .jsonl files as one
            document per line ({"id", "text", optional "source" and "metadata"}). Folders are
            walked recursively for the files their collection's mask takes; hidden files and
            folders are skipped, and so are binary files (counted as skipped, not as failures).
            Long documents are split into chunks at paragraph, then sentence boundaries so that
            every chunk fits the model's input; each chunk keeps its file as source and its
            position and collection in the metadata.

            Every chunk is embedded by each model of the database, one vector field per model:
            all-MiniLM-L6-v2 (English) and, when it is installed or given with --model,
            multilingual-e5-small (about 100 languages); 'trove stats' shows which a database
            holds.

            Re-running is incremental: unchanged files (same SHA-256) are skipped, changed files
            are replaced as a unit in one transaction, and files that left a collection (deleted,
            or no longer matching its mask) are removed from the database. A file or folder that
            cannot be read now (no permission, a link that leads nowhere, a drive not mounted)
            is a warning naming it, keeps the notes it held, and makes the exit status 1.

            With --watch, the command then follows the collections' folders (inotify on Linux,
            polling elsewhere) and indexes every file saved, created, moved or deleted there
            within about a second, a burst of saves as one batch; each summary line goes to
            stderr (with --json, one JSON line per batch on stdout). Ctrl-C stops it; the batch
            being written is finished first, so the database is always consistent.
            """,
        options: [
            OptionSpec(
                "collection", short: "c", value: "NAME", repeatable: true,
                help:
                    "refresh only this collection (repeat for several); with PATHs, add them to it"),
            OptionSpec(
                "chunk-tokens", value: "N",
                help:
                    "largest chunk, in estimated model tokens (default \(Chunker.defaultMaxTokens))"
            ),
            OptionSpec(
                "watch", short: "w",
                help:
                    "then keep following the folders: changes are indexed within a second (Ctrl-C stops)"
            ),
            OptionSpec("quiet", short: "q", help: "no progress bar and no summary line"),
            OptionSpec(
                "encrypt",
                help:
                    "create the database encrypted (passphrase: $TROVE_PASSWORD_FILE, $TROVE_PASSWORD or a prompt)"
            ),
        ] + Commands.model + Commands.database + Commands.common,
        positionals: (0, nil),
        examples: [
            ("trove index", "refresh every collection: only what changed is read again"),
            ("trove index ~/notes", "add ~/notes to the collection 'default' and index it"),
            ("trove index -c work", "refresh the collection 'work' only"),
            ("trove index --watch", "refresh, then keep every collection current until Ctrl-C"),
            (
                "trove index -c recipes ~/Downloads/recipes.md",
                "add one file to the collection 'recipes'"
            ),
            ("trove index --db work.sqlite exported.jsonl", "one document per JSON line"),
            (
                "TROVE_PASSWORD_FILE=~/.trove-pass trove index --encrypt --db private.trove ~/journal",
                "a new encrypted database"
            ),
        ])

    /// PATHs to add to a collection first.
    var paths: [String]
    /// `-c`: the collections to refresh (empty: all).
    var collections: [String]
    var chunkTokens: Int
    /// `--watch`: then follow the folders.
    var watch: Bool
    /// `--encrypt`: create the database encrypted.
    var encrypt: Bool

    /// - Throws: ``CLIError/usage(_:command:)`` for a collection name that is not one, or
    ///   PATHs with more than one collection.
    init(
        paths: [String], collections: [String], chunkTokens: Int = Chunker.defaultMaxTokens,
        watch: Bool = false, encrypt: Bool = false
    ) throws {
        for name in collections { try NoteCollection.validate(name: name, command: "index") }
        if !paths.isEmpty, collections.count > 1 {
            throw CLIError.usage(
                "PATHs go into one collection: give at most one -c with them", command: "index")
        }
        (self.paths, self.collections, self.chunkTokens) = (paths, collections, chunkTokens)
        (self.watch, self.encrypt) = (watch, encrypt)
    }

    init(parsing arguments: ParsedArguments) throws {
        try self.init(
            paths: arguments.positionals, collections: arguments.all("collection"),
            chunkTokens: try arguments.chunkTokens(command: "index"),
            watch: arguments.flag("watch"), encrypt: arguments.flag("encrypt"))
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let done = try await refresh(context)
        try Self.report(done.summary, collections: done.selected, path: done.path, context: context)
        if watch {
            return try await Watcher.run(
                collections: done.selected, indexer: done.indexer, context: context)
        }
        return done.summary.failed > 0 ? ExitCode.failure : ExitCode.success
    }

    /// What the MCP index tool returns: the refresh `trove index --json` reports.
    func result(_ context: CommandContext) async throws -> IndexResult {
        let done = try await refresh(context)
        return IndexResult(
            summary: done.summary, collections: done.selected.map(\.name), database: done.path)
    }

    /// Adds the PATHs to their collection, then refreshes the collections selected: the work
    /// done before the summary (and `--watch`).
    private func refresh(_ context: CommandContext) async throws -> (
        summary: IndexSummary, selected: [NoteCollection], path: String, indexer: Indexer
    ) {
        let started = Date()
        let path = try context.databasePath()
        let names = collections
        // Paths are checked before anything is written or loaded.
        let paths = try paths.map { try Self.checkedPath($0, context: context) }
        let embedders = try await context.loadEmbedders(forDatabaseAt: path)
        // Chunks are sized with the first model's tokenizer.
        let chunker = try context.chunker(for: embedders[0], maxTokens: chunkTokens)
        let notebook = try await Notebook.openForWriting(
            path: path, embedders: embedders, context: context, encrypt: encrypt)

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
        return (summary, selected, path, indexer)
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
    ) throws {
        let console = context.console
        if context.json {
            try context.printJSON(
                IndexResult(summary: summary, collections: collections.map(\.name), database: path))
        } else if !context.options.quiet {
            let style = Style(
                enabled: console.colorEnabled(
                    terminal: console.stderrIsTerminal,
                    noColorFlag: context.options.noColor))
            let files = summary.processed
            console.err.write(
                "\(style.green("indexed")) \(files) file\(files == 1 ? "" : "s"): \(summary.line)\n"
            )
        }
    }
}
