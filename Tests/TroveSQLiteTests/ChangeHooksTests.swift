import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

/// The commit notifications and read tracking live queries are built on.
@Suite("Change hooks")
struct ChangeHooksTests {
    final class Commits {
        var seen: [Set<String>] = []
    }

    @Test(
        "each commit reports the tables it changed, trigger-written ones included, once visible to readers"
    )
    func commitsReportTables() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("hooks.sqlite")
        let writer = try Connection(path: path)
        let reader = try Connection(path: path, options: .init(readOnly: true, walMode: false))
        try writer.execute(
            script: """
                CREATE TABLE Notes(id INTEGER PRIMARY KEY, body TEXT);
                CREATE TABLE notes_log(seq INTEGER PRIMARY KEY, rid INTEGER);
                CREATE TABLE other(x);
                CREATE TRIGGER notes_ai AFTER INSERT ON Notes BEGIN INSERT INTO notes_log(rid) VALUES (new.id); END;
                """)
        let commits = Commits()
        var visibleAtDelivery: [Int64] = []
        writer.observeCommits { tables in
            commits.seen.append(tables)
            visibleAtDelivery.append(
                (try? reader.scalar("SELECT count(*) FROM Notes")?.int64Value) ?? -1)
        }
        try writer.execute("INSERT INTO Notes(body) VALUES (?)", ["a"])
        try writer.transaction {
            try writer.execute("INSERT INTO other VALUES (1)")
            try writer.execute("UPDATE Notes SET body = 'b'")
        }
        #expect(throws: SQLiteError.self) {
            try writer.transaction {
                try writer.execute("INSERT INTO other VALUES (2)")
                try writer.execute("INSERT INTO missing VALUES (1)")
            }
        }
        // DDL changes no rows: nothing reported
        try writer.execute(script: "CREATE TABLE later(x)")
        #expect(commits.seen == [["notes", "notes_log"], ["other", "notes"]])
        #expect(visibleAtDelivery == [1, 1])  // another connection already sees each commit
    }

    @Test("in-memory connections report at the commit")
    func inMemory() throws {
        let connection = try Connection(.inMemory)
        try connection.execute(script: "CREATE TABLE t(x)")
        let commits = Commits()
        connection.observeCommits { commits.seen.append($0) }
        try connection.execute("INSERT INTO t VALUES (1)")
        #expect(commits.seen == [["t"]])
    }

    @Test("readTables names the tables the statements prepared in its body read")
    func readTables() throws {
        let connection = try Connection(.inMemory)
        try connection.execute(
            script: """
                CREATE TABLE a(x); CREATE TABLE B(y); CREATE TABLE c(z);
                CREATE VIEW v AS SELECT y FROM B;
                """)
        let cached = try connection.cachedStatement("SELECT count(*) FROM c")
        _ = try cached.rows()
        let (rows, tables) = try connection.readTables {
            try connection.prepare("SELECT count(*) FROM a JOIN v ON 1").rows()
        }
        #expect(rows.count == 1)
        #expect(tables == ["a", "b"])
        // The cached statement still runs after the authorizer came and went (it recompiles).
        #expect(try connection.cachedStatement("SELECT count(*) FROM c").rows().count == 1)
    }
}
