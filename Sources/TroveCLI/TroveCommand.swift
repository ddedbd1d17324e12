import Foundation

/// A command of `trove`, in the shape of swift-argument-parser's `AsyncParsableCommand`: its
/// declaration (``configuration``: name, help, options, positional arguments) and its
/// subcommands are all the parser and `--help` read; its stored properties are its options as
/// typed values, read and checked once by ``init(parsing:)``; ``run(_:)`` does the work.
///
/// The MCP server makes the same values from a tool's arguments (memberwise), so a tool and
/// its command accept the same requests.
///
/// ```swift
/// struct ShowCommand: TroveCommand {
///     static let configuration = CommandSpec(name: "show", summary: "print one record",
///                                            usage: "show ID", positionals: (1, 1))
///     var id: String
///     init(parsing arguments: ParsedArguments) throws { id = arguments.positionals[0] }
///     func run(_ context: CommandContext) async throws -> Int32 { ... }
/// }
/// ```
protocol TroveCommand: Sendable {
    /// What the command accepts and what its `--help` says. A subcommand's name is its whole
    /// path (`sync status`).
    static var configuration: CommandSpec { get }
    /// Commands run as `trove NAME SUBCOMMAND ...`, each with options and help of its own.
    static var subcommands: [any TroveCommand.Type] { get }
    /// Reads and checks the options and arguments.
    /// - Throws: ``CLIError/usage(_:command:)`` for values out of range or that do not go
    ///   together.
    init(parsing arguments: ParsedArguments) throws
    /// Runs the command. - Returns: the exit status.
    func run(_ context: CommandContext) async throws -> Int32
}

extension TroveCommand {
    static var subcommands: [any TroveCommand.Type] { [] }
}

/// The options that code shared by several commands reads (`--json`, `--no-color`, `--quiet`,
/// `--db`, `--model`), read once with the command's own.
struct CommonOptions: Sendable, Equatable {
    var json = false
    var noColor = false
    /// `--quiet`: no progress bar and no summary line.
    var quiet = false
    /// `--db` (nil: `$TROVE_DB`, else the default path).
    var database: String?
    /// `--model`, in order (empty: the database's models, else the default).
    var models: [String] = []

    init(json: Bool = false, quiet: Bool = false, database: String? = nil) {
        (self.json, self.quiet, self.database) = (json, quiet, database)
    }

    init(parsing arguments: ParsedArguments) {
        json = arguments.flag("json")
        noColor = arguments.flag("no-color")
        quiet = arguments.flag("quiet")
        database = arguments.value("db")
        models = arguments.all("model")
    }
}

extension Commands {
    /// The command `words` name, starting from `command`: a subcommand when the first word that
    /// is not an option (or an option's value) names one, with that word taken out of `words`.
    /// - Throws: ``CLIError/usage(_:command:)`` for an unknown subcommand of a command that
    ///   does nothing without one.
    static func resolve(_ command: any TroveCommand.Type, words: [String]) throws -> (
        any TroveCommand.Type, [String]
    ) {
        let subcommands = command.subcommands
        guard !subcommands.isEmpty else { return (command, words) }
        // Options may come before the subcommand's name (`trove sync --db x status`): skip
        // them and the values of those that take one, whichever subcommand declares them.
        let specs = [command.configuration] + subcommands.map { $0.configuration }
        let takingValues = Set(
            specs.flatMap(\.options).filter(\.takesValue).flatMap { option in
                ["--\(option.long)"] + (option.short.map { ["-\($0)"] } ?? [])
            })
        var index = 0
        while index < words.count {
            let word = words[index]
            if word == "--" { break }
            if word.hasPrefix("-"), word != "-" {
                index += takingValues.contains(word) ? 2 : 1
                continue
            }
            if let subcommand = subcommands.first(where: { $0.configuration.calls(word) }) {
                var rest = words
                rest.remove(at: index)
                return try resolve(subcommand, words: rest)
            }
            break
        }
        // A command that takes no arguments of its own was given a subcommand it does not have.
        if index < words.count, words[index] != "--", command.configuration.positionals.max == 0 {
            let names = subcommands.map { $0.configuration.word }
            var message =
                "unknown \(command.configuration.name) subcommand '\(words[index])' (\(names.joined(separator: ", ")))"
            if let guess = ArgumentParser.closest(to: words[index], among: names) {
                message += "; did you mean '\(guess)'?"
            }
            throw CLIError.usage(message, command: command.configuration.name)
        }
        return (command, words)
    }

    /// What a command that does nothing without a subcommand does when given none: its help on
    /// stderr, and the usage status.
    static func missingSubcommand(_ command: any TroveCommand.Type, context: CommandContext)
        throws -> Int32
    {
        context.console.err.write(helpText(for: command))
        return ExitCode.usage
    }
}
