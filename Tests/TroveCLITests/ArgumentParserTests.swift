import Foundation
import Testing

@testable import TroveCLI

@Suite("ArgumentParser")
struct ArgumentParserTests {
    @Test("long, short, inline and clustered options")
    func forms() throws {
        let parsed = try ArgumentParser.parse(
            [
                "--mode=text", "-k5", "--where", "x = ?", "--bind", "1", "--bind", "two", "--json",
                "dentist", "--", "-not-an-option",
            ],
            spec: SearchCommand.configuration)
        #expect(parsed.value("mode") == "text")
        #expect(parsed.value("k") == "5")
        #expect(parsed.value("where") == "x = ?")
        #expect(parsed.all("bind") == ["1", "two"])
        #expect(parsed.flag("json"))
        #expect(!parsed.flag("no-color"))
        #expect(parsed.positionals == ["dentist", "-not-an-option"])
    }

    @Test("separate values and a lone dash as a positional")
    func separateValues() throws {
        let parsed = try ArgumentParser.parse(
            ["-k", "3", "-m", "vector", "-"], spec: SearchCommand.configuration)
        #expect(parsed.value("k") == "3")
        #expect(parsed.value("mode") == "vector")
        #expect(parsed.positionals == ["-"])
    }

    @Test(
        "usage errors",
        arguments: [
            (["--kk", "3", "q"], "did you mean '--k'"),
            (["-z", "q"], "unknown option '-z'"),
            (["q", "--where"], "--where needs a value"),
            (["--mode", "text", "--mode", "vector", "q"], "more than once"),
            (["--json=yes", "q"], "takes no value"),
            ([], "needs an argument"),
        ])
    func usageErrors(arguments: [String], fragment: String) throws {
        #expect {
            try ArgumentParser.parse(arguments, spec: SearchCommand.configuration)
        } throws: { error in
            guard case CLIError.usage(let message, let command) = error else { return false }
            return message.contains(fragment) && command == "search"
        }
    }

    @Test("positional limits")
    func positionalLimits() throws {
        #expect(throws: CLIError.self) {
            try ArgumentParser.parse(["1", "2"], spec: ShowCommand.configuration)
        }
        #expect(throws: CLIError.self) {
            try ArgumentParser.parse(["x"], spec: StatsCommand.configuration)
        }
        let help = try ArgumentParser.parse(["--help"], spec: ShowCommand.configuration)
        #expect(help.flag("help"))
    }

    @Test("integer options are range-checked")
    func integers() throws {
        let parsed = try ArgumentParser.parse(["-k", "0", "q"], spec: SearchCommand.configuration)
        #expect(throws: CLIError.self) {
            try parsed.integer("k", default: 10, in: 1...10_000, command: "search")
        }
        let fine = try ArgumentParser.parse(["-k", "7", "q"], spec: SearchCommand.configuration)
        #expect(try fine.integer("k", default: 10, in: 1...10_000, command: "search") == 7)
        #expect(try fine.integer("absent", default: 10, in: 1...10, command: "search") == 10)
    }

    @Test("edit distance")
    func editDistance() {
        #expect(ArgumentParser.editDistance("kitten", "sitting") == 3)
        #expect(ArgumentParser.editDistance("", "abc") == 3)
        #expect(ArgumentParser.closest(to: "serch", among: ["search", "stats"]) == "search")
        #expect(ArgumentParser.closest(to: "zzzzzz", among: ["search", "stats"]) == nil)
    }
}

@Suite("TroveCommandLine")
struct TroveCommandLineTests {
    /// Every command and subcommand, by its whole name (`sync status`).
    static let everyCommand: [String] = Commands.all.flatMap { command in
        [command.configuration.name] + command.subcommands.map { $0.configuration.name }
    }

    @Test(
        "every command and subcommand has help with usage, options and examples",
        arguments: everyCommand)
    func helpForEveryCommand(name: String) async throws {
        let words = name.split(separator: " ").map(String.init)
        for form in [words + ["--help"], words + ["-h"], ["help"] + words] {
            let result = await runTrove(form)
            #expect(result.status == 0)
            #expect(result.err.isEmpty)
            #expect(result.out.hasPrefix("trove \(name) - "))
            #expect(result.out.contains("Usage: trove \(name)"))
            #expect(result.out.contains("Examples:\n  trove "))
            #expect(result.out.contains("--help"))
        }
    }

