import Foundation
import Trove
import TroveSQLite

/// Runs the commands that open the database or the model, turning store errors into the
/// tool's exit statuses.
enum CommandRunner {
    static func run(_ context: CommandContext) async throws -> Int32 {
        do {
            switch context.spec.name {
            case "index": return try await IndexCommand.run(context)
            case "collection": return try await CollectionCommand.run(context)
            case "search": return try await SearchCommand.run(context)
            case "get": return try await GetCommand.get(context)
            case "multi-get": return try await GetCommand.multiGet(context)
            case "mcp": return try await MCPCommand.run(context)
            case "model": return try await ModelCommand.run(context)
            case "embed": return try await RecordCommands.embed(context)
            case "show": return try await RecordCommands.show(context)
            case "rm": return try await RecordCommands.rm(context)
            case "stats": return try await RecordCommands.stats(context)
            case "eval": return try await EvalCommand.run(context)
            case "verify": return try await VerifyCommand.verify(context)
            case "repair": return try await VerifyCommand.repair(context)
            case "backup": return try await AdminCommands.backup(context)
            case "dump": return try await AdminCommands.dump(context)
            case "load": return try await AdminCommands.load(context)
            case "sync": return try await SyncCommand.run(context)
            default:
                throw CLIError.usage("unknown command '\(context.spec.name)'", command: nil)
            }
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
