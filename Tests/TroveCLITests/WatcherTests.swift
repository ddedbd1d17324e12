import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// Receives the watcher of an in-process `trove index --watch`, to stop it as Ctrl-C would.
final class WatcherBox: @unchecked Sendable {
    // @unchecked Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var stored: FolderWatcher?

    var watcher: FolderWatcher? {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    func set(_ watcher: FolderWatcher) {
        lock.lock()
        stored = watcher
        lock.unlock()
    }
}

/// The `trove` executable built next to the tests.
let troveExecutable: String? = {
    var candidates: [URL] = []
    for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
        var folder = start
        for _ in 0..<4 {
            candidates.append(folder.appendingPathComponent("trove"))
            folder = folder.deletingLastPathComponent()
        }
    }
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    candidates.append(repository.appendingPathComponent(".build/debug/trove"))
    return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
}()

/// `trove index --watch`: created, edited and deleted files reflected within a second; Ctrl-C
/// during a burst leaves a database that verifies.
@Suite("Watcher", .serialized)
struct WatcherTests {
    /// Polls `condition` every 10 ms for up to `limit` seconds; returns the seconds it took, or
    /// nil when it never held.
    func waitFor(_ limit: Double, _ condition: () async throws -> Bool) async rethrows -> Double? {
        let start = Date()
        while Date().timeIntervalSince(start) < limit {
            if try await condition() { return Date().timeIntervalSince(start) }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return nil
    }

    func sources(_ fixture: NotesFixture, _ query: String) async throws -> [String] {
        let document = try await fixture.json(["search", "--mode", "text", query])
        return (document["results"]?.array ?? []).compactMap { $0["source"]?.string }
    }

    /// The files whose records hold `word`, read straight from the table (a search command per
    /// poll would measure the command, not the watcher).
    func files(_ database: Database, _ word: String) async throws -> [String] {
        try await database.query(
            "SELECT DISTINCT json_extract(metadata, '$.file') AS file FROM notes WHERE content LIKE ?",
            bindings: [.text("%\(word)%")]
        ).compactMap { $0.string("file") }
    }

    @Test("a file created, edited and deleted is reflected within a second each")
    func createEditDelete() async throws {
        let f = try NotesFixture()
        try f.write("first.md", "The first note.")
        let box = WatcherBox()
        let services = Services(loadEmbedder: { _ in HashingEmbedder() }, watching: { box.set($0) })
        let database = f.database
        let notes = f.notes
        let watching = Task {
            await runTrove(["index", "--watch", "--db", database, "."], directory: notes, services: services)
        }
        #expect(try await waitFor(30) { box.watcher != nil } != nil)

        let store = try Database(path: f.database)
        try f.write("sub/new.md", "Marmalade recipe with Seville oranges.")
        let created = try await waitFor(5) { try await files(store, "Marmalade") == [f.path("sub/new.md")] }
        #expect(created.map { $0 < 1 } == true, "created: \(String(describing: created)) s")
        #expect(try await sources(f, "marmalade") == [f.path("sub/new.md")])

        try f.write("sub/new.md", "Lemon curd recipe instead.")
        let edited = try await waitFor(5) {
            let curd = try await files(store, "curd")
            let marmalade = try await files(store, "Marmalade")
            return curd == [f.path("sub/new.md")] && marmalade.isEmpty
        }
        #expect(edited.map { $0 < 1 } == true, "edited: \(String(describing: edited)) s")
        let curd = try await sources(f, "curd")
        let marmalade = try await sources(f, "marmalade")
        #expect(curd == [f.path("sub/new.md")] && marmalade.isEmpty)

        try FileManager.default.removeItem(atPath: f.path("sub/new.md"))
        let deleted = try await waitFor(5) { try await files(store, "curd").isEmpty }
        #expect(deleted.map { $0 < 1 } == true, "deleted: \(String(describing: deleted)) s")
        #expect(try await sources(f, "curd").isEmpty)

        // A new folder moved in is watched and indexed; a folder removed takes its notes along.
        let outside = f.directory.path("outside")
        try FileManager.default.createDirectory(atPath: outside + "/deep", withIntermediateDirectories: true)
        try Data("Quince paste.".utf8).write(to: URL(fileURLWithPath: outside + "/deep/q.md"))
        try FileManager.default.moveItem(atPath: outside, toPath: f.path("moved"))
        #expect(try await waitFor(5) { try await sources(f, "quince") == [f.path("moved/deep/q.md")] } != nil)
        try FileManager.default.removeItem(atPath: f.path("moved"))
        #expect(try await waitFor(5) { try await sources(f, "quince").isEmpty } != nil)

        box.watcher?.stop()
        let result = await watching.value
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("stopped watching"))
    }

    @Test("Ctrl-C (SIGINT) during a burst of saves: exit 0, and trove verify passes")
    func interruptDuringBurst() async throws {
        let executable = try #require(troveExecutable, "the trove executable is built with the tests")
        try #require(installedModel != nil, "the real process runs the real model")
        let f = try NotesFixture()
        try f.write("seed.md", "A first note so the database exists.")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["index", "--watch", "--model", "all-MiniLM-L6-v2", "--db", f.database, f.notes]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        let output = BufferSink()
        errors.fileHandleForReading.readabilityHandler = { handle in
            output.write(String(decoding: handle.availableData, as: UTF8.self))
        }
        try process.run()
        #expect(await waitFor(60) { output.text.contains("watching") } != nil, "\(output.text)")
        // A burst: 40 notes saved as fast as possible, interrupted while they are being indexed.
        for index in 0..<40 {
            try f.write("burst/\(index).md", "Burst note number \(index) about apples and pears.")
        }
        try await Task.sleep(nanoseconds: 150_000_000)
        process.interrupt()
        process.waitUntilExit()
        errors.fileHandleForReading.readabilityHandler = nil
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(output.text)")
        #expect(output.text.contains("stopped watching"), "\(output.text)")
        let verify = await runTrove(["verify", "--db", f.database])
        #expect(verify.status == 0, "\(verify.out) \(verify.err)")
        // Whatever the interrupted run wrote is whole: each note's file hash has its records.
        let database = try Database(path: f.database)
        let mismatched = try await database.query(
            """
            SELECT path FROM trove_files WHERE records != (SELECT count(*) FROM notes
                WHERE json_extract(metadata, '$.file') = trove_files.path)
            """)
        #expect(mismatched.isEmpty)
    }

    @Test("index --help explains --watch with an example")
    func help() async {
        let help = await runTrove(["index", "--help"])
        #expect(help.out.contains("--watch") && help.out.contains("trove index --watch"))
    }
}