    @Test("top-level help and version")
    func topLevel() async {
        for form in [["--help"], ["-h"], ["help"]] {
            let result = await runTrove(form)
            #expect(result.status == 0)
            for command in Commands.all {
                #expect(result.out.contains("  \(command.configuration.name) "))
            }
            #expect(result.out.contains("Exit status"))
        }
        for form in [["--version"], ["-V"], ["version"]] {
            let result = await runTrove(form)
            #expect(result.status == 0)
            #expect(result.out == "trove \(Commands.version)\n")
        }
        let bare = await runTrove([])
        #expect(bare.status == ExitCode.usage)
        #expect(bare.out.isEmpty)
        #expect(bare.err.contains("Usage: trove COMMAND"))
    }

    @Test("errors go to stderr with a usage status")
    func errors() async {
        let unknown = await runTrove(["serch", "x"])
        #expect(unknown.status == ExitCode.usage)
        #expect(unknown.out.isEmpty)
        #expect(
            unknown.err.hasPrefix("trove: error: unknown command 'serch'; did you mean 'search'?"))
        let badOption = await runTrove(["search", "--frobnicate", "x"])
        #expect(badOption.status == ExitCode.usage)
        #expect(badOption.err.contains("see 'trove search --help'"))
        let badLeading = await runTrove(["--frobnicate", "search"])
        #expect(badLeading.status == ExitCode.usage)
    }

    @Test("error label is colored only on a terminal without NO_COLOR")
    func errorColor() async {
        let plain = await runTrove(["serch"], terminal: false)
        #expect(!plain.err.contains("\u{1B}["))
        let colored = await runTrove(["serch"], terminal: true)
        #expect(colored.err.contains("\u{1B}["))
        let noColor = await runTrove(["serch"], environment: ["NO_COLOR": "1"], terminal: true)
        #expect(!noColor.err.contains("\u{1B}["))
    }
}

@Suite("Console")
struct ConsoleTests {
    @Test("color only on a terminal, never with NO_COLOR, --no-color or TERM=dumb")
    func colorRules() {
        func console(_ environment: [String: String]) -> Console {
            Console(
                out: BufferSink(), err: BufferSink(), environment: environment,
                currentDirectory: "/")
        }
        #expect(console([:]).colorEnabled(terminal: true, noColorFlag: false))
        #expect(!console([:]).colorEnabled(terminal: false, noColorFlag: false))
        #expect(!console([:]).colorEnabled(terminal: true, noColorFlag: true))
        #expect(!console(["NO_COLOR": "1"]).colorEnabled(terminal: true, noColorFlag: false))
        // no-color.org: an empty NO_COLOR does not disable color.
        #expect(console(["NO_COLOR": ""]).colorEnabled(terminal: true, noColorFlag: false))
        #expect(!console(["TERM": "dumb"]).colorEnabled(terminal: true, noColorFlag: false))
    }

    @Test("style wraps in ANSI codes only when enabled")
    func style() {
        #expect(Style(enabled: false).bold("x") == "x")
        #expect(Style(enabled: true).bold("x") == "\u{1B}[1mx\u{1B}[0m")
        #expect(Style(enabled: false).highlight("x") == "x")
    }
}

@Suite("Locations")
struct LocationsTests {
    @Test("--db, then TROVE_DB, then XDG_DATA_HOME, then HOME")
    func databaseRule() throws {
        let env = ["HOME": "/home/ana", "XDG_DATA_HOME": "/data", "TROVE_DB": "~/t.sqlite"]
        #expect(
            try Locations.database(flag: "x.sqlite", environment: env, currentDirectory: "/w")
                == "/w/x.sqlite")
        #expect(
            try Locations.database(flag: nil, environment: env, currentDirectory: "/w")
                == "/home/ana/t.sqlite")
        var noTrove = env
        noTrove["TROVE_DB"] = nil
        #expect(
            try Locations.database(flag: nil, environment: noTrove, currentDirectory: "/w")
                == "/data/trove/trove.sqlite")
        // A relative XDG_DATA_HOME is invalid by the spec and ignored.
        noTrove["XDG_DATA_HOME"] = "relative"
        #expect(
            try Locations.database(flag: nil, environment: noTrove, currentDirectory: "/w")
                == "/home/ana/.local/share/trove/trove.sqlite")
        #expect(throws: CLIError.self) {
            try Locations.database(flag: nil, environment: [:], currentDirectory: "/")
        }
    }

    @Test("paths are made absolute and standardised")
    func absolute() {
        #expect(
            Locations.absolute("a/../b/./c.md", environment: [:], currentDirectory: "/w")
                == "/w/b/c.md")
        #expect(
            Locations.absolute("~", environment: ["HOME": "/h"], currentDirectory: "/w") == "/h")
        #expect(Locations.absolute("/x//y/", environment: [:], currentDirectory: "/w") == "/x/y")
    }
}
