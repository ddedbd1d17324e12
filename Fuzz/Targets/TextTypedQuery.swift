// libFuzzer target: TroveText's typed-query parser (TypedQuery), the query builder for what a
// person types into a search box. Properties: any bytes parse without trapping; an empty query
// has no expression; a non-empty one yields an FTS5 MATCH expression that SQLite's FTS5 parser
// accepts (no syntax error), and every clause has terms.
// Built with Sources/TroveText/*.swift (module TroveText) and the CSQLite module map.
import CSQLite

private let fuzzTokenizer = Tokenizer(.english)

nonisolated(unsafe) private var fuzzDB: OpaquePointer? = {
    var db: OpaquePointer?
    precondition(sqlite3_open(":memory:", &db) == SQLITE_OK)
    precondition(sqlite3_exec(db, """
        CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61 remove_diacritics 2');
        INSERT INTO t(content) VALUES ('where did I put the blue folder'), ('数据库 e-mail GNU/Linux');
        """, nil, nil, nil) == SQLITE_OK)
    return db
}()

nonisolated(unsafe) private var fuzzStatement: OpaquePointer? = {
    var statement: OpaquePointer?
    precondition(sqlite3_prepare_v2(fuzzDB, "SELECT rowid FROM t WHERE t MATCH ?", -1, &statement, nil) == SQLITE_OK)
    return statement
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTextTypedQuery(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let query = TypedQuery(text, tokenizer: fuzzTokenizer)
    guard let expression = query.fts5Expression else {
        precondition(query.isEmpty, "a non-empty query without an expression")
        return 0
    }
    precondition(!query.isEmpty && query.clauses.allSatisfy { !$0.terms.isEmpty && !$0.words.isEmpty })
    let statement = fuzzStatement
    sqlite3_reset(statement)
    sqlite3_bind_text(statement, 1, expression, -1, trove_sqlite_transient())
    var rc = sqlite3_step(statement)
    while rc == SQLITE_ROW { rc = sqlite3_step(statement) }
    if rc != SQLITE_DONE {
        fatalError("FTS5 rejected the typed-query expression \(expression): \(String(cString: sqlite3_errmsg(fuzzDB)))")
    }
    return 0
}
