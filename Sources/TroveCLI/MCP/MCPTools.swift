import Foundation
import Trove

/// The tools `trove mcp` offers, their JSON Schemas, and how a call becomes the same work the
/// commands do: a search is the same ``SearchCommand`` value `trove search` makes from its command line;
/// get and multi_get are ``NoteRetrieval``; status is `trove stats --json`; index is
/// `trove index`.
enum MCPTools {
    /// One tool the server offers: its declaration (name, schemas) and the code a call runs.
    struct Tool: Sendable {
        let declaration: JSONValue
        /// Whether it writes to the database (offered only with `--allow-index`).
        let writes: Bool
        let run: @Sendable (JSONValue?, MCPServer) async throws -> JSONValue

        var name: String { declaration["name"]?.string ?? "" }
    }

    /// Every tool, in the order `tools/list` gives them: the one table that the server's list,
    /// its dispatch and `trove mcp --help` are read from.
    static let table: [Tool] = [
        Tool(declaration: search, writes: false, run: runSearch),
        Tool(declaration: get, writes: false, run: runGet),
        Tool(declaration: multiGet, writes: false, run: runMultiGet),
        Tool(declaration: listCollections, writes: false, run: runListCollections),
        Tool(declaration: listSources, writes: false, run: runListSources),
        Tool(declaration: status, writes: false, run: runStatus),
        Tool(declaration: index, writes: true, run: runIndex),
    ]

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

    private static func tool(
        _ name: String, title: String, description: String, input: JSONValue, output: JSONValue,
        readOnly: Bool = true
    ) -> JSONValue {
        .object([
            ("name", .string(name)), ("title", .string(title)),
            ("description", .string(description)),
            ("inputSchema", input), ("outputSchema", output),
            (
                "annotations",
                .object([
                    ("readOnlyHint", .bool(readOnly)), ("destructiveHint", .bool(false)),
                    ("idempotentHint", .bool(true)), ("openWorldHint", .bool(false)),
                ])
            ),
        ])
    }

    private static let noteIdentity: [(String, JSONValue)] = [
        ("path", JSONSchema.string("absolute path of the file the note was indexed from")),
        (
            "document_id",
            JSONSchema.string("the document's id inside a .jsonl file", nullable: true)
        ),
        ("short_id", JSONSchema.string("# and 8 hex digits; give it to get")),
    ]

