import Foundation

/// The subcommands of `trove`, their options and their help text.
enum Commands {
    /// The tool's version, printed by `trove --version`.
    static let version = "0.1.0"

    /// Options every subcommand accepts.
    static let common: [OptionSpec] = [
        OptionSpec("json", help: "print machine-readable JSON on stdout"),
        OptionSpec("no-color", help: "never color the output (also: NO_COLOR=1)"),
        OptionSpec("help", short: "h", help: "show this help"),
    ]

    /// The database option, for commands that open the database.
    static let database: [OptionSpec] = [
        OptionSpec(
            "db", value: "PATH",
            help: "database file (default: $TROVE_DB, else $XDG_DATA_HOME/trove/trove.sqlite)")
    ]

    /// Options of commands that run the embedding model.
    static let model: [OptionSpec] = [
        OptionSpec(
            "model", value: "NAME|DIR", repeatable: true,
            help:
                "embedding model: all-MiniLM-L6-v2, multilingual-e5-small or a folder; repeat for both "
                + "(default: all-MiniLM-L6-v2, or what the database was indexed with)")
    ]

    static let index = CommandSpec(
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
        ] + model + database + common,
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

    static let search = CommandSpec(
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
        ] + model + database + common,
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

    static let embed = CommandSpec(
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
        ] + model + common,
        positionals: (0, nil),
        examples: [
            ("trove embed --json \"buy oat milk\"", "one JSON array on stdout"),
            ("cut -f2 titles.tsv | trove embed --json > vectors.jsonl", "one line per input line"),
            (
                "trove embed --model multilingual-e5-small --query --json \"数据库\"",
                "a multilingual query vector"
            ),
        ])

    static let show = CommandSpec(
        name: "show",
        summary: "print one record: text, source, metadata",
        usage: "show [options] ID",
        options: database + common,
        positionals: (1, 1),
        examples: [("trove show 42", "the record with id 42"), ("trove show --json 42", "as JSON")])

    static let rm = CommandSpec(
        name: "rm",
        summary: "remove records by id, or every record of a source",
        usage: "rm [options] (--source S | ID...)",
        discussion: """
            Removing a file's records also forgets its content hash, so the next 'trove index'
            adds it again if it still exists.
            """,
        options: [OptionSpec("source", short: "s", value: "S", help: "remove every record of S")]
            + database + common,
        positionals: (0, nil),
        examples: [
            ("trove rm 42 43", "remove two records"),
            ("trove rm --source ~/notes/old.md", "remove every chunk of one file"),
        ])

    static let stats = CommandSpec(
        name: "stats",
        summary: "records, sources, file size, model and index of the database",
        usage: "stats [options]",
        options: database + common,
        examples: [("trove stats", "a short report"), ("trove stats --json", "for scripts")])

    static let eval = CommandSpec(
        name: "eval",
        summary: "measure retrieval quality on a labelled query set",
        usage: "eval [options] --docs NOTES.jsonl --queries QUERIES.jsonl",
        discussion: """
            Indexes the documents into a temporary database (deleted afterwards),
            runs every query in text, vector and hybrid mode, and prints hit@1, hit@3, hit@10,
            MRR@10 and nDCG@10 per mode, overall and per query kind, computed as
            shared/eval/score.py does. Documents: {"id", "text", ...} per line; queries:
            {"id", "query", "answer", "kind"} per line. With --out, writes text.jsonl,
            vector.jsonl and hybrid.jsonl there: {"id": query id, "ranked": [top 10 doc ids]}.
            """,
        options: [
            OptionSpec("docs", value: "FILE", help: "documents, one JSON object per line"),
            OptionSpec("queries", value: "FILE", help: "queries with their answer and kind"),
            OptionSpec("out", value: "DIR", help: "write one run file per mode into DIR"),
            OptionSpec(
                "chunk-tokens", value: "N",
                help:
                    "largest chunk, in estimated model tokens (default \(Chunker.defaultMaxTokens))"
            ),
        ] + model + common,
        examples: [
            (
                "trove eval --docs notes-dev/notes.jsonl --queries notes-dev/queries.jsonl --out runs",
                "table per mode; run files in ./runs"
            )
        ])

    static let help = CommandSpec(
        name: "help",
        summary: "show help for trove or one command",
        usage: "help [COMMAND]",
        options: common,
        positionals: (0, 1),
        examples: [("trove help search", "the same as 'trove search --help'")])

    /// Every subcommand, in the order `trove --help` lists them.
    static let all: [CommandSpec] = [
        index, collection, search, get, multiGet, embed, show, rm, stats, eval, verify, repair,
        backup,
        dump, load, mcp, modelManagement, sync, help,
    ]

    /// The spec named `name`, if there is one.
    static func named(_ name: String) -> CommandSpec? { all.first { $0.name == name } }

    /// `trove --help`.
    static var overview: String {
        let width = all.map(\.name.count).max() ?? 0
        var lines = [
            "trove \(version) - index notes and documents, then search them by meaning and by words",
            "",
            "Usage: trove COMMAND [options] [ARGUMENTS]",
            "       trove --version | --help",
            "",
            "Commands:",
        ]
        for command in all {
            lines.append(
                "  \(command.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\(command.summary)"
            )
        }
        lines += [
            "",
            "Database: --db PATH, else $TROVE_DB, else $XDG_DATA_HOME/trove/trove.sqlite",
            "          (XDG_DATA_HOME defaults to ~/.local/share).",
            "Model:    --model NAME|DIR, else $TROVE_MODEL_DIR, else the user cache folder;",
            "          install it with: trove model install all-MiniLM-L6-v2",
            "          (and trove model install multilingual-e5-small for about 100 languages)",
            "",
            "Exit status: 0 success, 1 failure, 2 usage error, 3 not found,",
            "             4 model not installed, 5 invalid --where query,",
            "             6 wrong or missing passphrase (encrypted databases),",
            "             7 target exists or database not empty, 8 invalid dump.",
            "",
            "Examples:",
            "  trove collection add ~/notes --name notes --context \"Personal notes\"",
            "  trove index --watch",
            "  trove search \"when is the dentist\"",
            "  trove search -c notes --min-score 0.5 --json invoice",
            "  trove get '#3f2a9c01' :1-20",
            "  claude mcp add trove -- trove mcp",
            "",
            "Run 'trove COMMAND --help' for a command's options and examples.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `--help` text of one command.
    static func helpText(for spec: CommandSpec) -> String {
        var lines = ["trove \(spec.name) - \(spec.summary)", "", "Usage: trove \(spec.usage)"]
        if !spec.discussion.isEmpty {
            lines +=
                [""]
                + spec.discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map(String.init)
        }
        let sharedNames = (common + database).map(\.long)
        let own = spec.options.filter { !sharedNames.contains($0.long) }
        let shared = spec.options.filter { sharedNames.contains($0.long) }
        let labels = spec.options.map(label)
        let width = min(34, (labels.map(\.count).max() ?? 0) + 2)
        func render(_ options: [OptionSpec]) -> [String] {
            options.map { option in
                let text = label(option)
                let padded =
                    text.count >= width
                    ? text + "\n" + String(repeating: " ", count: width + 2)
                    : text.padding(toLength: width, withPad: " ", startingAt: 0)
                return "  \(padded)\(option.help)"
            }
        }
        if !own.isEmpty { lines += ["", "Options:"] + render(own) }
        if !shared.isEmpty { lines += ["", "Common options:"] + render(shared) }
        if !spec.examples.isEmpty {
            lines += ["", "Examples:"]
            for example in spec.examples {
                lines += ["  \(example.command)", "      \(example.explanation)"]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func label(_ option: OptionSpec) -> String {
        var text: String
        if let short = option.short, String(short) == option.long {
            text = "-\(short)"  // `-k N`: the one-letter name is the whole name
        } else {
            text = (option.short.map { "-\($0), " } ?? "    ") + "--\(option.long)"
        }
        if let value = option.valueName { text += " \(value)" }
        return text
    }
}
