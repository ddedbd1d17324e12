import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@Suite("Blob reader")
struct BlobReaderTests {
    /// A file table with blobs of 0 bytes, less than a page, and many pages (an overflow chain).
    static func table(_ dir: TemporaryDirectory) throws -> (Connection, [Int64: [UInt8]]) {
        let c = try Connection(.file(dir.path("blobs.sqlite")))
        try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, data BLOB)")
        var rng = SeededGenerator(seed: 5)
        var blobs: [Int64: [UInt8]] = [:]
        for (id, count) in [(1, 0), (2, 100), (3, 70_001)] as [(Int64, Int)] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            try c.execute("INSERT INTO t(id, data) VALUES (?, ?)", [.integer(id), .blob(bytes)])
            blobs[id] = bytes
        }
        return (c, blobs)
    }

    @Test("reads any range of a blob, small or on overflow pages, row after row")
    func ranges() throws {
        let dir = try TemporaryDirectory()
        let (c, blobs) = try Self.table(dir)
        try c.transaction(.deferred) {
            try c.withBlobReader(table: "t", column: "data") { reader in
                for id in [Int64(3), 1, 2, 3] {
                    let expected = blobs[id]!
                    #expect(try reader.open(rowid: id) == expected.count)
                    for (start, end) in [
                        (0, expected.count), (0, expected.count / 2),
                        (expected.count / 3, expected.count),
                    ] {
                        var buffer = [UInt8](repeating: 0, count: end - start)
                        try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: start) }
                        #expect(
                            buffer == Array(expected[start..<end]),
                            "row \(id), bytes \(start)..<\(end)")
                    }
                }
            }
        }
    }

    @Test("a missing row or a range past the end is an error")
    func errors() throws {
        let dir = try TemporaryDirectory()
        let (c, _) = try Self.table(dir)
        try c.withBlobReader(table: "t", column: "data") { reader in
            #expect(throws: SQLiteError.self) { try reader.open(rowid: 99) }
            #expect(try reader.open(rowid: 2) == 100)
            // moving an open reader
            #expect(throws: SQLiteError.self) { try reader.open(rowid: 99) }
            #expect(try reader.open(rowid: 2) == 100)
            var buffer = [UInt8](repeating: 0, count: 10)
            let past = #expect(throws: SQLiteError.self) {
                try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: 95) }
            }
            #expect(past?.code == .error)
            // The reader still works after a failed read.
            try buffer.withUnsafeMutableBytes { try reader.read(into: $0, at: 90) }
        }
    }
}
