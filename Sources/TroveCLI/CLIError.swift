import Foundation

/// The ways a `trove` command fails, each mapped to a documented exit status.
///
/// Messages are written for a person at a terminal: they say what went wrong and, where there is
/// one, the command that fixes it.
///
/// | status | meaning |
/// | ---: | --- |
/// | 0 | success |
/// | 1 | the command ran and failed (I/O, database, embedding) |
/// | 2 | usage: unknown command or option, missing or malformed argument |
/// | 3 | not found: a path, record or file named on the command line does not exist |
/// | 4 | the embedding model is not installed |
/// | 5 | invalid query: a `--where` fragment or bound value SQLite rejects |
/// | 6 | wrong or missing passphrase for an encrypted database |
/// | 7 | refused: the target exists or the database to load into is not empty |
/// | 8 | invalid dump: truncated, damaged or of an unknown version (nothing loaded) |
///
/// ```swift
/// let error = CLIError.notFound("no such file or folder: notes/x.md")
/// error.exitCode   // 3
/// ```
enum CLIError: Error, Equatable, Sendable {
    /// Bad command line; `command` names the subcommand whose help to suggest (nil: top level).
    case usage(String, command: String?)
    /// A path, record or file that does not exist.
    case notFound(String)
    /// The embedding model is not installed.
    case modelMissing(String)
    /// A filter SQLite rejected.
    case invalidQuery(String)
    /// Anything else that failed while the command ran.
    case failure(String)
    /// The passphrase of an encrypted database is wrong or was not given.
    case wrongPassphrase(String)
    /// A backup or dump target exists, or a load's database is not empty.
    case targetExists(String)
    /// A dump file that cannot be loaded.
    case invalidDump(String)

    /// The process exit status for this error (see the table above).
    var exitCode: Int32 {
        switch self {
        case .failure: return ExitCode.failure
        case .usage: return ExitCode.usage
        case .notFound: return ExitCode.notFound
        case .modelMissing: return ExitCode.modelMissing
        case .invalidQuery: return ExitCode.invalidQuery
        case .wrongPassphrase: return ExitCode.wrongPassphrase
        case .targetExists: return ExitCode.targetExists
        case .invalidDump: return ExitCode.invalidDump
        }
    }

    /// The message printed after `trove: error: `.
    var message: String {
        switch self {
        case .usage(let text, let command):
            let help = command.map { "trove \($0) --help" } ?? "trove --help"
            return "\(text)\n(see '\(help)')"
        case .notFound(let text), .modelMissing(let text), .invalidQuery(let text),
            .failure(let text), .wrongPassphrase(let text), .targetExists(let text),
            .invalidDump(let text):
            return text
        }
    }
}

/// Exit statuses of the `trove` tool (see ``CLIError`` for what each means).
///
/// ```swift
/// exit(ExitCode.usage)   // 2
/// ```
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let notFound: Int32 = 3
    static let modelMissing: Int32 = 4
    static let invalidQuery: Int32 = 5
    static let wrongPassphrase: Int32 = 6
    static let targetExists: Int32 = 7
    static let invalidDump: Int32 = 8
}
