import Testing
import TroveSQLite

@Suite("FTS5 tokenizer registration")
struct FTS5TokenizerTests {
    /// A tokenizer written here: terms are runs of bytes other than space, folded to upper case;
    /// with the argument "reverse" each term is reversed.
    func register(_ connection: Connection) throws {
        try connection.registerFTS5Tokenizer(named: "spaces") { arguments in
            guard arguments.isEmpty || arguments == ["reverse"] else { return nil }
            let reverse = arguments == ["reverse"]
            return { text, emit in
                var start = 0
                for index in 0...text.count {
                    if index == text.count || text[index] == UInt8(ascii: " ") {
                        if index > start {
                            var term = text[start..<index].map {
                                $0 >= 0x61 && $0 <= 0x7A ? $0 - 32 : $0
                            }
                            if reverse { term.reverse() }
                            let keepGoing = term.withUnsafeBufferPointer { emit($0, start, index) }
                            if !keepGoing { return }
                        }
                        start = index + 1
                    }
                }
            }
        }
    }

    @Test(
        "documents and queries go through the registered Swift tokenizer; offsets drive highlight()"
    )
    func tokenizesDocumentsAndQueries() throws {
        let connection = try Connection(.inMemory)
        try register(connection)
        try connection.execute(
            script: """
                CREATE VIRTUAL TABLE t USING fts5(x, tokenize='spaces');
                CREATE VIRTUAL TABLE v USING fts5vocab(t, row);
                INSERT INTO t(rowid, x) VALUES (1, 'alpha beta-gamma  delta'), (2, 'Beta-Gamma');
                """)
        let terms = try connection.query("SELECT term FROM v ORDER BY term").compactMap {
            $0.string(at: 0)
        }
        #expect(terms == ["ALPHA", "BETA-GAMMA", "DELTA"])
        let rows = try connection.query(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid", [.text("\"beta-gamma\"")])
        #expect(rows.compactMap { $0.int64(at: 0) } == [1, 2])
        let highlighted = try connection.scalar(
            "SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH ? AND rowid = 1",
            [.text("delta")])?.stringValue
        #expect(highlighted == "alpha beta-gamma  [delta]")
    }

    @Test("arguments reach the factory; rejected arguments fail the statement")
    func arguments() throws {
        let connection = try Connection(.inMemory)
        try register(connection)
        try connection.execute(
            script: """
                CREATE VIRTUAL TABLE r USING fts5(x, tokenize='spaces reverse');
                CREATE VIRTUAL TABLE rv USING fts5vocab(r, row);
                INSERT INTO r(x) VALUES ('abc');
                """)
        #expect(
            try connection.query("SELECT term FROM rv").compactMap { $0.string(at: 0) } == ["CBA"])
        #expect(throws: SQLiteError.self) {
            try connection.execute(
                script: "CREATE VIRTUAL TABLE bad USING fts5(x, tokenize='spaces nonsense')")
        }
    }

    @Test("registering on a closed connection throws")
    func closed() throws {
        let connection = try Connection(.inMemory)
        connection.close()
        #expect(throws: SQLiteError.self) { try register(connection) }
    }
}
