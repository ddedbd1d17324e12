import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The crash and multi-process harness of RELIABILITY.md on encrypted files: the child process
/// opens the file with a raw key passed in its environment (`TROVE_CRASH_KEY_HEX`).
@Suite("Reliability: encrypted files", .serialized)
struct EncryptedReliabilityTests {
    static let key = Data((0..<32).map { UInt8(($0 * 13 + 5) & 0xff) })
    static var environment: [String: String] {
        ["TROVE_CRASH_KEY_HEX": key.map { String(format: "%02x", $0) }.joined()]
    }

    @Test(
        "SIGKILL at seeded moments on an encrypted file: every reported batch survives, none partial"
    )
    func crashEncrypted() async throws {
        try await CrashTests().killAndReopen(encryption: Self.key)
    }

    @Test(
        "two processes write one encrypted file while this one reads it: whole batches, no errors, no plaintext"
    )
    func twoProcessesEncrypted() async throws {
        try #require(CrashChild.path != nil)
        let dir = try TemporaryDirectory()
        let path = dir.path("shared.trove")
        // Created here first: the key header then exists before either child opens the file.
        _ = try await SearchCollection(
            "shared", in: Database(path: path, encryption: .key(Self.key)), dimension: 8)
        let batches = 80
        let children = try [Int64(0), 1_000_000].map { base in
            try CrashChild.start(
                ["writer", path, "\(batches)", "\(base)"], environment: Self.environment)
        }
        let database = try Database(path: path, encryption: .key(Self.key))
        let shared = try await SearchCollection(named: "shared", in: database)
        var reads = 0
        while children.contains(where: { $0.0.isRunning }) {
            let count = try await shared.count()
            #expect(count % 10 == 0, "count \(count) is not whole batches")
            reads += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        for (process, pipe) in children {
            await CrashChild.waitForExit(process)
            let output = String(
                decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 0, "\(output)")
            #expect(!output.contains("E "), "a writer saw an error: \(output)")
            #expect(output.contains("D \(batches) 0"), "\(output)")
        }
        #expect(try await shared.count() == 2 * batches * 10)
        #expect(
            try await shared.search(Query().matching(.typed("writer batch")).limit(5)).count == 5)
        #expect(try await database.verify().isHealthy)
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let data = try #require(FileManager.default.contents(atPath: file))
            #expect(
                data.range(of: Data("writer 1000000 batch".utf8)) == nil, "plaintext in \(file)")
        }
        print(
            "two processes (encrypted): \(2 * batches) batches, \(reads) reads here while they wrote"
        )
    }
}
