import Foundation
import Testing
import Trove
import TroveChildProcess
import TroveSQLite
import TroveTestSupport

/// Everything a person could observe of a collection: every row (with its vector), the count,
/// and the answers to a fixed vector query and a fixed text query. Equal snapshots before and
/// after a rejected input mean the input changed nothing.
struct CollectionSnapshot: Equatable {
    var count: Int
    var rows: [VectorEntry]
    var vectorHits: [Int64]
    var textHits: [Int64]

    init(_ collection: SearchCollection, query: [Float]? = nil, text: String = "row") async throws {
        count = try await collection.count()
        let database = collection.database
        let ids = try await database.query("SELECT id FROM \"\(collection.name)\" ORDER BY id")
            .compactMap {
                $0.int64(at: 0)
            }
        var rows: [VectorEntry] = []
        for id in ids { if let row = try await collection.fetch(id: .int(id)) { rows.append(row) } }
        self.rows = rows
        let q = query ?? [Float](repeating: 0.5, count: collection.configuration.dimension)
        vectorHits = try await collection.search(vector: q, limit: 10).map(\.id.integer)
        textHits =
            collection.configuration.lexicalSearch
            ? try await collection.search(Query().matching(.typed(text)).limit(10)).map(
                \.id.integer) : []
    }
}

/// A collection with `count` seeded rows, in memory or in a file.
func seededCollection(
    _ database: Database, name: String = "items", dimension: Int = 4, count: Int = 20,
    seed: UInt64 = 7
) async throws -> SearchCollection {
    let collection = try await SearchCollection(name, in: database, dimension: dimension)
    var rng = SeededGenerator(seed: seed)
    let entries = (1...Int64(count)).map { id in
        VectorEntry(
            id: .int(Int64(id)), content: "row \(id) word\(id % 5)", source: "s\(id % 3)",
            metadata: "{\"n\":\(id)}", vector: rng.vector(dimension: dimension))
    }
    try await collection.insert(entries)
    return collection
}

/// Runs `body`, expects it to throw an error of type E matching `matches`, and returns it.
@discardableResult
func expectError<E: Error>(
    _ errorType: E.Type, _ body: () async throws -> Void, matches: (E) -> Bool = { _ in true },
    sourceLocation: SourceLocation = #_sourceLocation
) async -> E? {
    do {
        try await body()
        Issue.record("expected \(E.self), nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as E {
        #expect(matches(error), "unexpected \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record(
            "expected \(E.self), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// The TroveCrashChild executable built next to the test bundle.
enum CrashChild {
    static let path: String? = {
        if let path = ProcessInfo.processInfo.environment["TROVE_CRASH_CHILD"] { return path }
        var candidates: [URL] = []
        for start in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0])] {
            var dir = start
            for _ in 0..<4 {
                candidates.append(dir.appendingPathComponent("TroveCrashChild"))
                dir = dir.deletingLastPathComponent()
            }
        }
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(repo.appendingPathComponent(".build/debug/TroveCrashChild"))
        return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Starts the child with `arguments`; its stdout is collected into the returned pipe.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (
        ChildProcess, Pipe
    ) {
        let process = ChildProcess()
        process.executableURL = URL(
            fileURLWithPath: try #require(path, "TroveCrashChild not built"))
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }

    /// Waits for the process on a Dispatch thread, so the Swift concurrency pool (two threads
    /// on a two-core machine) stays free for the tasks the test is running meanwhile.
    static func waitForExit(_ process: ChildProcess) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }

    /// Runs the child to completion and returns its output lines.
    static func run(_ arguments: [String]) throws -> [String] {
        let (process, pipe) = try start(arguments)
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}

extension DocumentID {
    /// The integer of an Int64 id, for tests of Int64 collections that compare ids with
    /// integers (oracles, arithmetic on ids).
    var integer: Int64 {
        guard case .int(let value) = self else { preconditionFailure("not an Int64 id: \(self)") }
        return value
    }
}
