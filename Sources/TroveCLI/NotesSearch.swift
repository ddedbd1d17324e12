import Foundation
import Trove
import TroveEmbeddings

/// One search as `trove search` runs it: the request read from the command line and checked
/// once, then run against an open ``Notebook``.
///
/// `trove search` and the MCP server's search tool both go through it (the server turns its tool
/// arguments into the same command line), so the two return the same results for the same
/// request.
///
/// ```swift
/// let search = try NotesSearch(context)   // --mode, -k, --source, -c, --where, --bind, QUERY
/// let found = try await search.run(notebook: notebook, embedders: embedders, context: context)
/// print(search.document(found).serialized())   // what `trove search --json` prints
/// ```
struct NotesSearch: Sendable {
    var query: String
    /// `hybrid`, `vector` or `text`, as given.
    var modeName: String
    var mode: SearchMode
    var k: Int
    /// `--source` as typed (see ``SearchCommand/resolveSource(_:context:notebook:)``).
    var source: String?
    /// `--where` with its `--bind` values; `.all` without one.
    var clause: Filter
    var allChunks: Bool
    /// The collections named with `-c` (empty: all).
    var collections: [String]

    /// Reads and checks the request in `context.arguments` (the `search` command's options).
    /// - Throws: ``CLIError/usage(_:command:)`` for an empty query, an unknown mode, a `-k` out
    ///   of range or `--bind` values that do not match `--where`.
    init(_ context: CommandContext) throws {
        let arguments = context.arguments
        query = arguments.positionals.joined(separator: " ")
        guard !query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw CLIError.usage("the query is empty: give the words to search for", command: "search")
        }
        modeName = arguments.value("mode") ?? "hybrid"
        switch modeName {
        case "hybrid": mode = .hybrid
        case "vector": mode = .vector
        case "text": mode = .text
        default:
            throw CLIError.usage(
                "--mode must be hybrid, vector or text, got '\(modeName)'", command: "search")
        }
        k = try arguments.integer("k", default: 10, in: 1...1000, command: "search")
        source = arguments.value("source")
        clause = try SearchCommand.whereClause(context)
        allChunks = arguments.flag("all-chunks")
        collections = arguments.all("collection")
    }

    /// Whether the query must be embedded (every mode but text).
    var needsModels: Bool { modeName != "text" }

    /// What a search found: the hits, and the context string of each collection by name.
    struct Results: Sendable {
        var hits: [SearchResult]
        var contexts: [String: String?]
    }

    /// Runs the search: `k` notes (each with its best chunk), or `k` chunks with `--all-chunks`.
    /// - Parameter embedders: the database's models in order; nil for a text search.
    /// - Throws: ``CLIError/invalidQuery(_:)`` when SQLite rejects `--where`;
    ///   ``CLIError/notFound(_:)`` for an unknown collection; store errors.
    func run(notebook: Notebook, embedders: [any Embedder]?, context: CommandContext) async throws -> Results {
        let source = try await SearchCommand.resolveSource(source, context: context, notebook: notebook)
        let known = try await notebook.collections()
        let only = try SearchCommand.collectionFilter(collections, among: known)
        let contexts = Dictionary(known.map { ($0.name, $0.context) }, uniquingKeysWith: { a, _ in a })
        var hits: [SearchResult]
        do {
            // Fetch extra chunks so that k documents remain after collapsing chunks of one
            // document into its best one.
            let fetch = allChunks ? k : min(Query.maximumLimit, max(k * 4, k + 20))
            let search = MultiModelSearch(
                collection: notebook.collection, companions: notebook.companions, embedders: embedders ?? [])
            hits = try await search.search(
                query, topK: fetch, mode: mode, filter: (source.map(Filter.source) ?? .all) && only && clause)
        } catch TroveError.invalidFilter(let fragment, let reason) {
            throw CLIError.invalidQuery("--where \"\(fragment)\" is not a valid filter: \(reason)")
        }
        if !allChunks { hits = Array(SearchCommand.bestChunkPerDocument(hits).prefix(k)) }
        return Results(hits: hits, contexts: contexts)
    }

    /// The document `trove search --json` prints: the request and one object per result.
    func document(_ found: Results) -> JSONValue {
        let results: [JSONValue] = found.hits.enumerated().map { index, hit in
            SearchCommand.resultJSON(hit, rank: index + 1, mode: modeName, contexts: found.contexts)
        }
        return JSONValue.object([
            ("query", .string(query)), ("mode", .string(modeName)), ("k", .int(Int64(k))),
            ("results", .array(results)),
        ])
    }
}
