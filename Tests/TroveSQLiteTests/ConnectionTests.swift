import CSQLite
import Foundation
import Testing
import TroveSQLite
import TroveTestSupport

@Suite("Connection")
struct ConnectionTests {
    @Test("in-memory database runs statements and queries")
    func inMemory() throws {
        let c = try Connection(.inMemory)
        try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT)")
        try c.execute("INSERT INTO t(name) VALUES (?)", ["a"])
        try c.execute("INSERT INTO t(name) VALUES (?)", ["b"])
        #expect(c.lastInsertRowID == 2)
        #expect(c.changes == 1)
        let rows = try c.query("SELECT id, name FROM t ORDER BY id")
        #expect(rows.map { $0.string("name") } == ["a", "b"])
        #expect(try c.scalar("SELECT count(*) FROM t") == .integer(2))
        #expect(try c.scalar("SELECT name FROM t WHERE id = ?", [99]) == nil)
        #expect(c.totalChanges == 2)
        #expect(try c.prepare("SELECT 1").isReadOnly)
        #expect(try !c.prepare("DELETE FROM t").isReadOnly)
        #expect(Connection.sqliteVersion.hasPrefix("3."))
        let api = try #require(c.fts5API)
        #expect(api.pointee.iVersion >= 2)
    }

    @Test(
        "SQLite counts no memory (statistics off before it initialises: no global mutex per allocation)"
    )
    func noMemoryStatistics() throws {
        let c = try Connection(.inMemory)
        try c.execute(script: "CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(100000))")
        #expect(try c.scalar("SELECT length(x) FROM t") == .integer(100_000))
        #expect(sqlite3_memory_used() == 0)
    }

    @Test("text binds every byte: an embedded NUL is stored, an empty string is not NULL")
    func textBytes() throws {
        let c = try Connection(.inMemory)
        try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT)")
        let values = ["a\u{0}b", "", "héllo 数据库", "\u{0}"]
        for (i, v) in values.enumerated() {
            let statement = try c.prepare("INSERT INTO t(id, s) VALUES (?, ?)")
            try statement.bind(Int64(i), at: 1)
            try statement.bind(v, at: 2)
            while try statement.step() {}
        }
        try c.execute("INSERT INTO t(id, s) VALUES (?, ?)", [.integer(9), .text("x\u{0}y")])
        let rows = try c.query("SELECT s, length(CAST(s AS BLOB)), s IS NULL FROM t ORDER BY id")
        #expect(rows.map { $0.string(at: 0) } == values + ["x\u{0}y"])
        #expect(rows.map { $0.int64(at: 1) } == [3, 0, 16, 1, 3])
        #expect(rows.allSatisfy { $0.int64(at: 2) == 0 })
    }

    @Test("file database uses WAL and persists across connections")
    func fileWAL() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        do {
            let c = try Connection(path: path)
            #expect(try c.scalar("PRAGMA journal_mode") == .text("wal"))
            try c.execute(script: "CREATE TABLE t(x); INSERT INTO t VALUES (42)")
        }
        let again = try Connection(path: path)
        #expect(try again.scalar("SELECT x FROM t") == .integer(42))
    }

    @Test("read-only connection refuses writes; missing file is an error")
    func readOnly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        try Connection(path: path).execute(script: "CREATE TABLE t(x)")
        let ro = try Connection(path: path, options: .init(readOnly: true))
        #expect(ro.isReadOnly)
        #expect(try ro.query("SELECT * FROM t").isEmpty)
        let error = #expect(throws: SQLiteError.self) { try ro.execute("INSERT INTO t VALUES (1)") }
        #expect(error?.code == .readOnly)
        #expect(throws: SQLiteError.self) {
            try Connection(path: dir.path("missing.sqlite"), options: .init(readOnly: true))
        }
        #expect(throws: SQLiteError.self) {
            try Connection(path: dir.path("a.sqlite"), options: .init(create: false))
        }
    }

    @Test("a file that is not a database fails at open with notADatabase")
    func notADatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("junk.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: SQLiteError.self) { try Connection(path: path) }
        #expect(error?.code == .notADatabase)
    }

    @Test("errors carry code, extended code, message and SQL")
    func errorDetails() throws {
        let c = try Connection(.inMemory)
        try c.execute(
            script: "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT NOT NULL CHECK (length(v) < 3))")
        try c.execute("INSERT INTO t VALUES (1, 'a')")
        let dup = #expect(throws: SQLiteError.self) {
            try c.execute("INSERT INTO t VALUES (1, 'b')")
        }
        #expect(dup?.code == .constraint)
        #expect(dup?.extendedCode == .constraintPrimaryKey)
        #expect(dup?.sql == "INSERT INTO t VALUES (1, 'b')")
        #expect(dup?.message.contains("UNIQUE") == true)
        let check = #expect(throws: SQLiteError.self) {
            try c.execute("INSERT INTO t VALUES (2, 'long')")
        }
        #expect(check?.extendedCode == .constraintCheck)
        let syntax = #expect(throws: SQLiteError.self) { try c.prepare("SELEC 1") }
        #expect(syntax?.code == .error)
        #expect(syntax?.description.contains("SELEC 1") == true)
        let missing = #expect(throws: SQLiteError.self) { try c.query("SELECT * FROM nope") }
        #expect(missing?.message.contains("no such table") == true)
        let script = #expect(throws: SQLiteError.self) {
            try c.execute(script: "CREATE TABLE t(x)")
        }
        #expect(script?.message.contains("already exists") == true)
    }

    @Test("prepare rejects several statements and counts bindings")
    func prepareChecks() throws {
        let c = try Connection(.inMemory)
        #expect(throws: SQLiteError.self) { try c.prepare("SELECT 1; SELECT 2") }
        #expect(throws: SQLiteError.self) { try c.prepare("   ") }
        let s = try c.prepare("SELECT ? + ?")
        #expect(s.parameterCount == 2)
        let error = #expect(throws: SQLiteError.self) { try s.rows([1]) }
        #expect(error?.code == .range)
        #expect(try s.rows([1, 2]).first?[0] == .integer(3))
        #expect(try c.prepare("SELECT 1;  ").columnCount == 1)
    }

    @Test("statement cache returns the same statement, reset, and survives reuse")
    func statementCache() throws {
        let c = try Connection(.inMemory)
        let a = try c.cachedStatement("SELECT ?")
        let b = try c.cachedStatement("SELECT ?")
        #expect(a === b)
        for i in 0..<100 {
            #expect(try c.scalar("SELECT ?", [.integer(Int64(i))]) == .integer(Int64(i)))
        }
        c.clearStatementCache()
        #expect(try c.cachedStatement("SELECT ?") !== a)
    }

    @Test("busy timeout: a second writer waits, then fails with busy")
    func busy() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        let a = try Connection(path: path)
        try a.execute(script: "CREATE TABLE t(x)")
        let b = try Connection(path: path, options: .init(busyTimeout: .milliseconds(50)))
        try a.execute(script: "BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
        let start = ContinuousClock.now
        let error = #expect(throws: SQLiteError.self) { try b.execute("INSERT INTO t VALUES (2)") }
        #expect(error?.code == .busy)
        #expect(ContinuousClock.now - start >= .milliseconds(40))
        try a.execute(script: "COMMIT")
        try b.execute("INSERT INTO t VALUES (2)")
        #expect(try a.scalar("SELECT count(*) FROM t") == .integer(2))
    }

    @Test("closing twice is harmless and statements outlive the close safely")
    func closeIdempotent() throws {
        let c = try Connection(.inMemory)
        let s = try c.prepare("SELECT 7")
        c.close()
        c.close()
        #expect(c.handle == nil)
        #expect(try s.rows().first?[0] == .integer(7))
    }
}

