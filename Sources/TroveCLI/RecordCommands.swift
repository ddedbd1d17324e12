import Foundation
import Trove
import TroveEmbeddings

/// `trove embed`: the embedding of each text.
struct EmbedCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "embed",
        summary: "print the embedding of each text (arguments, or lines on stdin)",
        usage: "embed [options] [TEXT...]",
        discussion: """
            Each argument is one text; with no argument (or '-') each line of stdin is one text.
            Vectors come from the built-in all-MiniLM-L6-v2 model (384 numbers, unit length), or
            the model given with --model (multilingual-e5-small: passage vectors, "passage: "
            before each text; with --query, query vectors, "query: "). With --json the output is
            one JSON array per text, one per line, each number printed with enough digits to
            read back the exact Float.
            """,
        options: [
            OptionSpec(
                "query", help: "embed the texts as search queries (models with a query prefix)")
        ] + Commands.model + Commands.common,
        positionals: (0, nil),
        examples: [
            ("trove embed --json \"buy oat milk\"", "one JSON array on stdout"),
            ("cut -f2 titles.tsv | trove embed --json > vectors.jsonl", "one line per input line"),
            (
                "trove embed --model multilingual-e5-small --query --json \"数据库\"",
                "a multilingual query vector"
            ),
        ])

    var texts: [String]
    /// `--query`: embed as search queries.
    var asQueries: Bool

    init(parsing arguments: ParsedArguments) throws {
        texts = arguments.positionals
        asQueries = arguments.flag("query")
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        var texts = texts
        if texts.isEmpty || texts == ["-"] {
            if context.console.stdinIsTerminal {
                context.console.err.write(
                    "trove: reading texts from stdin, one per line; end with Ctrl-D\n")
            }
            guard let input = context.console.readStandardInput() else {
                throw CLIError.usage(
                    "no text given: pass TEXT arguments or lines on stdin", command: "embed")
            }
            var lines = input.split(separator: "\n", omittingEmptySubsequences: false).map {
                String($0.hasSuffix("\r") ? $0.dropLast() : $0)
            }
            if lines.last == "" { lines.removeLast() }  // the newline ending the last line
            texts = lines
        }
        guard !texts.isEmpty else {
            throw CLIError.usage(
                "no text given: pass TEXT arguments or lines on stdin", command: "embed")
        }
        let embedder = try context.loadEmbedder()
        // Batches bound memory on long inputs; output streams as each batch finishes.
        var start = 0
        while start < texts.count {
            let end = min(start + 256, texts.count)
            let batch = Array(texts[start..<end])
            let vectors =
                try await asQueries ? embedder.embedQueries(batch) : embedder.embed(batch)
            var out = ""
            for vector in vectors {
                if context.json {
                    out += try JSONOutput.text(vector) + "\n"
                } else {
                    out +=
                        vector.map { JSONValue.float($0).serialized() }.joined(separator: " ")
                        + "\n"
                }
            }
            context.console.out.write(out)
            start = end
        }
        return ExitCode.success
    }
}

