import Foundation

/// The `trove` command-line tool: parses a command line, runs the command, returns the exit
/// status. `main.swift` only forwards the process's arguments and console here, so every
/// behaviour is testable in-process.
///
/// ```swift
/// let status = await TroveCommandLine.run(["search", "dentist"], console: .process)
/// ```
package enum TroveCommandLine {
    /// Runs one command line (without the program name) and returns its exit status. The one
    /// entry the `trove` executable needs, hence `package`.
    package static func run(_ arguments: [String], console: Console) async -> Int32 {
        await run(arguments, console: console, services: .standard)
    }

    /// Runs one command line with the given services (tests pass a stub embedder).
    ///
    /// Results go to `console.out`; errors, warnings and progress to `console.err`, each error
    /// as one `trove: error: …` message.
    static func run(_ arguments: [String], console: Console, services: Services) async -> Int32 {
        do {
            return try await dispatch(arguments, console: console, services: services)
        } catch {
            report(error, console: console)
            return exitCode(for: error)
        }
    }

    /// Options that may come before the command name, and whether each takes a value.
    private static let leadingOptions: [String: Bool] = [
        "--db": true, "--model": true, "--json": false, "--no-color": false,
    ]

    private static func dispatch(
        _ arguments: [String], console: Console, services: Services
    ) async throws -> Int32 {
        // `trove --db x.sqlite search q` is `trove search --db x.sqlite q`.
        var leading: [String] = []
        var index = 0
        while index < arguments.count, arguments[index].hasPrefix("-") {
            let word = arguments[index]
            let name = String(word.split(separator: "=", maxSplits: 1)[0])
            if word == "--version" || word == "-V" {
                console.out.write("trove \(Commands.version)\n")
                return ExitCode.success
            }
            if word == "--help" || word == "-h" {
                console.out.write(Commands.overview)
                return ExitCode.success
            }
            guard let takesValue = leadingOptions[name] else {
                throw CLIError.usage("unknown option '\(word)'", command: nil)
            }
            leading.append(word)
            if takesValue, !word.contains("=") {
                index += 1
                guard index < arguments.count else {
                    throw CLIError.usage("\(word) needs a value", command: nil)
                }
                leading.append(arguments[index])
            }
            index += 1
        }
        guard index < arguments.count else {
            console.err.write(Commands.overview)
            return ExitCode.usage
        }
        let name = arguments[index]
        let rest = leading + arguments[(index + 1)...]
        if name == "version" {
            console.out.write("trove \(Commands.version)\n")
            return ExitCode.success
        }
        guard let command = Commands.named(name) else {
            var message = "unknown command '\(name)'"
            if let suggestion = ArgumentParser.closest(
                to: name, among: Commands.all.map { $0.configuration.name })
            {
                message += "; did you mean '\(suggestion)'?"
            }
            throw CLIError.usage(message, command: nil)
        }
        let (resolved, words) = try Commands.resolve(command, words: Array(rest))
        let spec = resolved.configuration
        let parsed = try ArgumentParser.parse(words, spec: spec)
        if parsed.flag("help") {
            console.out.write(Commands.helpText(for: resolved))
            return ExitCode.success
        }
        let context = CommandContext(
            console: console, spec: spec, options: CommonOptions(parsing: parsed),
            services: services)
        return try await CommandRunner.run(try resolved.init(parsing: parsed), context: context)
    }

    /// Prints `trove: error: message` on stderr (the word "error" in red on a terminal).
    static func report(_ error: Error, console: Console) {
        let style = Style(
            enabled: console.colorEnabled(terminal: console.stderrIsTerminal, noColorFlag: false))
        console.err.write("trove: \(style.red(style.bold("error"))): \(describe(error))\n")
    }

    /// The message for any error a command can throw.
    static func describe(_ error: Error) -> String {
        switch error {
        case let error as CLIError: return error.message
        case let error as DocumentError: return error.message
        case let error as LocalizedError:
            return error.errorDescription ?? String(describing: error)
        default: return String(describing: error)
        }
    }

    static func exitCode(for error: Error) -> Int32 {
        switch error {
        case let error as CLIError: return error.exitCode
        case is DocumentError: return ExitCode.failure
        default: return ExitCode.failure
        }
    }
}

/// Everything a command needs: where to write, what was asked, and the derived settings.
///
/// ```swift
/// let path = try context.databasePath()   // --db, else $TROVE_DB, else the XDG default
/// if context.json { context.console.out.write("{}\n") }
/// ```
struct CommandContext: Sendable {
    var console: Console
    /// The command running (its name goes into usage errors).
    var spec: CommandSpec
    var options: CommonOptions
    var services: Services

    /// Whether `--json` was given.
    var json: Bool { options.json }

    /// Styling for stdout: color only on a terminal, never with NO_COLOR, --no-color or --json.
    var style: Style {
        Style(
            enabled: !json
                && console.colorEnabled(
                    terminal: console.stdoutIsTerminal, noColorFlag: options.noColor)
        )
    }

    /// The database path (see ``Locations/database(flag:environment:currentDirectory:)``).
    func databasePath() throws -> String {
        try Locations.database(
            flag: options.database, environment: console.environment,
            currentDirectory: console.currentDirectory)
    }

    /// Writes a warning on stderr.
    func warn(_ message: String) {
        let style = Style(
            enabled: console.colorEnabled(
                terminal: console.stderrIsTerminal, noColorFlag: options.noColor))
        console.err.write("trove: \(style.yellow("warning")): \(message)\n")
    }
}

/// `trove help [COMMAND [SUBCOMMAND]]`: the same as `trove COMMAND --help`.
struct HelpCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "help",
        summary: "show help for trove or one command",
        usage: "help [COMMAND [SUBCOMMAND]]",
        options: Commands.common,
        positionals: (0, 2),
        examples: [
            ("trove help search", "the same as 'trove search --help'"),
            ("trove help sync status", "the same as 'trove sync status --help'"),
        ])

    var topic: [String]

    init(parsing arguments: ParsedArguments) throws { topic = arguments.positionals }

    func run(_ context: CommandContext) async throws -> Int32 {
        guard let name = topic.first else {
            context.console.out.write(Commands.overview)
            return ExitCode.success
        }
        guard let command = Commands.named(name) else {
            throw CLIError.usage("no help for unknown command '\(name)'", command: "help")
        }
        let (resolved, rest) = try Commands.resolve(command, words: Array(topic.dropFirst()))
        guard rest.isEmpty else {
            throw CLIError.usage(
                "no help for unknown command '\(topic.joined(separator: " "))'", command: "help")
        }
        context.console.out.write(Commands.helpText(for: resolved))
        return ExitCode.success
    }
}
