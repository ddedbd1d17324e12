import Foundation
import Trove
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// What one in-process run of `trove` printed and returned.
struct RunResult {
    var status: Int32
    var out: String
    var err: String
}

/// Services with the hashing embedder: fast and deterministic, for tests about the tool.
let hashingServices = Services(loadEmbedder: { _ in HashingEmbedder() })

/// Runs `trove` in-process with captured output and a controlled environment.
func runTrove(
    _ arguments: [String], environment: [String: String] = [:], directory: String = "/",
    stdin: String? = nil, terminal: Bool = false, services: Services = hashingServices
) async -> RunResult {
    let out = BufferSink()
    let err = BufferSink()
    var env = ["HOME": "/nonexistent-home"]
    env.merge(environment) { $1 }
    let console = Console(
        out: out, err: err, stdoutIsTerminal: terminal, stderrIsTerminal: terminal,
        readStandardInput: { stdin }, environment: env, currentDirectory: directory)
    let status = await TroveCommandLine.run(arguments, console: console, services: services)
    return RunResult(status: status, out: out.text, err: err.text)
}

/// The `results` array of `trove search --json` output (empty when there is none).
func results(_ document: JSONValue) -> [JSONValue] { document["results"]?.array ?? [] }

/// A folder of notes and a database path inside a temporary directory.
final class NotesFixture: Sendable {
    let directory: TemporaryDirectory
    var notes: String { directory.path("notes") }
    var database: String { directory.path("db/trove.sqlite") }

    init() throws {
        directory = try TemporaryDirectory(prefix: "trove-cli")
        try FileManager.default.createDirectory(atPath: notes, withIntermediateDirectories: true)
    }

    /// Writes `content` to `notes/<name>`, creating folders.
    func write(_ name: String, _ content: String) throws {
        let path = (notes as NSString).appendingPathComponent(name)
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(content.utf8).write(to: URL(fileURLWithPath: path))
    }

    func path(_ name: String) -> String { (notes as NSString).appendingPathComponent(name) }

    /// Runs trove with `--db` pointing at this fixture's database.
    func trove(_ arguments: [String], stdin: String? = nil, services: Services = hashingServices)
        async -> RunResult
    {
        await runTrove(
            arguments + ["--db", database], directory: notes, stdin: stdin, services: services)
    }

    /// Five notes on unrelated subjects and twelve near-identical errands: the corpus of the
    /// search output and relevance tests.
    static func errands() throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("dentist.md", "# Dentist\n\nCleaning with Dr. Okafor on Tuesday at 8:30.")
        try fixture.write(
            "garden/tomatoes.txt", "Stake the tomatoes when planting. Water at the base.")
        try fixture.write("work/standup.md", "Standup: freeze the release branch Thursday noon.")
        try fixture.write("car.md", "Winter tires on by November 15, stored at Eastside Auto.")
        try fixture.write(
            "recipes/curry.md", "Kidney bean curry: soak the beans overnight, six whistles.")
        for index in 0..<12 {
            try fixture.write("misc/note\(index).md", "Errand number \(index): call the bank.")
        }
        return fixture
    }

    /// The parsed `--json` output of a run.
    func json(_ arguments: [String]) async throws -> JSONValue {
        let result = await trove(arguments + ["--json"])
        guard result.status == 0 else {
            throw CLIError.failure("trove \(arguments) failed: \(result.status) \(result.err)")
        }
        return try JSONValue.parse(result.out)
    }
}