    static let search = tool(
        "search", title: "Search notes",
        description:
            "Find notes by meaning and by words. Returns the best chunk of each matching note with its "
            + "path, short_id (for get), score and text; the same results as `trove search --json`.",
        input: JSONSchema.closedObject(
            [
                ("query", JSONSchema.string("what to look for, in plain words")),
                (
                    "mode",
                    JSONSchema.string(
                        "hybrid (default): meaning and words; vector: meaning only; text: words only",
                        choices: ["hybrid", "vector", "text"])
                ),
                (
                    "k",
                    JSONSchema.integer("number of results (default 10)", minimum: 1, maximum: 1000)
                ),
                (
                    "min_score",
                    JSONSchema.number(
                        "leave out results whose score (a calibrated relevance from 0 to 1) is below this"
                    )
                ),
                (
                    "source",
                    JSONSchema.string(
                        "only records whose source is this (a file path for indexed files)")
                ),
                (
                    "collection",
                    JSONSchema.strings(
                        "only these collections (a name, or a list of names; see list_collections)")
                ),
                (
                    "all_chunks",
                    JSONSchema.boolean("every matching chunk instead of the best chunk per note")
                ),
            ], required: ["query"]),
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
            ], required: ["query", "mode", "k", "results"]))

    static let get = tool(
        "get", title: "Get a note",
        description:
            "Print one note whole, or lines from_line to to_line (counted from 1). The note is a path, "
            + "a #short_id from search results, or a record id.",
        input: JSONSchema.closedObject(
            [
                ("note", JSONSchema.string("a path, a short id such as #3f2a9c01, or a record id")),
                ("from_line", JSONSchema.integer("first line, from 1 (default 1)", minimum: 1)),
                (
                    "to_line",
                    JSONSchema.integer("last line, included (default: the end)", minimum: 1)
                ),
            ], required: ["note"]),
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
            ], required: ["path", "short_id", "from_line", "to_line", "lines", "text"]))

    static let multiGet = tool(
        "multi_get", title: "Get several notes",
        description:
            "Several notes by glob pattern (*, ** and ? over paths, e.g. '**/journal/2025-*.md') and/or a "
            + "list of paths or short ids, in path order within max_bytes of text: the first note that does not fit is cut "
            + "at a line end, the rest are listed in left_out.",
        input: JSONSchema.closedObject(
            [
                ("pattern", JSONSchema.string("a glob over note paths")),
                ("notes", JSONSchema.strings("paths, short ids or globs (one, or a list)")),
                (
                    "max_bytes",
                    JSONSchema.integer(
                        "byte budget for all texts (default \(NoteRetrieval.defaultMaxBytes))",
                        minimum: 1,
                        maximum: 16_777_216)
                ),
            ]),
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
            ], required: ["max_bytes", "bytes", "notes", "left_out"]))

    static let listCollections = tool(
        "list_collections", title: "List collections",
        description:
            "The named collections of notes: folders, file mask, context (what the notes are), files and records "
            + "(as `trove collection list --json`). Give a name to search's collection argument.",
        input: JSONSchema.closedObject([]),
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
            ], required: ["collections"]))

    static let listSources = tool(
        "list_sources", title: "List sources",
        description:
            "Every source (an indexed file, or a .jsonl document's own source) with its number of records.",
        input: JSONSchema.closedObject([]),
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
            ], required: ["sources"]))

    static let status = tool(
        "status", title: "Database status",
        description:
            "The database: records, sources, files, models, index, collections and when it was last indexed "
            + "(as `trove stats --json`).",
        input: JSONSchema.closedObject([]),
        output: JSONSchema.object(
            [
                ("database", JSONSchema.string()), ("records", JSONSchema.integer()),
                ("sources", JSONSchema.integer()),
                ("files", JSONSchema.integer()), ("index", JSONSchema.string()),
                ("model", JSONSchema.any),
                ("vector_fields", JSONSchema.array(JSONSchema.any, "one per model")),
                ("collections", JSONSchema.array(JSONSchema.string())),
                ("last_indexed", JSONSchema.string("ISO 8601, UTC", nullable: true)),
            ], required: ["database", "records", "sources", "files", "index", "vector_fields"]))

    static let index = tool(
        "index", title: "Index files",
        description:
            "Refresh every collection (no arguments), or add files and folders to the default collection "
            + "(as `trove index [PATH...]`): unchanged files are skipped, changed ones replaced, vanished ones removed.",
        input: JSONSchema.closedObject(
            [
                (
                    "paths",
                    JSONSchema.strings(
                        "files and folders to add: one, or a list (default: refresh the collections)"
                    )
                ),
                (
                    "collection",
                    JSONSchema.strings(
                        "refresh only these collections (a name, or a list of names)")
                ),
            ]),
        output: JSONSchema.object(
            [
                ("added", JSONSchema.integer()), ("updated", JSONSchema.integer()),
                ("removed", JSONSchema.integer()),
                ("unchanged", JSONSchema.integer()), ("failed", JSONSchema.integer()),
                ("chunks", JSONSchema.integer()),
            ], required: ["added", "updated", "removed", "unchanged", "failed"]),
        readOnly: false)

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
        _ command: any TroveCommand.Type, server: MCPServer, json: Bool = false
    ) -> CommandContext {
        var console = server.context.console
        console.out = BufferSink()
        var options = server.context.options
        (options.json, options.quiet) = (json, json)
        return CommandContext(
            console: console, spec: command.configuration, options: options,
            services: server.context.services)
    }

    private static func runSearch(_ json: JSONValue?, _ server: MCPServer) async throws -> JSONValue
    {
        let arguments = try ToolArguments(
            json,
            allowed: ["query", "mode", "k", "min_score", "source", "collection", "all_chunks"])
        let search = try SearchCommand(
            query: try arguments.requiredString("query"),
            mode: try arguments.string("mode") ?? "hybrid",
            limit: try arguments.integer("k", in: 1...1000) ?? 10,
            minimumScore: try arguments.number("min_score") ?? 0,
            source: try arguments.string("source"),
            collections: try arguments.strings("collection") ?? [],
            allChunks: try arguments.bool("all_chunks") == true)
        let context = commandContext(SearchCommand.self, server: server)
        let (notebook, embedders, modelError) = try await server.notes.open()
        if search.mode != .text, let modelError { throw modelError }
        return search.document(
            try await search.results(
                notebook: notebook, embedders: embedders ?? [], context: context))
    }

    private static func runGet(_ json: JSONValue?, _ server: MCPServer) async throws -> JSONValue {
        let arguments = try ToolArguments(json, allowed: ["note", "from_line", "to_line"])
        let reference = try arguments.requiredString("note")
        let from = try arguments.integer("from_line", in: 1...Int(Int32.max))
        let to = try arguments.integer("to_line", in: 1...Int(Int32.max))
        if let to, to < (from ?? 1) { throw ToolError("'to_line' must not be before 'from_line'") }
        let range = from == nil && to == nil ? nil : LineRange(from: from ?? 1, to: to)
        let context = commandContext(GetCommand.self, server: server)
        let notebook = try await server.notes.open().notebook
        return try await NoteRetrieval.get(
            reference, range: range, notebook: notebook, context: context
        ).json
    }

    private static func runMultiGet(_ json: JSONValue?, _ server: MCPServer) async throws
        -> JSONValue
    {
        let arguments = try ToolArguments(json, allowed: ["pattern", "notes", "max_bytes"])
        let patterns =
            (try arguments.string("pattern").map { [$0] } ?? [])
            + (try arguments.strings("notes") ?? [])
        guard !patterns.isEmpty else {
            throw ToolError("give 'pattern' (a glob) or 'notes' (paths or short ids)")
        }
        let maxBytes =
            try arguments.integer("max_bytes", in: 1...16_777_216) ?? NoteRetrieval.defaultMaxBytes
        let context = commandContext(MultiGetCommand.self, server: server)
        let notebook = try await server.notes.open().notebook
        return try await NoteRetrieval.multiGet(
            patterns, maxBytes: maxBytes, notebook: notebook, context: context
        ).json
    }

    private static func runListCollections(_ json: JSONValue?, _ server: MCPServer) async throws
        -> JSONValue
    {
        _ = try ToolArguments(json, allowed: [])
        return try await captured(CollectionCommand.List(), server: server)
    }

    /// Runs a command with `--json` and returns what it printed, parsed.
    private static func captured(_ command: some TroveCommand, server: MCPServer) async throws
        -> JSONValue
    {
        let context = commandContext(type(of: command), server: server, json: true)
        let out = BufferSink()
        var running = context
        running.console.out = out
        let status = try await command.run(running)
        guard
            let document = try? JSONValue.parse(
                out.text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw ToolError(
                "'trove \(context.spec.name)' ended with status \(status) and no JSON")
        }
        return document
    }

    private static func runListSources(_ json: JSONValue?, _ server: MCPServer) async throws
        -> JSONValue
    {
        _ = try ToolArguments(json, allowed: [])
        let notebook = try await server.notes.open().notebook
        let formatter = ISO8601DateFormatter()
        let sources: [JSONValue] = try await notebook.collection.sources().map { summary in
            .object([
                ("source", .string(summary.source)), ("records", .int(Int64(summary.count))),
                ("last_updated", .string(formatter.string(from: summary.lastUpdated))),
            ])
        }
        return .object([("sources", .array(sources))])
    }

    private static func runStatus(_ json: JSONValue?, _ server: MCPServer) async throws -> JSONValue
    {
        _ = try ToolArguments(json, allowed: [])
        return try await StatsCommand.document(try await server.notes.open().notebook)
    }

    private static func runIndex(_ json: JSONValue?, _ server: MCPServer) async throws -> JSONValue
    {
        let arguments = try ToolArguments(json, allowed: ["paths", "collection"])
        let paths = try arguments.strings("paths") ?? []
        let collections = try arguments.strings("collection") ?? []
        // One writer at a time; searches in flight keep reading the committed state.
        let summary = try await captured(
            try IndexCommand(paths: paths, collections: collections), server: server)
        await server.notes.reopen()
        return summary
    }
}