@Suite("Statement and Row")
struct StatementTests {
    @Test("every value type round-trips through bind and column reads")
    func roundTrip() throws {
        let c = try Connection(.inMemory)
        try c.execute(script: "CREATE TABLE t(i, r, s, b, n)")
        let bytes: [UInt8] = [0, 1, 2, 255]
        try c.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [.integer(-7), .real(2.5), "héllo", .blob(bytes), nil])
        try c.execute(
            "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
            [.int(Int.max), .double(-0.0), "", .blob([]), .data(Data([9]))])
        let rows = try c.query("SELECT i, r, s, b, n FROM t ORDER BY rowid")
        let row = rows[0]
        #expect(row.int64("i") == -7)
        #expect(row.int(at: 0) == -7)
        #expect(row.double("r") == 2.5)
        #expect(row.double("i") == -7)  // integers widen
        #expect(row.string("s") == "héllo")
        #expect(row.blob("b") == bytes)
        #expect(row.data("b") == Data(bytes))
        #expect(row.isNull("n"))
        #expect(row.isNull("missing"))
        #expect(row["n"] == .null)
        #expect(row[0] == .integer(-7))
        #expect(row["S"] == .text("héllo"))
        #expect(row.string("i") == nil)
        #expect(row[0, as: Int32.self] == -7)
        #expect(row["n", as: Int64?.self] == .some(nil))
        #expect(rows[1].int64("i") == Int64(Int.max))
        #expect(rows[1].string("s") == "")
        #expect(rows[1].blob("b") == [])
        #expect(rows[1].data("n") == Data([9]))
        #expect(row.columnNames == ["i", "r", "s", "b", "n"])
    }

    @Test("direct column reads and in-place blob access")
    func directReads() throws {
        let c = try Connection(.inMemory)
        let floats: [Float] = [1, -2, 3.5]
        let s = try c.prepare("SELECT ?, ?, ?, ?, NULL")
        try s.bind(99 as Int64, at: 1)
        try s.bind(1.5, at: 2)
        try s.bind("x", at: 3)
        try floats.withUnsafeBytes { try s.bind(bytes: $0, at: 4) }
        #expect(try s.step())
        #expect(s.int64(at: 0) == 99)
        #expect(s.double(at: 1) == 1.5)
        #expect(s.string(at: 2) == "x")
        let back: [Float] = s.withBlob(at: 3) { Array($0!.bindMemory(to: Float.self)) }
        #expect(back == floats)
        #expect(s.isNull(at: 4))
        #expect(s.string(at: 4) == nil)
        #expect(s.blob(at: 4) == nil)
        #expect(s.withBlob(at: 4) { $0 == nil })
        #expect(try !s.step())
        s.reset()
        s.clearBindings()
        #expect(try s.step())  // cleared bindings read as NULL
        #expect(s.isNull(at: 0))
    }

    @Test("forEachRow streams rows; Bool and Float convert")
    func forEachRow() throws {
        let c = try Connection(.inMemory)
        let s = try c.prepare("SELECT value FROM json_each(?)")
        var seen: [Int64] = []
        try s.forEachRow(["[1,2,3]"]) { seen.append($0.int64(at: 0)) }
        #expect(seen == [1, 2, 3])
        let row = try c.query("SELECT ?, ?", [true.sqlValue, Float(0.5).sqlValue])[0]
        #expect(row[0, as: Bool.self] == true)
        #expect(row[1, as: Float.self] == 0.5)
    }

    @Test("SQLValue literals and description")
    func literals() {
        let values: [SQLValue] = [nil, 1, 2.5, "it's", true, .blob([0xAB])]
        #expect(values.map(\.description) == ["NULL", "1", "2.5", "'it''s'", "1", "x'ab'"])
        #expect(SQLValue.real(3).int64Value == 3)
        #expect(SQLValue.real(3.5).int64Value == nil)
        #expect(SQLValue.text("ab").blobValue == [97, 98])
    }
}

