import Foundation
import Trove

/// `trove collection`: named collections of folders (`add`, `list`, `remove`, `rename`).
struct CollectionCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "collection",
        summary: "named collections of folders, each with a file mask and a context",
        usage:
            "collection add PATH... [--name NAME] [--mask GLOB] [--context TEXT] | list | remove NAME | rename OLD NEW",
        discussion: """
            A collection is a name for some folders (and single files) of one database, with a
            glob mask choosing the files under its folders and a context string that every
            search result from it carries (for people and for assistants: "Personal notes",
            "Work wiki, 2024 onwards"). 'add' creates a collection and indexes it; 'trove
            index' refreshes every collection; 'trove search -c NAME' searches some of them.
            """,
        options: Commands.database + Commands.common,
        examples: [
            (
                "trove collection add ~/notes --name notes --mask '**/*.md' --context \"Personal notes\"",
                "the Markdown files under ~/notes, indexed now and by every 'trove index'"
            ),
            ("trove collection list", "names, folders, masks, contexts and sizes"),
            ("trove collection rename work job", "rename it; its records follow"),
            ("trove collection remove job", "delete it and its records"),
        ])
    static let subcommands: [any TroveCommand.Type] = [
        Add.self, List.self, Remove.self, Rename.self,
    ]

    init(parsing arguments: ParsedArguments) throws {}

    func run(_ context: CommandContext) async throws -> Int32 {
        try Commands.missingSubcommand(Self.self, context: context)
    }

    /// `trove collection add PATH...`.
    struct Add: TroveCommand {
        static let configuration = CommandSpec(
            name: "collection add",
            summary: "create a collection of folders and files, and index it",
            usage: "collection add PATH... [--name NAME] [--mask GLOB] [--context TEXT]",
            discussion: """
                The mask is matched against each file's path relative to its folder: '*' within
                a name, '**/' any number of folders, '?' one character, [a-z] a set, {md,txt}
                alternatives. The default, '\(Glob.defaultPattern)', takes every
                format trove reads; a file of another extension is read as text. Hidden files
                and folders are always skipped, and so are binary files. NAME defaults to the
                first folder's name.
                """,
            options: [
                OptionSpec("name", short: "n", value: "NAME", help: "name of the new collection"),
                OptionSpec(
                    "mask", value: "GLOB",
                    help: "which files under the folders (default: every readable format)"),
                OptionSpec(
                    "context", value: "TEXT", help: "said with every result of the collection"),
                OptionSpec("quiet", short: "q", help: "no progress bar and no summary line"),
            ] + Commands.model + Commands.database + Commands.common,
            positionals: (1, nil),
            examples: [
                (
                    "trove collection add ~/notes --name notes --mask '**/*.md' --context \"Personal notes\"",
                    "the Markdown files under ~/notes, indexed now and by every 'trove index'"
                ),
                (
                    "trove collection add ~/work/wiki ~/work/meetings --name work",
                    "two folders, one collection"
                ),
            ])

        var paths: [String]
        var name: String?
        var mask: Glob
        /// `--context`, trimmed; nil when empty.
        var note: String?

        init(parsing arguments: ParsedArguments) throws {
            paths = arguments.positionals
            name = arguments.value("name")
            if let name { try NoteCollection.validate(name: name, command: "collection add") }
            mask = try arguments.value("mask").map(Glob.init) ?? .standard
            let text = arguments.value("context")?.trimmingCharacters(in: .whitespacesAndNewlines)
            note = text?.isEmpty == false ? text : nil
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await CollectionCommand.add(self, context: context)
        }
    }

    /// `trove collection list`.
    struct List: TroveCommand {
        static let configuration = CommandSpec(
            name: "collection list", aliases: ["ls"],
            summary: "names, folders, masks, contexts and sizes of the collections",
            usage: "collection list [--json]", options: Commands.database + Commands.common,
            examples: [("trove collection list", "names, folders, masks, contexts and sizes")])

        init() {}
        init(parsing arguments: ParsedArguments) throws {}

        func run(_ context: CommandContext) async throws -> Int32 {
            try await CollectionCommand.list(context)
        }
    }

    /// `trove collection remove NAME`.
    struct Remove: TroveCommand {
        static let configuration = CommandSpec(
            name: "collection remove", aliases: ["rm"],
            summary: "delete a collection and its records (the others stay)",
            usage: "collection remove NAME", options: Commands.database + Commands.common,
            positionals: (1, 1),
            examples: [("trove collection remove job", "delete it and its records")])

        var name: String

        init(parsing arguments: ParsedArguments) throws { name = arguments.positionals[0] }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await CollectionCommand.remove(name, context: context)
        }
    }

    /// `trove collection rename OLD NEW`.
    struct Rename: TroveCommand {
        static let configuration = CommandSpec(
            name: "collection rename", aliases: ["mv"],
            summary: "rename a collection and relabel its records",
            usage: "collection rename OLD NEW", options: Commands.database + Commands.common,
            positionals: (2, 2),
            examples: [("trove collection rename work job", "rename it; its records follow")])

        var old: String
        var new: String

        init(parsing arguments: ParsedArguments) throws {
            (old, new) = (arguments.positionals[0], arguments.positionals[1])
            try NoteCollection.validate(name: new, command: "collection rename")
        }

        func run(_ context: CommandContext) async throws -> Int32 {
            try await CollectionCommand.rename(old, to: new, context: context)
        }
    }

    /// The error for a collection name that does not exist, listing those that do.
    static func unknown(_ name: String, among collections: [NoteCollection], command: String)
        -> CLIError
    {
        let names = collections.map(\.name)
        var message = "no collection named '\(name)'"
        message +=
            names.isEmpty
            ? " (there are none yet)" : "; collections: \(names.joined(separator: ", "))"
        if let guess = ArgumentParser.closest(to: name, among: names) {
            message += "; did you mean '\(guess)'?"
        }
        return CLIError.notFound(message)
    }

    static func add(_ command: Add, context: CommandContext) async throws -> Int32 {
        let paths = try command.paths.map { try IndexCommand.checkedPath($0, context: context) }
        let name = command.name ?? (paths[0] as NSString).lastPathComponent
        try NoteCollection.validate(name: name, command: "collection add")
        let path = try context.databasePath()
        let embedders = try await context.loadEmbedders(forDatabaseAt: path)
        let chunker = try context.chunker(for: embedders[0], maxTokens: Chunker.defaultMaxTokens)
        let notebook = try await Notebook.openForWriting(
            path: path, embedders: embedders, context: context)
        if try await notebook.collection(named: name) != nil {
            throw CLIError.targetExists(
                "a collection named '\(name)' exists; choose another --name, or 'trove collection remove \(name)' first"
            )
        }
        let collection = NoteCollection(
            name: name,
            paths: paths.enumerated().filter { !paths[..<$0.offset].contains($0.element) }.map(
                \.element),
            mask: command.mask, context: command.note)
        try await notebook.save(collection)

        let started = Date()
        let indexer = Indexer(
            notebook: notebook, embedders: embedders, chunker: chunker, context: context)
        var summary = IndexSummary()
        try await indexer.refresh([collection], into: &summary)
        if summary.added + summary.updated + summary.removed > 0 {
            try await notebook.database.mergeTextIndexes()
        }
        summary.seconds = Date().timeIntervalSince(started)
        try IndexCommand.report(summary, collections: [collection], path: path, context: context)
        return summary.failed > 0 ? ExitCode.failure : ExitCode.success
    }

    /// What `trove collection list --json` prints and the list_collections tool returns (no
    /// collections when there is no database yet).
    static func listing(_ context: CommandContext) async throws -> CollectionListResult {
        let path = try context.databasePath()
        guard FileManager.default.fileExists(atPath: path) else {
            return CollectionListResult(collections: [])
        }
        let notebook = try await Notebook.openExisting(
            path: path, embedders: nil, context: context)
        let counts = try await notebook.collectionCounts()
        return CollectionListResult(
            collections: try await notebook.collections().map { collection in
                CollectionListResult.Item(
                    name: collection.name, paths: collection.paths, mask: collection.mask.pattern,
                    context: collection.context, files: counts[collection.name]?.files ?? 0,
                    records: counts[collection.name]?.records ?? 0)
            })
    }

    static func list(_ context: CommandContext) async throws -> Int32 {
        let result = try await Self.listing(context)
        if context.json {
            try context.printJSON(result)
            return ExitCode.success
        }
        let collections = result.collections
        guard !collections.isEmpty else {
            context.console.err.write(
                "no collections yet; add one with 'trove collection add PATH --name NAME'\n")
            return ExitCode.success
        }
        let style = context.style
        let environment = context.console.environment
        var text = ""
        for collection in collections {
            text +=
                "\(style.bold(collection.name))  \(style.dim("\(collection.files) files, \(collection.records) records"))\n"
            if let note = collection.context { text += "  context  \(note)\n" }
            text += "  mask     \(collection.mask)\n"
            for folder in collection.paths {
                text +=
                    "  path     "
                    + SearchCommand.displayPath(
                        folder, environment: environment, currentDirectory: "/") + "\n"
            }
        }
        context.console.out.write(text)
        return ExitCode.success
    }

    static func remove(_ name: String, context: CommandContext) async throws -> Int32 {
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let collections = try await notebook.collections()
        guard collections.contains(where: { $0.name == name }) else {
            throw unknown(name, among: collections, command: "collection")
        }
        let removed = try await notebook.removeCollection(named: name)
        if context.json {
            try context.printJSON(CollectionRemoved(removed: name, records: removed))
        } else {
            context.console.err.write(
                "removed collection '\(name)' and its \(removed) record\(removed == 1 ? "" : "s")\n"
            )
        }
        return ExitCode.success
    }

    static func rename(_ old: String, to new: String, context: CommandContext) async throws -> Int32
    {
        try NoteCollection.validate(name: new, command: "collection")
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let collections = try await notebook.collections()
        guard collections.contains(where: { $0.name == old }) else {
            throw unknown(old, among: collections, command: "collection")
        }
        guard !collections.contains(where: { $0.name == new }) else {
            throw CLIError.targetExists("a collection named '\(new)' exists already")
        }
        try await notebook.renameCollection(old, to: new)
        if context.json {
            try context.printJSON(CollectionRenamed(renamed: old, to: new))
        } else {
            context.console.err.write("renamed collection '\(old)' to '\(new)'\n")
        }
        return ExitCode.success
    }
}
