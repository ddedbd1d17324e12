import Foundation
import Trove
import TroveSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The child process of the reliability tests (not a product).
///
/// ```
/// TroveCrashChild ingest <path> <batches>          write CrashWorkload batches, print "C <b>" per commit
/// TroveCrashChild writer <path> <batches> <base>   multi-process writer: 10-row batches with ids from base
/// TroveCrashChild probe <path>                     as an unprivileged user: open, read, try to write
/// TroveCrashChild documents <path> <collection> <first id> <count> <category>
///                                                  one document insert per transaction, "W <id>" after each
/// ```
/// With `TROVE_CRASH_KEY_HEX` set, `ingest` and `writer` open the file encrypted with that raw key.
/// Every line goes straight to fd 1 with write(2), so a line printed is a line the parent sees,
/// even when the process is killed a microsecond later.
@main
struct TroveCrashChild {
    static func main() async {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3 else {
            fail("usage: TroveCrashChild ingest|writer|probe <path> ...")
        }
        do {
            switch arguments[1] {
            case "ingest": try await ingest(path: arguments[2], batches: Int(arguments[3])!)
            case "writer":
                try await writer(
                    path: arguments[2], batches: Int(arguments[3])!, base: Int64(arguments[4])!)
            case "probe": await probe(path: arguments[2])
            case "documents":
                try await documents(
                    path: arguments[2], collection: arguments[3], first: Int64(arguments[4])!,
                    count: Int(arguments[5])!, category: arguments[6])
            default: fail("unknown mode \(arguments[1])")
            }
        } catch {
            say("E \(describe(error))")
            exit(1)
        }
        exit(0)
    }

    static func say(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }

    static func fail(_ message: String) -> Never {
        say("E \(message)")
        exit(2)
    }

    /// "SQLiteError <code>" / "TroveError <case text>" / anything else, one line.
    static func describe(_ error: any Error) -> String {
        if let error = error as? SQLiteError {
            return
                "SQLiteError \(error.code.rawValue) \(error.message) [\(error.extendedCode.rawValue)] \(error.sql ?? "")\(error.encryptionFailure.map { " (\($0))" } ?? "")"
        }
        if let error = error as? TroveError { return "TroveError \(error)" }
        return "\(type(of: error)) \(error)"
    }

    /// Opens the file; encrypted with the raw key in `TROVE_CRASH_KEY_HEX` (64 hex digits) when set.
    static func open(_ path: String) throws -> Database {
        guard let hex = ProcessInfo.processInfo.environment["TROVE_CRASH_KEY_HEX"] else {
            return try Database(path: path)
        }
        var key = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            key.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return try Database(path: path, encryption: .key(key))
    }

    /// Continues the crash workload from the last batch in the file.
    static func ingest(path: String, batches: Int) async throws {
        let database = try open(path)
        let collection = try await SearchCollection(
            CrashWorkload.collection, in: database, configuration: CrashWorkload.configuration)
        let counter = try await collection.fetch(id: .int(CrashWorkload.counterID))
        let last = counter.flatMap { Int($0.content.split(separator: " ").last ?? "") } ?? 0
        say("S \(last)")
        for batch in (last + 1)...(last + batches) {
            try await collection.upsert(
                CrashWorkload.rows(of: batch) + [CrashWorkload.counter(after: batch)])
            say("C \(batch)")
            // Queries between batches keep the in-memory index catching up while the file grows.
            if batch % 5 == 0 {
                _ = try await collection.search(
                    vector: CrashWorkload.vector(seed: UInt64(batch)), limit: 5)
                _ = try await collection.search(
                    Query().matching(.typed(CrashWorkload.tag(batch))).limit(5))
            }
            // A checkpoint that another process keeps from finishing throws busy: not this
            // harness's concern (it kills at random moments, checkpoints included).
            if batch % 23 == 0 { try? await database.checkpoint() }
            // Kills also land inside repair(): the FTS rebuild and the log-floor marker must be
            // all-or-nothing too.
            if batch % 17 == 0 { _ = try await database.repair() }
        }
    }

    /// One of two processes writing and reading the same file: 10-row batches, each followed by
    /// reads; every error is printed (the test expects none).
    /// Another process's commits for the live-query tests: `count` single-document transactions.
    static func documents(
        path: String, collection: String, first: Int64, count: Int, category: String
    ) async throws {
        let database = try open(path)
        let items = try await database.documents(collection, schema: ObservedWorkload.schema)
        for id in first..<(first + Int64(count)) {
            try await items.insert(Document(id: .int(id), ["category": .string(category)]))
            say("W \(id)")
        }
    }

    static func writer(path: String, batches: Int, base: Int64) async throws {
        let database = try open(path)
        let collection = try await SearchCollection("shared", in: database, dimension: 8)
        say("S")
        var errors = 0
        for b in 0..<Int64(batches) {
            let entries = (0..<Int64(10)).map { i -> VectorEntry in
                let id: Int64 = base + b * 10 + i
                return VectorEntry(
                    id: .int(id), content: "writer \(base) batch \(b) row \(i)", source: "w\(base)",
                    vector: Array(CrashWorkload.vector(seed: UInt64(id)).prefix(8)))
            }
            do {
                try await collection.insert(entries)
                let count = try await collection.count()
                if count % 10 != 0 { say("E partial batch visible: count \(count)") }
                _ = try await collection.search(vector: entries[0].vector, limit: 3)
                _ = try await collection.search(Query().matching(.typed("writer batch")).limit(3))
            } catch {
                errors += 1
                say("E \(describe(error))")
            }
        }
        say("D \(batches) \(errors)")
    }

    /// Drops root (the tests run as root, which ignores file modes), then reports what works on
    /// a file or folder the test made read-only.
    static func probe(path: String) async {
        if getuid() == 0 {
            guard setgid(65534) == 0, setuid(65534) == 0 else { fail("cannot drop privileges") }
        }
        let database: Database
        do {
            database = try Database(path: path)
            say("open ok")
        } catch {
            say("open error \(describe(error))")
            return
        }
        do {
            let items = try await SearchCollection(named: "items", in: database)
            say("count \(try await items.count())")
            let vectorHits = try await items.search(vector: [1, 0, 0, 0], limit: 3)
            say("search \(vectorHits.map(\.id))")
            let textHits = try await items.search(Query().matching(.typed("row")).limit(3))
            say("text \(textHits.map(\.id))")
            try await items.insert(VectorEntry(id: 999, content: "new", vector: [0, 1, 0, 0]))
            say("insert ok")
        } catch {
            say("error \(describe(error))")
        }
    }
}
