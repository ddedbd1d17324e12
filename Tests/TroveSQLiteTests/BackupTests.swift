import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

/// `Connection.backup(toNewFile:)`: SQLite's online backup API, one snapshot, new files only.
@Suite("Connection backup")
struct ConnectionBackupTests {
    @Test("copies one snapshot while another connection commits, and refuses an existing target")
    func snapshotWhileWriting() throws {
        let dir = try TemporaryDirectory()
        let writer = try Connection(path: dir.path("a.sqlite"))
        try writer.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
        for i in 0..<500 { try writer.execute("INSERT INTO t(v) VALUES (?)", [.text("row \(i)")]) }
        let reader = try Connection(path: dir.path("a.sqlite"), options: .init(readOnly: true))
        try reader.execute(script: "BEGIN")
        #expect(try reader.scalar("SELECT count(*) FROM t")?.int64Value == 500)
        // Committed after the reader's snapshot began: not in the copy.
        try writer.execute("INSERT INTO t(v) VALUES ('late')")
        try reader.backup(toNewFile: dir.path("b.sqlite"))
        try reader.execute(script: "COMMIT")
        let copy = try Connection(path: dir.path("b.sqlite"))
        #expect(try copy.scalar("SELECT count(*) FROM t")?.int64Value == 500)
        #expect(try copy.scalar("PRAGMA integrity_check")?.stringValue == "ok")
        #expect(throws: SQLiteError.self) { try reader.backup(toNewFile: dir.path("b.sqlite")) }
        #expect(try copy.scalar("SELECT count(*) FROM t")?.int64Value == 500)
    }
}
