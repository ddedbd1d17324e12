import Foundation
import Trove

/// The tools `trove mcp` offers, their JSON Schemas, and how a call becomes the same work the
/// commands do: each tool decodes its arguments (``ToolArguments``) into the command value its
/// command line makes (a ``SearchCommand``, a ``GetCommand``, an ``IndexCommand``…) and returns
/// the result type that command prints with `--json` (``SearchResults``, ``GetResult``,
/// ``StatsResult``…), so a tool and its command answer the same request with the same JSON.
enum MCPTools {
    /// One tool the server offers: its declaration (name, schemas) and the code a call runs.
    struct Tool: Sendable {
        let name: String
        let declaration: JSONValue
        /// Whether it writes to the database (offered only with `--allow-index`).
        let writes: Bool
        /// Checks and decodes the arguments, runs, and returns the result's JSON.
        let run: @Sendable (JSONValue?, MCPServer) async throws -> JSONValue

        /// A tool whose input schema is its arguments type's and whose structured content is
        /// the JSON of its result, the same value its command prints with `--json`.
        init<Arguments: ToolArguments, Result: Encodable & Sendable>(
            _ name: String, title: String, description: String, arguments: Arguments.Type,
            output: JSONValue, writes: Bool = false,
            run: @escaping @Sendable (Arguments, MCPServer) async throws -> Result
        ) {
            self.name = name
            self.writes = writes
            declaration = .object([
                ("name", .string(name)), ("title", .string(title)),
                ("description", .string(description)),
                ("inputSchema", Arguments.inputSchema), ("outputSchema", output),
                (
                    "annotations",
                    .object([
                        ("readOnlyHint", .bool(!writes)), ("destructiveHint", .bool(false)),
                        ("idempotentHint", .bool(true)), ("openWorldHint", .bool(false)),
                    ])
                ),
            ])
            self.run = { json, server in
                try JSONOutput.value(try await run(try Arguments(arguments: json), server))
            }
        }
    }

    /// Every tool, in the order `tools/list` gives them: the one table that the server's list,
    /// its dispatch and `trove mcp --help` are read from.
    static let table: [Tool] = [search, get, multiGet, listCollections, listSources, status, index]

    /// The tools a server started with or without `--allow-index` offers.
    static func offered(allowIndex: Bool) -> [Tool] {
        table.filter { allowIndex || !$0.writes }
    }

    static func names(allowIndex: Bool) -> [String] {
        offered(allowIndex: allowIndex).map(\.name)
    }

    /// The tools lines of `trove mcp --help`, from the table: the read-only tools, then those
    /// offered only with `--allow-index` on a line of their own.
    static var helpLine: String {
        let writing = table.filter(\.writes).map(\.name)
        return "Tools: " + names(allowIndex: false).joined(separator: ", ")
            + (writing.isEmpty
                ? "." : ";\n" + writing.joined(separator: ", ") + " only with --allow-index.")
    }

    // MARK: Declarations

    static func declarations(allowIndex: Bool) -> [JSONValue] {
        offered(allowIndex: allowIndex).map(\.declaration)
    }

    private static let noteIdentity: [(String, JSONValue)] = [
        ("path", JSONSchema.string("absolute path of the file the note was indexed from")),
        (
            "document_id",
            JSONSchema.string("the document's id inside a .jsonl file", nullable: true)
        ),
        ("short_id", JSONSchema.string("# and 8 hex digits; give it to get")),
    ]

