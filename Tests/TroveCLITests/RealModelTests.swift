import Foundation
import Testing
import Trove
import TroveChildProcess
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// The model folder the tools would use, when the model is installed (CI fetches it).
let installedModel: URL? = {
    let environment = ProcessInfo.processInfo.environment
    let directory = Locations.modelDirectory(
        flag: nil, environment: environment,
        currentDirectory: FileManager.default.currentDirectoryPath)
    let weights = directory.appendingPathComponent("model.safetensors").path
    return FileManager.default.fileExists(atPath: weights) ? directory : nil
}()

/// A few small checks with the real all-MiniLM-L6-v2; everything else uses the hashing embedder.
@Suite("With the real model", .serialized, .enabled(if: installedModel != nil))
struct RealModelTests {
    @Test("embed --json gives the model's 384 numbers exactly")
    func embed() async throws {
        let model = try #require(installedModel)
        let result = await runTrove(
            ["embed", "--json", "--model", model.path, "groceries for sunday"], services: .standard)
        #expect(result.status == 0, "\(result.err)")
        guard
            case .array(let numbers) = try JSONValue.parse(
                result.out.trimmingCharacters(in: .newlines))
        else {
            Issue.record("not an array")
            return
        }
        let printed = numbers.map { value -> Float in
            if case .double(let x) = value { return Float(x) }
            if case .int(let x) = value { return Float(x) }
            return .nan
        }
        let direct = try await BERTEmbedder(modelDirectory: model).embed(["groceries for sunday"])[
            0]
        #expect(printed.count == 384)
        #expect(printed == direct)
    }

    @Test("a paraphrased query finds its note by meaning")
    func paraphrase() async throws {
        let model = try #require(installedModel)
        let fixture = try NotesFixture()
        try fixture.write(
            "dentist.md", "Cleaning with Dr. Okafor at Riverside Dental on Tuesday at 8:30.")
        try fixture.write("furnace.txt", "Furnace filter 16x25x1, change it every three months.")
        try fixture.write("tart.md", "Lemon tart: shortcrust, eggs, sugar, lemons and cream.")
        let index = await fixture.trove(["index", "--model", model.path, "."], services: .standard)
        #expect(index.status == 0, "\(index.err)")
        let search = await fixture.trove(
            [
                "search", "--json", "--mode", "vector", "-k", "1", "--model", model.path,
                "when do I see the tooth doctor",
            ],
            services: .standard)
        let document = try JSONValue.parse(search.out)
        guard case .array(let hits)? = document["results"] else {
            Issue.record("no results: \(search.err)")
            return
        }
        #expect(hits.first?["source"]?.string == fixture.path("dentist.md"))
    }

    @Test("chunks fit the model: real token counts within the limit; the estimate stays above them")
    func chunksFit() async throws {
        let model = try #require(installedModel)
        let embedder = try BERTEmbedder(modelDirectory: model)
        let tokenizer = embedder.tokenizer
        let sentences = [
            "The furnace technician said the igniter is getting old, so budget for a replacement.",
            "Pena Palace tickets are timed: book the 10:00 entry and print them.",
            "Priya ki rajma: rajma raat bhar bhigo do, pressure cooker mein 6 seeti.",
            "Blown-in cellulose up to R60, estimate $2,900 before the Enbridge rebate.",
        ]
        var rng = SeededGenerator(seed: 11)
        let text = (0..<40).map { _ in
            (0..<4).map { _ in sentences.randomElement(using: &rng)! }.joined(separator: " ")
        }.joined(separator: "\n\n")
        let context = CommandContext(
            console: Console(out: BufferSink(), err: BufferSink(), currentDirectory: "/"),
            spec: IndexCommand.configuration, options: CommonOptions(), services: .standard)
        let chunker = try context.chunker(for: embedder, maxTokens: Chunker.defaultMaxTokens)
        let chunks = chunker.chunks(of: text)
        #expect(chunks.count > 10)
        for chunk in chunks {
            let real = tokenizer.wordPieceIDs(chunk).count
            #expect(real <= Chunker.defaultMaxTokens)
            #expect(TokenEstimate.count(Substring(chunk)) >= real)
        }
    }
}

/// The `trove` executable itself: `main.swift` forwards arguments and exits with the status.
@Suite("trove executable")
struct ExecutableTests {
    static let binary: String? = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = repo.appendingPathComponent(".build/debug/trove").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    func run(_ arguments: [String]) throws -> RunResult {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: Self.binary!)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return RunResult(status: process.terminationStatus, out: stdout, err: stderr)
    }

    @Test("exit statuses and streams of the real process", .enabled(if: binary != nil))
    func process() throws {
        let version = try run(["--version"])
        #expect(version.status == 0)
        #expect(version.out == "trove \(Commands.version)\n")
        let help = try run(["index", "--help"])
        #expect(help.status == 0)
        #expect(help.out.contains("Usage: trove index"))
        let bad = try run(["frobnicate"])
        #expect(bad.status == ExitCode.usage)
        #expect(bad.out.isEmpty)
        #expect(bad.err.hasPrefix("trove: error: unknown command 'frobnicate'"))
        let missing = try run([
            "search", "--db", "/nonexistent/x.sqlite", "--mode", "text", "hello",
        ])
        #expect(missing.status == ExitCode.notFound)
    }
}
