import Foundation
import Trove

extension Commands {
    static let collection = CommandSpec(
        name: "collection",
        summary: "named collections of folders, each with a file mask and a context",
        usage: """
            collection add PATH... [--name NAME] [--mask GLOB] [--context TEXT]
                   trove collection list | remove NAME | rename OLD NEW
            """,
        discussion: """
            A collection is a name for some folders (and single files) of one database, with a
            glob mask choosing the files under its folders and a context string that every
            search result from it carries (for people and for assistants: "Personal notes",
            "Work wiki, 2024 onwards"). 'add' creates a collection and indexes it; 'trove
            index' refreshes every collection; 'trove search -c NAME' searches some of them.
            'remove' deletes a collection and its records (the others stay); 'rename' renames
            it and relabels its records.

            The mask is matched against each file's path relative to its folder: '*' within a
            name, '**/' any number of folders, '?' one character, [a-z] a set, {md,txt}
            alternatives. The default, '\(Glob.defaultPattern)', takes every
            format trove reads; a file of another extension is read as text. Hidden files and
            folders are always skipped, and so are binary files. NAME defaults to the first
            folder's name.
            """,
        options: [
            OptionSpec("name", short: "n", value: "NAME", help: "name of the new collection (add)"),
            OptionSpec(
                "mask", value: "GLOB",
                help: "which files under the folders (add; default: every readable format)"),
            OptionSpec(
                "context", value: "TEXT", help: "said with every result of the collection (add)"),
            OptionSpec("quiet", short: "q", help: "no progress bar and no summary line (add)"),
        ] + model + database + common,
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
            ("trove collection list", "names, folders, masks, contexts and sizes"),
            ("trove collection rename work job", "rename it; its records follow"),
            ("trove collection remove job", "delete it and its records"),
        ])
}

/// `trove collection add | list | remove | rename`.
enum CollectionCommand {
    static func run(_ context: CommandContext) async throws -> Int32 {
        let words = context.arguments.positionals
        let action = words[0]
        let rest = Array(words.dropFirst())
        let addOnly = ["name", "mask", "context"].filter { context.arguments.value($0) != nil }
        if action != "add", let option = addOnly.first {
            throw CLIError.usage("--\(option) goes with 'collection add'", command: "collection")
        }
        switch action {
        case "add": return try await add(rest, context: context)
        case "list", "ls":
            try expect(rest, count: 0, usage: "collection list")
            return try await list(context)
        case "remove", "rm":
            try expect(rest, count: 1, usage: "collection remove NAME")
            return try await remove(rest[0], context: context)
        case "rename", "mv":
            try expect(rest, count: 2, usage: "collection rename OLD NEW")
            return try await rename(rest[0], to: rest[1], context: context)
        default:
            var message = "unknown collection action '\(action)': use add, list, remove or rename"
            if let guess = ArgumentParser.closest(
                to: action, among: ["add", "list", "remove", "rename"])
            {
                message += "; did you mean '\(guess)'?"
            }
            throw CLIError.usage(message, command: "collection")
        }
    }

    private static func expect(_ words: [String], count: Int, usage: String) throws {
        guard words.count == count else {
            throw CLIError.usage("usage: trove \(usage)", command: "collection")
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

    static func add(_ raw: [String], context: CommandContext) async throws -> Int32 {
        guard !raw.isEmpty else {
            throw CLIError.usage("collection add needs at least one PATH", command: "collection")
        }
        let paths = try raw.map { try IndexCommand.checkedPath($0, context: context) }
        let name = context.arguments.value("name") ?? (paths[0] as NSString).lastPathComponent
        try NoteCollection.validate(name: name, command: "collection")
        let mask = try context.arguments.value("mask").map(Glob.init) ?? .standard
        let text = context.arguments.value("context")?.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let path = try context.databasePath()
        let embedders = try await context.loadEmbedders(forDatabaseAt: path)
        let chunker = try context.chunker(for: embedders[0])
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
            mask: mask,
            context: text?.isEmpty == false ? text : nil)
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
        IndexCommand.report(summary, collections: [collection], path: path, context: context)
        return summary.failed > 0 ? ExitCode.failure : ExitCode.success
    }

    static func list(_ context: CommandContext) async throws -> Int32 {
        let path = try context.databasePath()
        var collections: [NoteCollection] = []
        var counts: [String: (records: Int, files: Int)] = [:]
        if FileManager.default.fileExists(atPath: path) {
            let notebook = try await Notebook.openExisting(
                path: path, embedders: nil, context: context)
            collections = try await notebook.collections()
            counts = try await notebook.collectionCounts()
        }
        if context.json {
            let items: [JSONValue] = collections.map { collection in
                .object([
                    ("name", .string(collection.name)),
                    ("paths", .array(collection.paths.map(JSONValue.string))),
                    ("mask", .string(collection.mask.pattern)),
                    ("context", collection.context.map(JSONValue.string) ?? .null),
                    ("files", .int(Int64(counts[collection.name]?.files ?? 0))),
                    ("records", .int(Int64(counts[collection.name]?.records ?? 0))),
                ])
            }
            context.console.out.write(
                JSONValue.object([("collections", .array(items))]).serialized() + "\n")
            return ExitCode.success
        }
        guard !collections.isEmpty else {
            context.console.err.write(
                "no collections yet; add one with 'trove collection add PATH --name NAME'\n")
            return ExitCode.success
        }
        let style = context.style
        let environment = context.console.environment
        var text = ""
        for collection in collections {
            let count = counts[collection.name] ?? (0, 0)
            text +=
                "\(style.bold(collection.name))  \(style.dim("\(count.files) files, \(count.records) records"))\n"
            if let note = collection.context { text += "  context  \(note)\n" }
            text += "  mask     \(collection.mask.pattern)\n"
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
            context.console.out.write(
                JSONValue.object([("removed", .string(name)), ("records", .int(Int64(removed)))])
                    .serialized() + "\n")
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
            context.console.out.write(
                JSONValue.object([("renamed", .string(old)), ("to", .string(new))]).serialized()
                    + "\n")
        } else {
            context.console.err.write("renamed collection '\(old)' to '\(new)'\n")
        }
        return ExitCode.success
    }
}
