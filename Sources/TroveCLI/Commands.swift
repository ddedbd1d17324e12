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

    /// Every command, in the order `trove --help` lists them: the one place a command is
    /// registered (the parser, `--help`, `trove help` and the MCP server's list read it).
    static let all: [any TroveCommand.Type] = [
        IndexCommand.self, CollectionCommand.self, SearchCommand.self, GetCommand.self,
        MultiGetCommand.self, EmbedCommand.self, ShowCommand.self, RemoveCommand.self,
        StatsCommand.self, EvalCommand.self, VerifyCommand.self, RepairCommand.self,
        BackupCommand.self, DumpCommand.self, LoadCommand.self, MCPCommand.self,
        ModelCommand.self, SyncCommand.self, HelpCommand.self,
    ]

    /// The command named `name`, if there is one.
    static func named(_ name: String) -> (any TroveCommand.Type)? {
        all.first { $0.configuration.calls(name) }
    }

    /// `trove --help`.
    static var overview: String {
        let specs = all.map { $0.configuration }
        let width = specs.map(\.name.count).max() ?? 0
        var lines = [
            "trove \(version) - index notes and documents, then search them by meaning and by words",
            "",
            "Usage: trove COMMAND [options] [ARGUMENTS]",
            "       trove --version | --help",
            "",
            "Commands:",
        ]
        for command in specs {
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

    /// The `--help` text of one command: its usage, discussion, subcommands, options and
    /// examples.
    static func helpText(for command: any TroveCommand.Type) -> String {
        let spec = command.configuration
        var lines = ["trove \(spec.name) - \(spec.summary)", "", "Usage: trove \(spec.usage)"]
        if !spec.discussion.isEmpty {
            lines +=
                [""]
                + spec.discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map(String.init)
        }
        let subcommands = command.subcommands.map { $0.configuration }
        if !subcommands.isEmpty {
            let width = (subcommands.map(\.word.count).max() ?? 0) + 2
            lines += ["", "Subcommands:"]
            lines += subcommands.map {
                "  \($0.word.padding(toLength: width, withPad: " ", startingAt: 0))\($0.summary)"
            }
            lines += ["", "Run 'trove \(spec.name) SUBCOMMAND --help' for a subcommand's options."]
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
