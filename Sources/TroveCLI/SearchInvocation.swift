import Foundation
import Trove
import TroveEmbeddings

/// One `trove search` as its command line asks for it: the request read and checked once, run
/// by ``NoteSearch``, and the document `--json` prints.
///
/// `trove search` and the MCP server's search tool both go through it (the server turns its tool
/// arguments into the same command line, parsed by the command's own parser), so the two return
/// the same results for the same request.
///
/// ```swift
/// let search = try SearchInvocation(context)   // -k, --mode, --min-score, -c, --source, QUERY...
/// let hits = try await search.run(notebook: notebook, embedders: embedders, context: context)
/// print(search.document(hits).serialized())    // what `trove search --json` prints
/// ```
struct SearchInvocation: Sendable {
    var query: String
    /// `hybrid`, `vector` or `text`, as given.
    var modeName: String
    var mode: SearchMode
    /// Most results; nil with `--all`.
    var limit: Int?
    var k: Int
    /// `--min-score`: results below this calibrated relevance are left out (0: none).
    var minimumScore: Double
    /// `--source` as typed (see ``SearchCommand/resolveSource(_:context:notebook:)``).
    var source: String?
    /// The collections named with `-c` (empty: all).
    var collections: [String]
    /// `--where` with its `--bind` values; `.all` without one.
    var clause: Filter
    var allChunks: Bool
    /// `--files`: path and score only.
    var files: Bool

    /// Reads and checks the request in `context.arguments` (the `search` command's options).
    /// - Throws: ``CLIError/usage(_:command:)`` for an empty query, an unknown mode, `-k` out of
    ///   range or with `--all`, a `--min-score` outside 0...1, or `--bind` values that do not
    ///   match `--where`.
    init(_ context: CommandContext) throws {
        let arguments = context.arguments
        query = arguments.positionals.joined(separator: " ")
        guard query.contains(where: { !$0.isWhitespace }) else {
            throw CLIError.usage(
                "the query is empty: give the words to search for", command: "search")
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
        let all = arguments.flag("all")
        if all, arguments.value("k") != nil {
            throw CLIError.usage("give -k N or --all, not both", command: "search")
        }
        k = try arguments.integer("k", default: 10, in: 1...1000, command: "search")
        limit = all ? nil : k
        minimumScore = try SearchCommand.minimumScore(arguments.value("min-score"))
        clause = try SearchCommand.whereClause(context)
        source = arguments.value("source")
        collections = arguments.all("collection")
        allChunks = arguments.flag("all-chunks")
        files = arguments.flag("files")
    }

    /// Runs the search.
    /// - Parameter embedders: the database's models in order; empty for a text search.
    /// - Throws: ``CLIError/invalidQuery(_:)`` when SQLite rejects `--where`;
    ///   ``CLIError/notFound(_:)`` for an unknown collection; store errors.
    func run(notebook: Notebook, embedders: [any Embedder], context: CommandContext) async throws
        -> [NoteSearch.NoteHit]
    {
        let source = try await SearchCommand.resolveSource(
            source, context: context, notebook: notebook)
        let only = try SearchCommand.collectionFilter(
            collections, among: try await notebook.collections())
        do {
            return try await NoteSearch(
                notebook: notebook, embedders: mode == .text ? [] : embedders
            ).run(
                NoteSearch.Request(
                    query: query, mode: mode, limit: limit,
                    filter: (source.map(Filter.source) ?? .all) && only && clause,
                    allChunks: allChunks, minimumRelevance: minimumScore))
        } catch TroveError.invalidFilter(let fragment, let reason) {
            throw CLIError.invalidQuery("--where \"\(fragment)\" is not a valid filter: \(reason)")
        }
    }

    /// The document `trove search --json` prints: the request and one object per result.
    func document(_ hits: [NoteSearch.NoteHit]) -> JSONValue {
        let results: [JSONValue] = hits.enumerated().map { index, hit in
            files
                ? SearchCommand.fileJSON(hit)
                : SearchCommand.resultJSON(hit, rank: index + 1, mode: modeName)
        }
        var members: [(String, JSONValue)] = [
            ("query", .string(query)), ("mode", .string(modeName)),
            ("k", limit == nil ? .null : .int(Int64(k))),
        ]
        if minimumScore > 0 { members.append(("min_score", .double(minimumScore))) }
        members.append(("results", .array(results)))
        return .object(members)
    }
}
