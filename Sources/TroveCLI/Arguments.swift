import Foundation

/// One option a command accepts: a flag (`--json`) or an option with a value (`-k 10`).
///
/// ```swift
/// OptionSpec("mode", short: "m", value: "MODE", help: "hybrid, vector or text")
/// OptionSpec("bind", value: "VALUE", repeatable: true, help: "value for the next ?")
/// ```
struct OptionSpec: Sendable {
    /// Long name without the dashes, e.g. `db`.
    var long: String
    /// Optional one-letter name, e.g. `k` for `-k`.
    var short: Character?
    /// Placeholder for the value in help (`PATH`, `N`); nil for a flag.
    var valueName: String?
    /// May be given more than once (values accumulate).
    var repeatable: Bool
    /// One line of help.
    var help: String

    init(
        _ long: String, short: Character? = nil, value: String? = nil, repeatable: Bool = false,
        help: String
    ) {
        self.long = long
        self.short = short
        self.valueName = value
        self.repeatable = repeatable
        self.help = help
    }

    var takesValue: Bool { valueName != nil }
}

/// A subcommand: its options, positional arguments and help text.
///
/// ```swift
/// let show = CommandSpec(name: "show", summary: "print one record", usage: "show ID",
///                        options: [], positionals: (1, 1),
///                        examples: [("trove show 42", "the record with id 42")])
/// ```
struct CommandSpec: Sendable {
    /// The command's whole name: `search`, or `sync status` for a subcommand.
    var name: String
    /// Other words that call it (`ls` for `collection list`).
    var aliases: [String]
    /// One line shown in `trove --help`.
    var summary: String
    /// The usage line after `trove `, e.g. `search [options] QUERY...`.
    var usage: String
    /// Paragraphs shown under the usage line.
    var discussion: String
    var options: [OptionSpec]
    /// Fewest and most positional arguments (nil: no upper limit).
    var positionals: (min: Int, max: Int?)
    /// Example invocations with one-line explanations.
    var examples: [(command: String, explanation: String)]

    init(
        name: String, aliases: [String] = [], summary: String, usage: String,
        discussion: String = "", options: [OptionSpec] = [],
        positionals: (min: Int, max: Int?) = (0, 0),
        examples: [(command: String, explanation: String)] = []
    ) {
        self.name = name
        self.aliases = aliases
        self.summary = summary
        self.usage = usage
        self.discussion = discussion
        self.options = options
        self.positionals = positionals
        self.examples = examples
    }
}

extension CommandSpec {
    /// The word that calls it: the last of its name (`status` for `sync status`).
    var word: String { String(name.split(separator: " ").last ?? "") }
    /// Whether `word` calls it (its word or an alias).
    func calls(_ word: String) -> Bool { word == self.word || aliases.contains(word) }
}

/// The result of parsing one command line against a ``CommandSpec``.
///
/// ```swift
/// let parsed = try ArgumentParser.parse(["--json", "-k", "3", "tea"], spec: Commands.search)
/// parsed.flag("json")   // true
/// try parsed.integer("k", default: 10, in: 1...1000, command: "search")   // 3
/// ```
struct ParsedArguments: Sendable, Equatable {
    /// Flags that were given (long names).
    var flags: Set<String> = []
    /// Values of options that take one, in command-line order (long names).
    var values: [String: [String]] = [:]
    /// Positional arguments in order.
    var positionals: [String] = []

    init(
        flags: Set<String> = [], values: [String: [String]] = [:], positionals: [String] = []
    ) {
        self.flags = flags
        self.values = values
        self.positionals = positionals
    }

    /// Whether the flag `long` was given.
    func flag(_ long: String) -> Bool { flags.contains(long) }

    /// The last value given for `long`, if any.
    func value(_ long: String) -> String? { values[long]?.last }

    /// Every value given for a repeatable option, in order.
    func all(_ long: String) -> [String] { values[long] ?? [] }

    /// The value of `long` as an integer within `range`, or `defaultValue` when absent.
    /// - Throws: ``CLIError/usage(_:command:)`` when the value is not an integer in range.
    func integer(
        _ long: String, default defaultValue: Int, in range: ClosedRange<Int>, command: String
    ) throws -> Int {
        guard let text = value(long) else { return defaultValue }
        guard let number = Int(text), range.contains(number) else {
            throw CLIError.usage(
                "--\(long) expects a whole number from \(range.lowerBound) to \(range.upperBound), "
                    + "got '\(text)'", command: command)
        }
        return number
    }

