import Foundation

/// The commands that hand notes to people and assistants: `get`, `multi-get` and `mcp`.
extension Commands {
    static let get = CommandSpec(
        name: "get",
        summary: "print one note, or a range of its lines, by path or #shortid",
        usage: "get [options] PATH|#SHORTID|ID [:FROM[-TO]]",
        discussion: """
            A note is an indexed file, or one document of an indexed .jsonl file (PATH#DOCID).
            Its short id is # and 8 hex digits, shown by 'trove search' (a unique start of at
            least 4 digits will do). A record id from 'trove search --json' (a UUID) works too.
            The text is the file as it is on disk now; for a .jsonl document, or a file that is
            gone, the indexed chunks. :FROM-TO prints lines FROM to TO (from 1), :FROM to the end.
            """,
        options: database + common,
        positionals: (1, 2),
        examples: [
            ("trove get notes/dentist.md", "the whole note"),
            ("trove get '#3f2a9c01' :10-20", "lines 10 to 20 of the note with that short id"),
            ("trove get --json export.jsonl#n42", "one .jsonl document, as JSON"),
        ])

    static let multiGet = CommandSpec(
        name: "multi-get",
        summary: "print several notes by glob or list, within a byte budget",
        usage: "multi-get [options] GLOB|PATH|#SHORTID...",
        discussion: """
            Globs match note paths: * and ? within a folder name, ** across folders. A relative
            glob matches paths under the current folder, or the end of any path ('*.md': every
            Markdown note). Notes print in path order, each under a ==> PATH #SHORTID <== line,
            while they fit in --max-bytes; the first that does not fit is cut after its last
            whole line that does, and the others are left out. Both are named on stderr (and
            in --json: "cut", "left_out").
            """,
        options: [
            OptionSpec(
                "max-bytes", value: "N",
                help:
                    "budget for all texts, in UTF-8 bytes (default \(NoteRetrieval.defaultMaxBytes))"
            )
        ] + database + common,
        positionals: (1, nil),
        examples: [
            ("trove multi-get 'journal/2025-05-*.md'", "every May 2025 journal note"),
            (
                "trove multi-get --max-bytes 4000 '#3f2a9c01' '#77b0e512'",
                "two notes, 4000 bytes at most"
            ),
            ("trove multi-get --json '**/*.md' | jq '.left_out'", "what did not fit"),
        ])

    static let mcp = CommandSpec(
        name: "mcp",
        summary: "serve the database to assistants over the Model Context Protocol (stdio)",
        usage: "mcp [options]",
        discussion: """
            Speaks MCP (JSON-RPC 2.0, one message per line) on stdin and stdout, for Claude
            Code, Claude Desktop, Cursor and other MCP clients; logs go to stderr. Revisions
            2025-06-18 and 2025-11-25 (initialize handshake) and 2026-07-28 (per request).
            \(MCPTools.helpLine)
            A tool argument that takes a list also takes a single string. Every note is also a
            resource, trove://note/<short id digits>. Read-only unless --allow-index. Stops
            when stdin closes.
            """,
        options: [
            OptionSpec("allow-index", help: "offer the index tool, which writes to the database")
        ] + model + database + common,
        examples: [
            ("trove mcp --db ~/work.sqlite", "serve another database (clients start this command)"),
            ("claude mcp add trove -- trove mcp", "register with Claude Code (default database)"),
            ("trove mcp --allow-index", "also let the assistant index files"),
        ])
}
