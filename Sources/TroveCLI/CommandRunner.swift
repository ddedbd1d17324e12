import Foundation
import Trove
import TroveSQLite

/// Runs a command, turning store errors into the tool's exit statuses.
enum CommandRunner {
    static func run(_ command: some TroveCommand, context: CommandContext) async throws -> Int32 {
        do {
            return try await command.run(context)
        } catch let error as TroveError {
            switch error {
            case .invalidFilter(let sql, let reason):
                throw CLIError.invalidQuery("--where \"\(sql)\" is not a valid filter: \(reason)")
            case .embeddingMismatch:
                throw CLIError.failure(
                    error.description
                        + " Index into another database (--db) to use a different model.")
            default:
                throw CLIError.failure(error.description)
            }
        } catch let error as SQLiteError {
            let path = (try? context.databasePath()) ?? "the database"
            throw CLIError.failure("\(path): \(error.description)")
        }
    }
}
