import Foundation
import Testing
import TroveChildProcess
import TroveTestSupport

@testable import TroveCLI

/// `trove mcp` driven by a real client: the official MCP Python SDK, in the venv that
/// scripts/setup.sh creates (.build/mcp-venv), runs Tests/MCPClient/mcp_client_check.py against
/// the built `trove` on a database indexed (with the installed models) from a small notes folder.
/// Without the SDK or the models the test fails: it never skips.
@Suite("MCP server with the MCP Python SDK", .serialized)
struct MCPClientTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let python = repository.appendingPathComponent(".build/mcp-venv/bin/python").path
    static let script = repository.appendingPathComponent("Tests/MCPClient/mcp_client_check.py")
        .path

    /// Runs a program to its end; its output and status.
    static func run(_ executable: String, _ arguments: [String], directory: String) throws
        -> RunResult
    {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let out = Pipe()
        // stderr goes to a file, so that neither stream can fill up and block the process.
        let errors = try TemporaryDirectory(prefix: "trove-mcp-stderr")
        _ = FileManager.default.createFile(atPath: errors.path("stderr"), contents: nil)
        let err = try FileHandle(forWritingTo: errors.url.appendingPathComponent("stderr"))
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try err.close()
        let stderr = (try? String(contentsOfFile: errors.path("stderr"), encoding: .utf8)) ?? ""
        return RunResult(status: process.terminationStatus, out: output, err: stderr)
    }

    @Test("tools, resources, errors, 20 concurrent calls and results equal to trove search --json")
    func realClient() async throws {
        let trove = try #require(
            ExecutableTests.binary, "the trove executable is not built (.build/debug/trove)")
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.python),
            "the MCP Python SDK is missing: run 'bash scripts/setup.sh' (it creates .build/mcp-venv with mcp)"
        )
        guard FileManager.default.isExecutableFile(atPath: Self.python) else { return }

        let fixture = try NotesFixture()
        try fixture.write(
            "dentist.md",
            "# Dentist\nCleaning with Dr. Okafor at Riverside Dental on Tuesday at 8:30.\nBring the insurance card.\n"
        )
        try fixture.write("furnace.txt", "Furnace filter 16x25x1, change it every three months.\n")
        try fixture.write(
            "journal/2025-05-01.md", "# May 1\nWalked to the lake. Lemon tart for dinner.\n")
        try fixture.write("receipts.md", "Old receipts and warranty cards go in the blue folder.\n")
        let add = try Self.run(
            trove,
            [
                "collection", "add", fixture.notes, "--name", "home", "--context",
                "Household notes", "--db",
                fixture.database,
            ],
            directory: fixture.notes)
        #expect(add.status == 0, "\(add.err)")
        let index = try Self.run(
            trove, ["index", "--quiet", "--db", fixture.database], directory: fixture.notes)
        #expect(
            index.status == 0,
            "indexing needs the installed models (bash scripts/setup.sh): \(index.err)")
        guard index.status == 0 else { return }

        let check = try await Task.detached {
            try Self.run(
                Self.python, [Self.script, trove, fixture.database, fixture.notes],
                directory: fixture.notes)
        }.value
        #expect(check.status == 0, "\(check.out)\n\(check.err)")
        #expect(check.out.contains(" checks, 0 failed"), "\(check.out)")
    }
}
