import Foundation
import Trove
import TroveEmbeddings

/// `trove search QUERY...`: the request read and checked once, run by ``NoteSearch``, and the
/// ``SearchResults`` `--json` prints.
///
/// The MCP server's search tool makes the same value from its arguments
/// (``init(query:mode:limit:minimumScore:source:collections:allChunks:files:clause:)``), so
/// the two return the same results for the same request.
struct SearchCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "search",
        summary: "find notes by meaning and by words",
        usage: "search [options] QUERY...",
        discussion: """
            Words after the options form the query (an empty query is a usage error). The
            default mode, hybrid, fuses the meaning (vector) ranking with the word (BM25)
            ranking; 'vector' and 'text' use one leg alone. A long note indexed in several
            chunks is listed once, with its best chunk. Each result shows its path, title, a
            snippet with the query's words highlighted (on a terminal) and its collection's
            context.

            The score is a relevance from 0 to 1 that means the same for every query: about
            0.5 is "as likely the note you want as not", 0.8 and up a strong match. It comes
            from the cosine of each model and the share of the query's words the note holds,
            each through a curve fitted on a labelled set, taking the strongest leg that
            understands the query's language; it never rises down the list, so --min-score
            keeps the top of the ranking. --json keeps each leg's rank and raw score. Filters apply before ranking, so -k results come back whenever that many
            records match. --where takes an SQL expression over the columns id, content,
            source and metadata (a JSON object: use json_extract(metadata, '$.key')); each ?
            takes the next --bind value (whole numbers and decimals are bound as numbers,
            everything else as text).
            """,
        options: [
            OptionSpec(
                "mode", short: "m", value: "MODE",
                help: "hybrid (default), vector (meaning only) or text (words only)"),
            OptionSpec("k", short: "k", value: "N", help: "number of results (default 10)"),
            OptionSpec(
                "all",
                help: "every match instead of the best k (with --min-score: every match above it)"),
            OptionSpec(
                "min-score", value: "X",
                help: "only results with a relevance of at least X (0 to 1; see the score above)"),
            OptionSpec("files", help: "print only each result's score and path (score TAB path)"),
            OptionSpec(
                "collection", short: "c", value: "NAME", repeatable: true,
                help: "only this collection (repeat for several; see 'trove collection list')"),
            OptionSpec("source", short: "s", value: "S", help: "only records whose source is S"),
            OptionSpec("where", value: "SQL", help: "only records matching this SQL expression"),
            OptionSpec(
                "bind", value: "VALUE", repeatable: true,
                help: "value for the next ? in --where (repeat for several)"),
            OptionSpec(
                "all-chunks", help: "list every matching chunk (default: the best chunk per note)"),
        ] + Commands.model + Commands.database + Commands.common,
        positionals: (1, nil),
        examples: [
            ("trove search when is the dentist", "hybrid search, ten best results"),
            ("trove search -k 3 --mode text invoice 2041", "word search only, three results"),
            (
                "trove search -c work --min-score 0.6 release plan",
                "strong matches in the collection 'work'"
            ),
            (
                "trove search --all --files --min-score 0.5 tax receipts",
                "paths of every good match, for scripts"
            ),
            (
                "trove search --where \"json_extract(metadata, '$.chunk') = ?\" --bind 0 recipe",
                "only the first chunk of each file"
            ),
            ("trove search --json groceries | jq '.results[0].source'", "for scripts"),
        ])

    /// What `-k` (and the search tool's `k`) takes.
    static let limits = 1...1000

    var query: String
    /// `hybrid`, `vector` or `text`, as given.
    var modeName: String
    var mode: SearchMode
    /// Most results; nil with `--all`.
    var limit: Int?
    var k: Int
    /// `--min-score`: results below this calibrated relevance are left out (0: none).
    var minimumScore: Double
    /// `--source` as typed (see ``resolveSource(_:context:notebook:)``).
    var source: String?
    /// The collections named with `-c` (empty: all).
    var collections: [String]
    /// `--where` with its `--bind` values; `.all` without one.
    var clause: Filter
    var allChunks: Bool
    /// `--files`: path and score only.
    var files: Bool

    /// A request, checked.
    /// - Parameter limit: most results (1...1000), nil for every result above `minimumScore`.
    /// - Throws: ``CLIError/usage(_:command:)`` for an empty query, an unknown mode, a limit out
    ///   of range or a minimum score outside 0...1.
    init(
        query: String, mode modeName: String = "hybrid", limit: Int? = 10,
        minimumScore: Double = 0, source: String? = nil, collections: [String] = [],
        allChunks: Bool = false, files: Bool = false, clause: Filter = .all
    ) throws {
        guard query.contains(where: { !$0.isWhitespace }) else {
            throw CLIError.usage(
                "the query is empty: give the words to search for", command: "search")
        }
        switch modeName {
        case "hybrid": mode = .hybrid
        case "vector": mode = .vector
        case "text": mode = .text
        default:
            throw CLIError.usage(
                "--mode must be hybrid, vector or text, got '\(modeName)'", command: "search")
        }
        if let limit, !Self.limits.contains(limit) {
            throw CLIError.usage(
                "-k expects a whole number from 1 to 1000, got '\(limit)'", command: "search")
        }
        guard minimumScore.isFinite, (0...1).contains(minimumScore) else {
            throw CLIError.usage(
                "--min-score expects a number from 0 to 1, got '\(minimumScore)'", command: "search"
            )
        }
        (self.query, self.modeName, self.limit, k) = (query, modeName, limit, limit ?? 10)
        (self.minimumScore, self.source, self.collections) = (minimumScore, source, collections)
        (self.allChunks, self.files, self.clause) = (allChunks, files, clause)
    }

    /// - Throws: ``CLIError/usage(_:command:)`` as the initializer above, and for `-k` with
    ///   `--all` or `--bind` values that do not match `--where`.
    init(parsing arguments: ParsedArguments) throws {
        let all = arguments.flag("all")
        if all, arguments.value("k") != nil {
            throw CLIError.usage("give -k N or --all, not both", command: "search")
        }
        let k = try arguments.integer("k", default: 10, in: Self.limits, command: "search")
        try self.init(
            query: arguments.positionals.joined(separator: " "),
            mode: arguments.value("mode") ?? "hybrid", limit: all ? nil : k,
            minimumScore: try Self.minimumScore(arguments.value("min-score")),
            source: arguments.value("source"), collections: arguments.all("collection"),
            allChunks: arguments.flag("all-chunks"), files: arguments.flag("files"),
            clause: try Self.whereClause(arguments))
        self.k = k
    }

    /// Runs the search.
    /// - Parameter embedders: the database's models in order; empty for a text search.
    /// - Throws: ``CLIError/invalidQuery(_:)`` when SQLite rejects `--where`;
    ///   ``CLIError/notFound(_:)`` for an unknown collection; store errors.
    func results(notebook: Notebook, embedders: [any Embedder], context: CommandContext)
        async throws -> [NoteSearch.NoteHit]
    {
        let source = try await Self.resolveSource(source, context: context, notebook: notebook)
        let only = try Self.collectionFilter(
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

    /// What `trove search --json` prints and the search tool returns.
    func report(_ hits: [NoteSearch.NoteHit]) -> SearchResults<SearchHit> {
        report(hits.enumerated().map { SearchHit($1, rank: $0 + 1, mode: modeName) })
    }

    /// What `trove search --files --json` prints.
    func fileReport(_ hits: [NoteSearch.NoteHit]) -> SearchResults<SearchFileHit> {
        report(hits.map(SearchFileHit.init))
    }

    private func report<Hit>(_ results: [Hit]) -> SearchResults<Hit> {
        SearchResults(
            query: query, mode: modeName, k: limit == nil ? nil : k,
            minScore: minimumScore > 0 ? minimumScore : nil, results: results)
    }
}
