import Testing
import TroveTestSupport

@testable import TroveText

@Suite("TypedQuery")
struct TypedQueryTests {
    let tokenizer = Tokenizer(.english)

    @Test("words are OR-ed quoted terms; stop words dropped")
    func termsAndStopwords() {
        let query = TypedQuery("Where did I put the groceries from Costco?", tokenizer: tokenizer)
        #expect(query.clauses.map(\.words) == [["put"], ["groceries"], ["Costco"]])
        #expect(query.fts5Expression == "\"put\" OR \"groceries\" OR \"Costco\"")
        #expect(query.contentTerms == ["put", "groceri", "costco"])
        #expect(query.droppedStopwords == ["Where", "did", "I", "the", "from"])
    }

    @Test("a query written in another language drops that language's function words")
    func stopwordsOfTheQuerysLanguage() {
        let hinglish = TypedQuery("gaadi ka insurance kab renew karna hai?", tokenizer: tokenizer)
        #expect(hinglish.clauses.map(\.words) == [["gaadi"], ["insurance"], ["renew"]])
        #expect(hinglish.droppedStopwords == ["ka", "kab", "karna", "hai"])
        let german = TypedQuery("Bis wann müssen die Winterreifen aufs Auto?", tokenizer: tokenizer)
        #expect(german.clauses.map(\.words) == [["Winterreifen"], ["Auto"]])
        let french = TypedQuery(
            "Combien coûte l'appareil dentaire de Mateo ?", tokenizer: tokenizer)
        #expect(french.clauses.map(\.words) == [["coûte"], ["appareil"], ["dentaire"], ["Mateo"]])
        let spanish = TypedQuery(
            "¿cuándo le toca la vacuna de la rabia a la perra?", tokenizer: tokenizer)
        #expect(spanish.clauses.map(\.words) == [["toca"], ["vacuna"], ["rabia"], ["perra"]])
    }