/// `trove show`: one record.
struct ShowCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "show",
        summary: "print one record: text, source, metadata",
        usage: "show [options] ID",
        options: Commands.database + Commands.common,
        positionals: (1, 1),
        examples: [("trove show 42", "the record with id 42"), ("trove show --json 42", "as JSON")])

    var id: String

    init(parsing arguments: ParsedArguments) throws { id = arguments.positionals[0] }

    func run(_ context: CommandContext) async throws -> Int32 {
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let id = try Self.recordID(
            id, kind: notebook.collection.configuration.ids, command: "show")
        guard let entry = try await notebook.collection.fetch(id: id) else {
            throw CLIError.notFound("no record with id \(id)")
        }
        let metadata = entry.metadata.flatMap { try? JSONValue.parse($0) } ?? .null
        if context.json {
            try context.printJSON(
                RecordResult(
                    id: JSONValue(entry.id), source: entry.source,
                    metadata: metadata == .null ? nil : metadata, content: entry.content,
                    dimension: entry.vector.count))
            return ExitCode.success
        }
        let style = context.style
        var text = "\(style.bold("id")):       \(entry.id)\n"
        text += "\(style.bold("source")):   \(entry.source)\n"
        if metadata != .null { text += "\(style.bold("metadata")): \(metadata.serialized())\n" }
        text += "\n" + entry.content + (entry.content.hasSuffix("\n") ? "" : "\n")
        context.console.out.write(text)
        return ExitCode.success
    }

    /// A record id as typed: a UUID (notes databases made or migrated by this version), or a
    /// whole number in an older database opened read-only.
    static func recordID(_ text: String, kind: IDKind, command: String) throws -> DocumentID {
        switch kind {
        case .uuid:
            guard let id = UUID(uuidString: text) else {
                throw CLIError.usage(
                    "'\(text)' is not a record id (a UUID, as search --json shows)",
                    command: command)
            }
            return .uuid(id)
        case .string:
            return .string(text)
        case .int64:
            guard let id = Int64(text) else {
                throw CLIError.usage(
                    "'\(text)' is not a record id (a whole number)", command: command)
            }
            return .int(id)
        }
    }

}

/// `trove rm`: records by id, or every record of a source.
struct RemoveCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "rm",
        summary: "remove records by id, or every record of a source",
        usage: "rm [options] (--source S | ID...)",
        discussion: """
            Removing a file's records also forgets its content hash, so the next 'trove index'
            adds it again if it still exists.
            """,
        options: [OptionSpec("source", short: "s", value: "S", help: "remove every record of S")]
            + Commands.database + Commands.common,
        positionals: (0, nil),
        examples: [
            ("trove rm 42 43", "remove two records"),
            ("trove rm --source ~/notes/old.md", "remove every chunk of one file"),
        ])

    /// `--source`: every record of this source.
    var source: String?
    var ids: [String]

    init(parsing arguments: ParsedArguments) throws {
        source = arguments.value("source")
        ids = arguments.positionals
        if source != nil, !ids.isEmpty {
            throw CLIError.usage("give either --source or record ids, not both", command: "rm")
        }
        if source == nil, ids.isEmpty {
            throw CLIError.usage("nothing to remove: give record ids or --source S", command: "rm")
        }
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let notebook = try await Notebook.openExisting(
            path: try context.databasePath(), embedders: nil, context: context)
        let numbers = try ids.map {
            try ShowCommand.recordID($0, kind: notebook.collection.configuration.ids, command: "rm")
        }

        let removed: Int
        if let source {
            let resolved = try await SearchCommand.resolveSource(
                source, context: context, notebook: notebook)!
            let files = try await notebook.files(ofSource: resolved)
            removed = try await notebook.inTransaction {
                let count = try await notebook.collection.delete(where: .source(resolved))
                try await notebook.forget(files: files)
                return count
            }
            if removed == 0 { throw CLIError.notFound("no records with source \(source)") }
        } else {
            // All or nothing: every id must exist before any is removed.
            for id in numbers {
                if try await !notebook.collection.contains(id: id) {
                    throw CLIError.notFound("no record with id \(id) (nothing was removed)")
                }
            }
            let files = try await notebook.files(ofRecords: numbers)
            removed = try await notebook.inTransaction {
                var count = 0
                for id in Set(numbers) {
                    if try await notebook.collection.delete(id: id) { count += 1 }
                }
                // The file lost part of its records: forget its hash so `index` rewrites it.
                try await notebook.forget(files: files)
                return count
            }
        }
        if context.json {
            try context.printJSON(RemovedRecords(removed: removed))
        } else {
            context.console.err.write("removed \(removed) record\(removed == 1 ? "" : "s")\n")
        }
        return ExitCode.success
    }
}