    /// `--chunk-tokens N`: the largest chunk, in model tokens.
    func chunkTokens(command: String) throws -> Int {
        try integer(
            "chunk-tokens", default: Chunker.defaultMaxTokens, in: 16...250, command: command)
    }
}

/// Hand-written parser for `trove`'s command lines: GNU-style long options (`--name value`,
/// `--name=value`), short options (`-k 5`, `-k5`), `--` to end options, and `-` as a positional.
enum ArgumentParser {
    /// Parses `arguments` (the words after the subcommand) against `spec`.
    ///
    /// ```swift
    /// let parsed = try ArgumentParser.parse(["-k", "5", "dentist"], spec: Commands.search)
    /// parsed.value("k")      // "5"
    /// parsed.positionals     // ["dentist"]
    /// ```
    /// - Throws: ``CLIError/usage(_:command:)`` for unknown options, missing values, repeated
    ///   single-valued options, or the wrong number of positional arguments.
    /// - Complexity: O(n · m) for n words and m options.
    static func parse(_ arguments: [String], spec: CommandSpec) throws -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false

        func lookup(long name: String) throws -> OptionSpec {
            if let option = spec.options.first(where: { $0.long == name }) { return option }
            var message = "unknown option '--\(name)' for '\(spec.name)'"
            if let suggestion = closest(to: name, among: spec.options.map(\.long)) {
                message += "; did you mean '--\(suggestion)'?"
            }
            throw CLIError.usage(message, command: spec.name)
        }

        func record(_ option: OptionSpec, value: String?) throws {
            if let value {
                if !option.repeatable, result.values[option.long] != nil {
                    throw CLIError.usage(
                        "--\(option.long) was given more than once", command: spec.name)
                }
                result.values[option.long, default: []].append(value)
            } else {
                result.flags.insert(option.long)
            }
        }

        func nextValue(for option: OptionSpec, spelled: String) throws -> String {
            index += 1
            guard index < arguments.count else {
                throw CLIError.usage(
                    "\(spelled) needs a value (\(option.valueName ?? "VALUE"))", command: spec.name)
            }
            return arguments[index]
        }

        while index < arguments.count {
            let word = arguments[index]
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                result.positionals.append(word)
            } else if word == "--" {
                optionsEnded = true
            } else if word.hasPrefix("--") {
                let body = word.dropFirst(2)
                let name: String
                var inline: String?
                if let equals = body.firstIndex(of: "=") {
                    name = String(body[..<equals])
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = String(body)
                }
                let option = try lookup(long: name)
                if option.takesValue {
                    try record(option, value: try inline ?? nextValue(for: option, spelled: word))
                } else {
                    if inline != nil {
                        throw CLIError.usage("--\(name) takes no value", command: spec.name)
                    }
                    try record(option, value: nil)
                }
            } else {
                // A cluster of short options: `-k5`, `-k 5`, `-h`.
                var rest = Substring(word.dropFirst())
                while let letter = rest.first {
                    rest = rest.dropFirst()
                    guard let option = spec.options.first(where: { $0.short == letter }) else {
                        if Double(word) != nil {
                            throw CLIError.usage(
                                "unexpected number '\(word)'; put '--' before arguments that "
                                    + "start with '-'", command: spec.name)
                        }
                        throw CLIError.usage(
                            "unknown option '-\(letter)' for '\(spec.name)'", command: spec.name)
                    }
                    if option.takesValue {
                        let value =
                            rest.isEmpty
                            ? try nextValue(for: option, spelled: "-\(letter)") : String(rest)
                        try record(option, value: value)
                        break
                    }
                    try record(option, value: nil)
                }
            }
            index += 1
        }

        // Help short-circuits the positional count so `trove search --help` works alone.
        if result.flags.contains("help") { return result }
        let count = result.positionals.count
        if count < spec.positionals.min {
            throw CLIError.usage(
                "'\(spec.name)' needs \(spec.positionals.min == 1 ? "an argument" : "\(spec.positionals.min) arguments"): "
                    + "trove \(spec.usage)", command: spec.name)
        }
        if let max = spec.positionals.max, count > max {
            let extra = result.positionals[max]
            throw CLIError.usage(
                max == 0
                    ? "'\(spec.name)' takes no arguments, got '\(extra)'"
                    : "too many arguments for '\(spec.name)', starting at '\(extra)'",
                command: spec.name)
        }
        return result
    }

    /// The candidate nearest to `word` by edit distance, if it is plausibly a typo.
    static func closest(to word: String, among candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word, $0)) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(1, word.count / 3) ? best.0 : nil
    }

    /// Levenshtein distance between two strings (characters).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