    @Test("an English query keeps words that only another language calls stop words")
    func englishKeepsForeignStopwords() {
        // `hat` and `die` are German function words, `main` a Hindi one, `son` a Spanish one.
        #expect(
            TypedQuery("winter hat for the die cast", tokenizer: tokenizer).clauses.map(\.words)
                == [["winter"], ["hat"], ["die"], ["cast"]])
        #expect(
            TypedQuery("where is the main son of Des", tokenizer: tokenizer).clauses.map(\.words)
                == [["main"], ["son"], ["Des"]])
        // One foreign function word is not enough to call the query foreign.
        #expect(
            TypedQuery("tamales de rajas", tokenizer: tokenizer).clauses.map(\.words)
                == [["tamales"], ["de"], ["rajas"]])
        // An explicit list is used as given.
        #expect(
            TypedQuery("ka kab hai insurance", tokenizer: tokenizer, stopwords: Stopwords.english)
                .clauses.count == 4)
    }

    @Test("Stopwords.forQuery picks the language with the most function words, at least two")
    func languageChoice() {
        #expect(Stopwords.forQuery(["what", "is", "the", "plan"]) == Stopwords.english)
        #expect(Stopwords.forQuery(["wann", "ist", "das", "treffen"]).contains("wann"))
        // English kept too
        #expect(Stopwords.forQuery(["wann", "ist", "das", "treffen"]).contains("what"))
        #expect(!Stopwords.forQuery(["wann", "treffen"]).contains("wann"))  // one is not enough
        // More English stop words than foreign ones: English.
        #expect(
            Stopwords.forQuery(["what", "is", "the", "die", "das", "plan"]) == Stopwords.english)
        #expect(Stopwords.forQuery([]) == Stopwords.english)
    }

    @Test("a query made only of stop words keeps them")
    func onlyStopwords() {
        let query = TypedQuery("to be or not to be", tokenizer: tokenizer)
        #expect(query.clauses.map(\.words) == [["to"], ["be"], ["or"], ["not"]])
        #expect(query.fts5Expression == "\"to\" OR \"be\" OR \"or\" OR \"not\"")
        #expect(query.droppedStopwords.isEmpty)
    }

    @Test(
        "quoted phrases stay phrases, stop words inside them stay; unbalanced quotes run to the end"
    )
    func phrases() {
        let query = TypedQuery("\"the quick fox\" jumps \"over the", tokenizer: tokenizer)
        #expect(
            query.clauses.map(\.words) == [["the", "quick", "fox"], ["jumps"], ["over", "the"]])
        #expect(query.clauses.map(\.isQuoted) == [true, false, true])
        #expect(query.clauses[0].isPhrase)
        #expect(query.fts5Expression == "\"the quick fox\" OR \"jumps\" OR \"over the\"")
    }

    @Test("operators and syntax are plain text")
    func operatorsAreText() {
        let query = TypedQuery(
            "content:secret NEAR(a b) AND x* ^start (unbalanced", tokenizer: tokenizer)
        #expect(
            query.fts5Expression
                == "\"content\" OR \"secret\" OR \"NEAR\" OR \"b\" OR \"x\" OR \"start\" OR \"unbalanced\""
        )
        #expect(query.droppedStopwords == ["a", "AND"])
    }

    @Test(
        "a word the tokenizer splits gives one clause per term (e-mail, 数据库); quoting keeps the sequence"
    )
    func splitWords() {
        let cjk = TypedQuery("e-mail 数据库", tokenizer: Tokenizer(.cjk))
        #expect(cjk.clauses.map(\.terms) == [["e"], ["mail"], ["数据"], ["据库"]])
        #expect(cjk.fts5Expression == "\"e\" OR \"mail\" OR \"数据\" OR \"据库\"")
        let quoted = TypedQuery("\"e-mail\" \"数据库\"", tokenizer: Tokenizer(.cjk))
        #expect(quoted.clauses.map(\.terms) == [["e", "mail"], ["数据", "据库"]])
        #expect(quoted.clauses.map(\.words) == [["e", "mail"], ["数据库"]])
        #expect(quoted.fts5Expression == "\"e mail\" OR \"数据库\"")
    }

    @Test("repeated words count once; empty and symbol-only input give an empty query")
    func duplicatesAndEmpty() {
        #expect(TypedQuery("Fox fox FOX foxes", tokenizer: tokenizer).clauses.count == 1)
        for text in ["", "   ", "\"\"", "!!! ??? ...", "😀🎉", "\"", "()", "*"] {
            let query = TypedQuery(text, tokenizer: tokenizer)
            #expect(query.isEmpty)
            #expect(query.fts5Expression == nil)
        }
    }

    @Test("random and hostile strings always render valid FTS5")
    func hostileInput() throws {
        var generator = SeededGenerator(seed: 6)
        let pieces = [
            "\"", "(", ")", "*", "^", ":", "-", "+", ",", "{", "}", "NEAR", "NEAR(", "AND", "OR",
            "NOT", "content:", "source:", "-content:", " ", "  ", "\t", "\n", "\u{0}", "\u{1}",
            "\u{7F}", "😀", "👨‍👩‍👧", "é", "e\u{301}", "数据库", "東京", "한국", "fox", "the", "a",
            "groceries", "'", "\\", "%", "_", "\u{1A}", "\u{200B}", "\u{FEFF}", "\u{FFFD}",
            "NEAR/3", "\"\"",
        ]
        var count = 0
        for length in 0..<12 {
            for _ in 0..<40 {
                let text = (0..<length).map { _ in pieces.randomElement(using: &generator)! }
                    .joined()
                let query = TypedQuery(text, tokenizer: tokenizer)
                if let expression = query.fts5Expression {
                    try FTS5QuerySyntax.validate(expression, columns: ["content"])
                    #expect(!query.clauses.isEmpty)
                    count += 1
                } else {
                    #expect(query.isEmpty)
                }
            }
        }
        #expect(count > 300)
    }

    @Test("random bytes decoded as text never trap and render valid FTS5")
    func randomScalars() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let scalars = (0..<Int.random(in: 0...30, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x2FFFF, using: &generator))
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            if let expression = TypedQuery(text, tokenizer: Tokenizer(.cjk)).fts5Expression {
                try FTS5QuerySyntax.validate(expression)
            }
        }
    }
}

@Suite("FTS5QuerySyntax")
struct FTS5QuerySyntaxTests {
    @Test("agrees with SQLite's FTS5 on 400 random queries it accepted or rejected")
    func agreesWithSQLite() {
        for query in FTS5Verdicts.accepted {
            #expect(
                FTS5QuerySyntax.isValid(query, columns: ["content", "source"]),
                "\(query.debugDescription)")
        }
        for query in FTS5Verdicts.rejected {
            #expect(
                !FTS5QuerySyntax.isValid(query, columns: ["content", "source"]),
                "\(query.debugDescription)")
        }
    }

    @Test(
        "documented forms",
        arguments: [
            ("\"fox jumps\" OR dog*", true), ("NEAR(a b, 10)", true), ("{content source}:a", true),
            ("-content:a", true), ("content:^a", true), ("a + b", true), ("(a OR b) NOT c", true),
            ("", false), ("a AND", false), ("NOT a", false), ("^content:a", false),
            ("NEAR(a b, x)", false),
            ("\"open", false), ("a.b", false), ("x:a", false), ("a\u{0})", true),
        ])
    func documentedForms(example: (String, Bool)) {
        #expect(FTS5QuerySyntax.isValid(example.0, columns: ["content", "source"]) == example.1)
    }

    @Test("errors carry the byte offset")
    func offsets() {
        #expect(throws: FTS5QuerySyntax.Error(offset: 4, reason: "unexpected character 0x2e")) {
            try FTS5QuerySyntax.validate("abc .")
        }
        #expect(throws: FTS5QuerySyntax.Error(offset: 2, reason: "unterminated string")) {
            try FTS5QuerySyntax.validate("a \"b")
        }
    }
}