/// `trove stats`: records, sources, file size, model and index.
struct StatsCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "stats",
        summary: "records, sources, file size, model and index of the database",
        usage: "stats [options]",
        options: Commands.database + Commands.common,
        examples: [("trove stats", "a short report"), ("trove stats --json", "for scripts")])

    init(parsing arguments: ParsedArguments) throws {}

    /// A model's short name: the built-in name (all-MiniLM-L6-v2, multilingual-e5-small), else
    /// its id.
    static func modelName(_ manifest: EmbeddingManifest) -> String {
        BuiltInModel(manifest: manifest)?.rawValue ?? manifest.modelID
    }

    /// `1.2 MB`-style sizes (powers of 1000, as file managers show them).
    static func byteCount(_ bytes: Int64) -> String {
        let units = ["bytes", "KB", "MB", "GB", "TB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1000, unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        return unit == 0 ? "\(bytes) bytes" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// What `trove stats --json` prints and the MCP status tool returns: records, sources,
    /// files, the model, the index, and when a file was last indexed.
    static func result(_ notebook: Notebook) async throws -> StatsResult {
        let configuration = notebook.collection.configuration
        let lastIndexed = try await notebook.database.query(
            "SELECT max(indexed_at) AS at FROM \(Notebook.filesTable)"
        ).first?.double("at")
        let fields = Notebook.vectorFields(configuration)
        return StatsResult(
            database: notebook.path, fileBytes: notebook.database.fileSize(),
            records: try await notebook.collection.count(),
            sources: try await notebook.collection.sources().count,
            files: try await notebook.fileCount(), dimension: configuration.dimension,
            metric: configuration.metric.rawValue,
            index: String(describing: configuration.index),
            lexicalSearch: configuration.lexicalSearch, tokenizer: configuration.tokenizer,
            model: configuration.embedding.map(StatsResult.Model.init),
            vectorFields: fields.map { field in
                StatsResult.VectorField(
                    model: field.embedding.map(Self.modelName), modelID: field.embedding?.modelID,
                    dimension: field.dimension, index: String(describing: field.index))
            },
            collections: try await notebook.collections().map(\.name),
            encryption: notebook.database.encryption?.description,
            lastIndexed: lastIndexed.map { Date(timeIntervalSince1970: $0) })
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let path = try context.databasePath()
        let notebook = try await Notebook.openExisting(path: path, embedders: nil, context: context)
        let records = try await notebook.collection.count()
        let sources = try await notebook.collection.sources()
        let files = try await notebook.fileCount()
        let size = notebook.database.fileSize()
        let configuration = notebook.collection.configuration
        let fields = Notebook.vectorFields(configuration)
        let collections = try await notebook.collections()

        if context.json {
            try context.printJSON(try await Self.result(notebook))
            return ExitCode.success
        }
        let style = context.style
        func line(_ label: String, _ value: String) -> String {
            style.bold(
                label.padding(toLength: max(10, label.count + 1), withPad: " ", startingAt: 0))
                + value + "\n"
        }
        var text = line("database", path)
        text += line("size", Self.byteCount(size))
        text += line("encrypted", notebook.database.encryption.map { "yes, \($0)" } ?? "no")
        text += line(
            "records",
            "\(records) from \(sources.count) source\(sources.count == 1 ? "" : "s") (\(files) indexed file\(files == 1 ? "" : "s"))"
        )
        for (number, field) in fields.enumerated() {
            let name = field.embedding.map(Self.modelName) ?? "no model recorded"
            text += line(
                number == 0 ? "vectors" : "",
                "\(name): \(field.dimension)-d, \(field.metric.rawValue), index: \(String(describing: field.index))"
            )
        }
        text += line(
            "text", configuration.lexicalSearch ? "FTS5 BM25 (\(configuration.tokenizer))" : "off")
        let manifests = fields.compactMap(\.embedding)
        if manifests.isEmpty { text += line("model", "none recorded") }
        for (number, manifest) in manifests.enumerated() {
            text += line(
                number == 0 ? (manifests.count == 1 ? "model" : "models") : "",
                "\(Self.modelName(manifest)) (\(manifest.modelID)), \(manifest.pooling) pooling, max \(manifest.maxSequenceLength) tokens"
            )
            text += line("", "checksum \(manifest.checksum)")
        }
        if !collections.isEmpty {
            text += line("collections", collections.map(\.name).joined(separator: ", "))
        }
        context.console.out.write(text)
        return ExitCode.success
    }
}