@Suite("Transactions")
struct TransactionTests {
    func makeConnection() throws -> Connection {
        let c = try Connection(.inMemory)
        try c.execute(script: "CREATE TABLE t(x UNIQUE)")
        return c
    }
    func count(_ c: Connection) throws -> Int64? {
        try c.scalar("SELECT count(*) FROM t")?.int64Value
    }

    struct Boom: Error {}

    @Test("commit when the body returns")
    func commit() throws {
        let c = try makeConnection()
        let value = try c.transaction(.immediate) {
            try c.execute("INSERT INTO t VALUES (1)")
            return 5
        }
        #expect(value == 5)
        #expect(try count(c) == 1)
        #expect(!c.isInTransaction)
    }

    @Test("roll back when the body throws, and when a statement fails")
    func rollback() throws {
        let c = try makeConnection()
        #expect(throws: Boom.self) {
            try c.transaction {
                try c.execute("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(try count(c) == 0)
        #expect(throws: SQLiteError.self) {
            try c.transaction {
                try c.execute("INSERT INTO t VALUES (1)")
                try c.execute("INSERT INTO t VALUES (1)")
            }
        }
        #expect(try count(c) == 0)
        #expect(!c.isInTransaction)
    }

    @Test("savepoints roll back only their own work")
    func savepoints() throws {
        let c = try makeConnection()
        try c.transaction {
            try c.execute("INSERT INTO t VALUES (1)")
            #expect(throws: Boom.self) {
                try c.savepoint {
                    try c.execute("INSERT INTO t VALUES (2)")
                    throw Boom()
                }
            }
            // A nested transaction is a savepoint too.
            try c.transaction { try c.execute("INSERT INTO t VALUES (3)") }
            #expect(c.isInTransaction)
        }
        #expect(try c.query("SELECT x FROM t ORDER BY x").map { $0.int64(at: 0) } == [1, 3])
        // A savepoint outside a transaction acts as one.
        #expect(throws: Boom.self) {
            try c.savepoint {
                try c.execute("INSERT INTO t VALUES (4)")
                throw Boom()
            }
        }
        #expect(try count(c) == 2)
        #expect(!c.isInTransaction)
    }
}

@Suite("Regressions")
struct RegressionTests {
    @Test("a long statement is not mistaken for several (the tail pointer outlived its C string)")
    func longStatementTail() throws {
        let c = try Connection(.inMemory)
        try c.execute(script: "CREATE TABLE t(id INTEGER PRIMARY KEY, v)")
        let n = 600
        let sql =
            "INSERT INTO t(id, v) VALUES "
            + repeatElement("(?, ?)", count: n).joined(separator: ", ")
            + " ON CONFLICT(id) DO UPDATE SET v = excluded.v"
        for _ in 0..<3 {
            try c.prepare(sql).execute((0..<(2 * n)).map { .integer(Int64($0)) })
        }
        #expect(try c.scalar("SELECT count(*) FROM t") == .integer(Int64(n)))
        let error = #expect(throws: SQLiteError.self) { try c.prepare(sql + "; SELECT 1") }
        #expect(error?.description.count ?? 0 < 500)
    }
}
