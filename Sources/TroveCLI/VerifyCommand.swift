import Foundation
import Trove

/// `trove verify`: checks the file and its indexes.
struct VerifyCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "verify",
        summary: "check that the database file and its text and vector indexes agree",
        usage: "verify [options]",
        discussion: """
            Runs SQLite's integrity check on the file and, for every collection, compares the
            full-text index and the vector index with the table they are built from. Changes
            nothing. Exits with status 1 when a problem is found; 'trove repair' rebuilds the
            indexes from the tables.
            """,
        options: Commands.database + Commands.common,
        examples: [
            ("trove verify", "one line per collection"), ("trove verify --json", "the full report"),
        ])

    init(parsing arguments: ParsedArguments) throws {}

    static func open(_ context: CommandContext) throws -> (Database, String) {
        let path = try context.databasePath()
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError.notFound("no database at \(path) (pass --db or set TROVE_DB)")
        }
        return (try EncryptionPassphrase.openDatabase(path: path, context: context), path)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }

    static func describe(_ report: VerifyReport, style: Style) -> String {
        var text =
            report.integrity == ["ok"]
            ? "file      \(style.green("ok"))\n"
            : report.integrity.map { "file      \(style.red("damaged")): \($0)\n" }.joined()
        for c in report.collections {
            let status =
                c.isHealthy ? style.green("ok") : style.red("\(c.problems.count) problem(s)")
            let text0 = c.textIndexDocuments.map { ", text index \($0)" } ?? ""
            text +=
                "\(c.name)  \(status): \(c.rows) rows, vector index \(c.vectorIndexCount)\(text0)\n"
            for problem in c.problems { text += "  - \(problem)\n" }
        }
        return text
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let (database, _) = try Self.open(context)
        let report = try await database.verify()
        context.console.out.write(
            context.json ? try Self.json(report) : Self.describe(report, style: context.style))
        return report.isHealthy ? ExitCode.success : ExitCode.failure
    }
}

/// `trove repair`: rebuilds the indexes from the tables.
struct RepairCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "repair",
        summary: "rebuild the text and vector indexes from the tables",
        usage: "repair [options]",
        discussion: """
            Rebuilds every collection's full-text index and vector index from its table (the
            table itself is never changed) and verifies again. Safe to run at any time; other
            programs using the database pick up the rebuilt indexes on their next query.

            A database keeps the text tokenizer it was created with ('trove stats' names it).
            With --retokenize, the notes are copied into a new file whose text index uses the
            current default tokenizer (CJK, Thai, Lao, Khmer and Myanmar matched by character
            bigrams, English stemmed), which then replaces the old file. Records, ids, vectors
            and file hashes are kept; nothing is embedded again. No other program may use the
            database meanwhile.
            """,
        options: [
            OptionSpec(
                "retokenize",
                help: "rebuild the text index with the current default tokenizer (new file)")
        ] + Commands.database + Commands.common,
        examples: [
            ("trove repair", "rebuild and report"),
            ("trove repair --retokenize", "switch an older database to the multilingual tokenizer"),
        ])

    /// `--retokenize`: rebuild the notes' text index with the current default tokenizer.
    var retokenize: Bool

    init(parsing arguments: ParsedArguments) throws { retokenize = arguments.flag("retokenize") }

    func run(_ context: CommandContext) async throws -> Int32 {
        if retokenize {
            let path = try context.databasePath()
            guard FileManager.default.fileExists(atPath: path) else {
                throw CLIError.notFound("no database at \(path) (pass --db or set TROVE_DB)")
            }
            let change = try await Retokenizer.rebuild(
                path: path, tokenizer: Notebook.defaultTokenizer)
            if !context.json {
                context.console.out.write(
                    change.map {
                        "retokenized notes: \($0.from) -> \($0.to) (\($0.records) records)\n"
                    }
                        ?? "notes already use \(Notebook.defaultTokenizer)\n")
            }
        }
        let (database, _) = try VerifyCommand.open(context)
        let result = try await database.repair()
        if context.json {
            context.console.out.write(try VerifyCommand.json(result))
        } else {
            var text = result.actions.map { "repaired  \($0)\n" }.joined()
            text += VerifyCommand.describe(result.after, style: context.style)
            context.console.out.write(text)
        }
        return result.after.isHealthy ? ExitCode.success : ExitCode.failure
    }
}
