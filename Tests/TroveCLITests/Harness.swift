import Foundation
import TroveCLI

/// What one in-process run of `trove` printed and returned.
struct RunResult {
    var status: Int32
    var out: String
    var err: String
}

/// Runs `trove` in-process with captured output and a controlled environment.
func runTrove(
    _ arguments: [String], environment: [String: String] = [:], directory: String = "/",
    stdin: String? = nil, terminal: Bool = false
) async -> RunResult {
    let out = BufferSink()
    let err = BufferSink()
    var env = ["HOME": "/nonexistent-home"]
    env.merge(environment) { $1 }
    let console = Console(
        out: out, err: err, stdoutIsTerminal: terminal, stderrIsTerminal: terminal,
        readStandardInput: { stdin }, environment: env, currentDirectory: directory)
    let status = await TroveCommandLine.run(arguments, console: console)
    return RunResult(status: status, out: out.text, err: err.text)
}