    static let search = Tool(
        "search", title: "Search notes",
        description:
            "Find notes by meaning and by words. Returns the best chunk of each matching note with its "
            + "path, short_id (for get), score and text; the same results as `trove search --json`.",
        arguments: SearchToolArguments.self,
        output: JSONSchema.object(
            [
                ("query", JSONSchema.string()), ("mode", JSONSchema.string()),
                ("k", JSONSchema.integer(nullable: true)),
                ("min_score", JSONSchema.number()),
                (
                    "results",
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                ("rank", JSONSchema.integer()),
                                ("id", JSONSchema.string("record id (a UUID)")),
                                ("score", JSONSchema.number("calibrated relevance, 0 to 1")),
                                ("source", JSONSchema.string()),
                                ("title", JSONSchema.string(nullable: true)),
                                (
                                    "short_id",
                                    JSONSchema.string(
                                        "the note's short id, for get", nullable: true)
                                ),
                                ("collection", JSONSchema.string(nullable: true)),
                                (
                                    "context",
                                    JSONSchema.string(
                                        "the collection's context: what its notes are",
                                        nullable: true)
                                ),
                                ("metadata", JSONSchema.any),
                                ("vector_rank", JSONSchema.integer(nullable: true)),
                                ("text_rank", JSONSchema.integer(nullable: true)),
                                ("distance", JSONSchema.number(nullable: true)),
                                ("bm25", JSONSchema.number(nullable: true)),
                                ("fused_score", JSONSchema.number("the fusion's own score")),
                                ("legs", JSONSchema.array(JSONSchema.any)),
                                ("content", JSONSchema.string("the matching chunk's text")),
                            ], required: ["rank", "id", "score", "source", "content"]))
                ),
            ], required: ["query", "mode", "k", "results"]), run: runSearch)

    static let get = Tool(
        "get", title: "Get a note",
        description:
            "Print one note whole, or lines from_line to to_line (counted from 1). The note is a path, "
            + "a #short_id from search results, or a record id.",
        arguments: GetToolArguments.self,
        output: JSONSchema.object(
            noteIdentity + [
                ("source", JSONSchema.string()), ("from_line", JSONSchema.integer()),
                ("to_line", JSONSchema.integer()),
                ("lines", JSONSchema.integer("lines in the whole note")),
                (
                    "origin",
                    JSONSchema.string(
                        "file: read from disk now; index: the indexed text",
                        choices: ["file", "index"])
                ),
                (
                    "collections",
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                ("name", JSONSchema.string()),
                                (
                                    "context",
                                    JSONSchema.string(
                                        "what the collection's notes are", nullable: true)
                                ),
                            ],
                            required: ["name", "context"]),
                        "the collections holding the note")
                ),
                ("text", JSONSchema.string()),
            ], required: ["path", "short_id", "from_line", "to_line", "lines", "text"]), run: runGet
    )

    static let multiGet = Tool(
        "multi_get", title: "Get several notes",
        description:
            "Several notes by glob pattern (*, ** and ? over paths, e.g. '**/journal/2025-*.md') and/or a "
            + "list of paths or short ids, in path order within max_bytes of text: the first note that does not fit is cut "
            + "at a line end, the rest are listed in left_out.",
        arguments: MultiGetToolArguments.self,
        output: JSONSchema.object(
            [
                ("max_bytes", JSONSchema.integer()), ("bytes", JSONSchema.integer()),
                (
                    "notes",
                    JSONSchema.array(
                        JSONSchema.object(
                            noteIdentity + [
                                ("bytes", JSONSchema.integer()),
                                ("total_bytes", JSONSchema.integer()),
                                ("cut", JSONSchema.boolean()), ("text", JSONSchema.string()),
                            ],
                            required: ["path", "short_id", "bytes", "total_bytes", "cut", "text"]))
                ),
                (
                    "left_out",
                    JSONSchema.array(
                        JSONSchema.object(
                            noteIdentity + [("total_bytes", JSONSchema.integer())],
                            required: ["path", "short_id", "total_bytes"]))
                ),
            ], required: ["max_bytes", "bytes", "notes", "left_out"]), run: runMultiGet)

    static let listCollections = Tool(
        "list_collections", title: "List collections",
        description:
            "The named collections of notes: folders, file mask, context (what the notes are), files and records "
            + "(as `trove collection list --json`). Give a name to search's collection argument.",
        arguments: NoArguments.self,
        output: JSONSchema.object(
            [
                (
                    "collections",
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                ("name", JSONSchema.string()),
                                ("paths", JSONSchema.array(JSONSchema.string())),
                                ("mask", JSONSchema.string()),
                                ("context", JSONSchema.string(nullable: true)),
                                ("files", JSONSchema.integer()), ("records", JSONSchema.integer()),
                            ], required: ["name", "paths", "context", "records"]))
                )
            ], required: ["collections"]), run: runListCollections)

    static let listSources = Tool(
        "list_sources", title: "List sources",
        description:
            "Every source (an indexed file, or a .jsonl document's own source) with its number of records.",
        arguments: NoArguments.self,
        output: JSONSchema.object(
            [
                (
                    "sources",
                    JSONSchema.array(
                        JSONSchema.object(
                            [
                                ("source", JSONSchema.string()), ("records", JSONSchema.integer()),
                                ("last_updated", JSONSchema.string()),
                            ],
                            required: ["source", "records"]))
                )
            ], required: ["sources"]), run: runListSources)

    static let status = Tool(
        "status", title: "Database status",
        description:
            "The database: records, sources, files, models, index, collections and when it was last indexed "
            + "(as `trove stats --json`).",
        arguments: NoArguments.self,
        output: JSONSchema.object(
            [
                ("database", JSONSchema.string()),
                ("file_bytes", JSONSchema.integer("size of the database file")),
                ("records", JSONSchema.integer()), ("sources", JSONSchema.integer()),
                ("files", JSONSchema.integer()),
                ("dimension", JSONSchema.integer("the first model's vector length")),
                ("metric", JSONSchema.string()), ("index", JSONSchema.string()),
                ("lexical_search", JSONSchema.boolean("whether words are indexed (BM25)")),
                ("tokenizer", JSONSchema.string()), ("model", JSONSchema.any),
                ("vector_fields", JSONSchema.array(JSONSchema.any, "one per model")),
                ("collections", JSONSchema.array(JSONSchema.string())),
                (
                    "encryption",
                    JSONSchema.string("the cipher; null when not encrypted", nullable: true)
                ),
                ("last_indexed", JSONSchema.string("ISO 8601, UTC", nullable: true)),
            ], required: ["database", "records", "sources", "files", "index", "vector_fields"]),
        run: runStatus)

    static let index = Tool(
        "index", title: "Index files",
        description:
            "Refresh every collection (no arguments), or add files and folders to the default collection "
            + "(as `trove index [PATH...]`): unchanged files are skipped, changed ones replaced, vanished ones removed.",
        arguments: IndexToolArguments.self,
        output: JSONSchema.object(
            [
                ("added", JSONSchema.integer()), ("updated", JSONSchema.integer()),
                ("removed", JSONSchema.integer()),
                ("unchanged", JSONSchema.integer()), ("failed", JSONSchema.integer()),
                ("skipped", JSONSchema.integer("binary files passed over")),
                ("chunks", JSONSchema.integer()), ("seconds", JSONSchema.number()),
                ("collections", JSONSchema.array(JSONSchema.string(), "the collections refreshed")),
                ("database", JSONSchema.string()),
            ], required: ["added", "updated", "removed", "unchanged", "failed"]), writes: true,
        run: runIndex)

    // MARK: Calls

    /// Runs one tool; failures become a result with `isError` and the message.
    static func call(_ name: String, arguments: JSONValue?, server: MCPServer) async -> JSONValue {
        do {
            guard let tool = table.first(where: { $0.name == name }) else {
                throw ToolError("unknown tool '\(name)'")
            }
            let structured = try await tool.run(arguments, server)
            return .object([
                (
                    "content",
                    .array([
                        .object([
                            ("type", .string("text")), ("text", .string(structured.serialized())),
                        ])
                    ])
                ),
                ("structuredContent", structured), ("isError", .bool(false)),
            ])
        } catch {
            let message: String
            switch error {
            case let error as ToolError: message = error.message
            case let error as CLIError:
                // The command's message without its pointer to `--help`, which the model cannot run.
                if case .usage(let text, _) = error {
                    message = text
                } else {
                    message = error.message
                }
            default: message = TroveCommandLine.describe(error)
            }
            return .object([
                (
                    "content",
                    .array([.object([("type", .string("text")), ("text", .string(message))])])
                ),
                ("isError", .bool(true)),
            ])
        }
    }

    /// A context for running `command` with the server's database and environment; anything
    /// a command would print on stdout is dropped, since stdout carries only protocol messages.
    private static func commandContext(
        _ command: any TroveCommand.Type, server: MCPServer, quiet: Bool = false
    ) -> CommandContext {
        var console = server.context.console
        console.out = BufferSink()
        var options = server.context.options
        // Quiet: no progress bar and no summary line on the server's stderr.
        (options.json, options.quiet) = (false, quiet)
        return CommandContext(
            console: console, spec: command.configuration, options: options,
            services: server.context.services)
    }

    private static func runSearch(_ arguments: SearchToolArguments, _ server: MCPServer)
        async throws -> SearchResults<SearchHit>
    {
        let search = try arguments.command()
        let context = commandContext(SearchCommand.self, server: server)
        let (notebook, embedders, modelError) = try await server.notes.open()
        if search.mode != .text, let modelError { throw modelError }
        return search.report(
            try await search.results(
                notebook: notebook, embedders: embedders ?? [], context: context))
    }

    private static func runGet(_ arguments: GetToolArguments, _ server: MCPServer) async throws
        -> GetResult
    {
        let get = try arguments.command()
        let context = commandContext(GetCommand.self, server: server)
        let notebook = try await server.notes.open().notebook
        return try await NoteRetrieval.get(
            get.reference, range: get.range, notebook: notebook, context: context
        ).result
    }

    private static func runMultiGet(_ arguments: MultiGetToolArguments, _ server: MCPServer)
        async throws -> MultiGetResult
    {
        let multiGet = try arguments.command()
        let context = commandContext(MultiGetCommand.self, server: server)
        let notebook = try await server.notes.open().notebook
        return try await NoteRetrieval.multiGet(
            multiGet.patterns, maxBytes: multiGet.maxBytes, notebook: notebook, context: context
        ).result
    }

    private static func runListCollections(_ arguments: NoArguments, _ server: MCPServer)
        async throws -> CollectionListResult
    {
        try await CollectionCommand.listing(
            commandContext(CollectionCommand.List.self, server: server))
    }

    private static func runListSources(_ arguments: NoArguments, _ server: MCPServer)
        async throws -> SourceListResult
    {
        let notebook = try await server.notes.open().notebook
        return SourceListResult(
            sources: try await notebook.collection.sources().map {
                SourceListResult.Source(
                    source: $0.source, records: $0.count, lastUpdated: $0.lastUpdated)
            })
    }

    private static func runStatus(_ arguments: NoArguments, _ server: MCPServer) async throws
        -> StatsResult
    {
        try await StatsCommand.result(try await server.notes.open().notebook)
    }

    private static func runIndex(_ arguments: IndexToolArguments, _ server: MCPServer)
        async throws -> IndexResult
    {
        let index = try arguments.command()
        // One writer at a time; searches in flight keep reading the committed state.
        let result = try await index.result(
            commandContext(IndexCommand.self, server: server, quiet: true))
        await server.notes.reopen()
        return result
    }
}

/// What the MCP list_sources tool returns: every source with its number of records.
struct SourceListResult: Codable, Equatable, Sendable {
    var sources: [Source]

    struct Source: Codable, Equatable, Sendable {
        /// An indexed file, or a .jsonl document's own source.
        var source: String
        var records: Int
        /// When its newest record was written (ISO 8601, UTC).
        var lastUpdated: Date

        enum CodingKeys: String, CodingKey {
            case source, records
            case lastUpdated = "last_updated"
        }
    }
}
