import Testing
import TroveSQLite
import TroveTestSupport

@Suite("FTS5Pattern")
struct FTS5PatternTests {
    @Test("words are quoted and OR-ed; operators lose their meaning")
    func quoting() {
        #expect(
            FTS5Pattern(typed: "dentist (tuesday)?")?.expression == "\"dentist\" OR \"tuesday\"")
        #expect(FTS5Pattern(typed: "NEAR fox* AND")?.words == ["NEAR", "fox", "AND"])
        #expect(FTS5Pattern(typed: "café 数据库 x2")?.words == ["café", "数据库", "x2"])
        #expect(FTS5Pattern(typed: "a a A")?.words == ["a"])
        #expect(FTS5Pattern(typed: "  ?! ") == nil)
        #expect(FTS5Pattern(typed: "") == nil)
        #expect(FTS5Pattern.quote("a\"b") == "\"a\"\"b\"")
        #expect(FTS5Pattern(anyOf: ["x\"y"])?.expression == "\"x\"\"y\"")
    }

    @Test("every pattern is valid FTS5 syntax, over random hostile input")
    func alwaysValid() throws {
        let c = try Connection(.inMemory)
        try c.execute(
            script: "CREATE VIRTUAL TABLE t USING fts5(x); INSERT INTO t VALUES ('fox and dog')")
        var rng = SeededGenerator(seed: 7)
        let alphabet = Array("fox \"()*:^-+{}NEAR AND OR NOT'\\;é数\t")
        for _ in 0..<500 {
            let text = String(
                (0..<Int.random(in: 0...24, using: &rng)).map { _ in
                    alphabet.randomElement(using: &rng)!
                })
            guard let pattern = FTS5Pattern(typed: text) else { continue }
            _ = try c.query("SELECT rowid FROM t WHERE t MATCH ?", [.text(pattern.expression)])
        }
        let hits = try c.query(
            "SELECT rowid FROM t WHERE t MATCH ?",
            [.text(FTS5Pattern(typed: "AND (dog")!.expression)])
        #expect(hits.count == 1)
    }
}
