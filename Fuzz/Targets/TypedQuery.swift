// libFuzzer target: the person-typed query builder (FTS5Pattern(typed:)).
// Property: whatever bytes a person types, the builder either returns nil (no words) or an
// expression that SQLite's FTS5 parser accepts; MATCH never reports a syntax error.
// Built together with Sources/TroveSQLite/*.swift by Fuzz/run.sh (same module, so no import).
import CSQLite

// One in-memory FTS5 table for the whole run (a fuzz process is single-threaded).
nonisolated(unsafe) private var fuzzDB: OpaquePointer? = {
    var db: OpaquePointer?
    precondition(sqlite3_open(":memory:", &db) == SQLITE_OK)
    precondition(sqlite3_exec(db, """
        CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 2');
        INSERT INTO t(content) VALUES ('oat milk and honey'), ('dentist on tuesday'), ('Grüße aus Köln');
        """, nil, nil, nil) == SQLITE_OK)
    return db
}()

nonisolated(unsafe) private var fuzzStatement: OpaquePointer? = {
    var statement: OpaquePointer?
    precondition(sqlite3_prepare_v2(fuzzDB, "SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank", -1, &statement, nil) == SQLITE_OK)
    return statement
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTypedQuery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let pattern = FTS5Pattern(typed: text) else {
        // nil only when there are no words at all.
        precondition(FTS5Pattern.words(in: text).isEmpty, "nil pattern for text with words")
        return 0
    }
    precondition(!pattern.words.isEmpty && !pattern.expression.isEmpty)
    let statement = fuzzStatement
    sqlite3_reset(statement)
    sqlite3_bind_text(statement, 1, pattern.expression, -1, trove_sqlite_transient())
    var rc = sqlite3_step(statement)
    while rc == SQLITE_ROW { rc = sqlite3_step(statement) }
    if rc != SQLITE_DONE {
        let message = String(cString: sqlite3_errmsg(fuzzDB))
        fatalError("FTS5 rejected the typed-query expression \(pattern.expression): \(message)")
    }
    return 0
}
