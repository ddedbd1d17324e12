import Foundation

/// Runs the commands that open the database or the model.
enum CommandRunner {
    static func run(_ context: CommandContext) async throws -> Int32 {
        // Filled in as the store and the embedder land.
        throw CLIError.failure("'\(context.spec.name)' is not available in this build yet")
    }
}
