import Testing

@testable import TroveText

@Suite("Tokenizer")
struct TokenizerTests {
    @Test("case folding and unicode61 separators")
    func foldsAndSeparates() {
        let tokenizer = Tokenizer(.unicode)
        #expect(
            tokenizer.terms(in: "Hello, WORLD! snake_case x-ray 3.14") == [
                "hello", "world", "snake", "case", "x", "ray", "3", "14",
            ])
        #expect(tokenizer.terms(in: "").isEmpty)
        #expect(tokenizer.terms(in: " \t\n.,;!?").isEmpty)
        // Simple case folding, as FTS5: final sigma folds to sigma; Greek keeps its tonos.
        #expect(tokenizer.terms(in: "ΣΟΦΊΑ σοφίας") == ["σοφία", "σοφίασ"])
    }

    @Test("diacritics removed in documents and queries alike: café = cafe")
    func removesDiacritics() {
        let tokenizer = Tokenizer(.unicode)
        #expect(
            tokenizer.terms(in: "Café CRÈME brûlée Ångström naïve") == [
                "cafe", "creme", "brulee", "angstrom", "naive",
            ])
        // Decomposed input (e + U+0301) folds to the same term as the precomposed letter.
        #expect(tokenizer.terms(in: "cafe\u{301}") == ["cafe"])
        // Letters without a decomposition, and other scripts, keep their form (as in FTS5).
        #expect(tokenizer.terms(in: "Øl łódź й") == ["øl", "łodz", "й"])
        let keeping = Tokenizer(TokenizerConfiguration(removesDiacritics: false))
        #expect(keeping.terms(in: "Café") == ["café"])
    }

    @Test(
        "Porter stemming: groceries and grocery share a stem",
        arguments: [
            ("groceries", "grocery"), ("running", "runs"), ("connection", "connected"),
            ("generalizations", "generalization"), ("happiness", "happy"),
        ])
    func stemsInflections(pair: (String, String)) {
        let tokenizer = Tokenizer(.english)
        #expect(tokenizer.terms(in: pair.0) == tokenizer.terms(in: pair.1))
        #expect(Tokenizer(.unicode).terms(in: pair.0) != Tokenizer(.unicode).terms(in: pair.1))
    }

    // Pairs from Porter's paper (1980), with FTS5's two departures (bli -> ble, logi -> log).
    @Test(
        "Porter stems match the published examples",
        arguments: [
            ("caresses", "caress"), ("ponies", "poni"), ("ties", "ti"), ("caress", "caress"),
            ("cats", "cat"), ("feed", "feed"), ("agreed", "agre"), ("plastered", "plaster"),
            ("bled", "bled"), ("motoring", "motor"), ("sing", "sing"), ("conflated", "conflat"),
            ("troubled", "troubl"), ("sized", "size"), ("hopping", "hop"), ("tanned", "tan"),
            ("falling", "fall"), ("hissing", "hiss"), ("fizzed", "fizz"), ("failing", "fail"),
            ("filing", "file"), ("happy", "happi"), ("sky", "sky"), ("relational", "relat"),
            ("conditional", "condit"), ("rational", "ration"), ("valenci", "valenc"),
            ("digitizer", "digit"), ("conformabli", "conform"), ("radicalli", "radic"),
            ("differentli", "differ"), ("vileli", "vile"), ("analogousli", "analog"),
            ("vietnamization", "vietnam"), ("predication", "predic"), ("operator", "oper"),
            ("feudalism", "feudal"), ("decisiveness", "decis"), ("hopefulness", "hope"),
            ("callousness", "callous"), ("formaliti", "formal"), ("sensitiviti", "sensit"),
            ("sensibiliti", "sensibl"), ("triplicate", "triplic"), ("formative", "form"),
            ("formalize", "formal"), ("electriciti", "electr"), ("electrical", "electr"),
            ("hopeful", "hope"), ("goodness", "good"), ("revival", "reviv"), ("allowance", "allow"),
            ("inference", "infer"), ("airliner", "airlin"), ("gyroscopic", "gyroscop"),
            ("adjustable", "adjust"), ("defensible", "defens"), ("irritant", "irrit"),
            ("replacement", "replac"), ("adjustment", "adjust"), ("dependent", "depend"),
            ("adoption", "adopt"), ("homologou", "homolog"), ("communism", "commun"),
            ("activate", "activ"), ("angulariti", "angular"), ("homologous", "homolog"),
            ("effective", "effect"), ("bowdlerize", "bowdler"), ("probate", "probat"),
            ("rate", "rate"), ("cease", "ceas"), ("controll", "control"), ("roll", "roll"),
            ("archeology", "archeolog"), ("generalizations", "gener"),
            ("a", "a"), ("is", "is"),
            (
                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzing",
                "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzing"
            ),
        ])
    func porterExamples(pair: (String, String)) {
        #expect(PorterStemmer.stem(pair.0) == pair.1)
    }

    @Test("byte ranges point at the original text, positions count terms")
    func byteRanges() {
        let text = "Ça  marche, très bien"
        let tokens = Tokenizer(.unicode).tokens(in: text)
        let bytes = Array(text.utf8)
        #expect(tokens.map(\.term) == ["ca", "marche", "tres", "bien"])
        #expect(tokens.map(\.position) == [0, 1, 2, 3])
        #expect(
            tokens.map { String(decoding: bytes[$0.byteRange], as: UTF8.self) } == [
                "Ça", "marche", "très", "bien",
            ])
    }

    @Test("CJK runs become overlapping bigrams: Chinese")
    func chineseBigrams() {
        let tokenizer = Tokenizer(.cjk)
        #expect(tokenizer.terms(in: "数据库管理") == ["数据", "据库", "库管", "管理"])
        let query = Set(tokenizer.terms(in: "数据库"))
        #expect(query == ["数据", "据库"])
        #expect(query.isSubset(of: Set(tokenizer.terms(in: "数据库管理"))))
        // A run of one character is one term.
        #expect(tokenizer.terms(in: "书 是") == ["书", "是"])
    }

    @Test("CJK bigrams: Japanese kana and kanji, Korean Hangul")
    func japaneseAndKorean() {
        let tokenizer = Tokenizer(.cjk)
        let tokyo = Set(tokenizer.terms(in: "東京"))
        #expect(tokyo == ["東京"])
        #expect(tokyo.isSubset(of: Set(tokenizer.terms(in: "東京で寿司"))))
        #expect(tokenizer.terms(in: "カタカナ") == ["カタ", "タカ", "カナ"])
        #expect(tokenizer.terms(in: "데이터베이스 관리") == ["데이", "이터", "터베", "베이", "이스", "관리"])
        #expect(Set(tokenizer.terms(in: "데이터")).isSubset(of: Set(tokenizer.terms(in: "데이터베이스"))))
        // Hangul and Han never share a bigram.
        #expect(tokenizer.terms(in: "한國") == ["한", "國"])
    }

    @Test("CJK mixed with Latin: each script keeps its own rules, byte ranges stay exact")
    func mixedScripts() {
        let tokenizer = Tokenizer(.cjk)
        let text = "MySQL数据库Groceries東京café"
        let tokens = tokenizer.tokens(in: text)
        #expect(tokens.map(\.term) == ["mysql", "数据", "据库", "groceri", "東京", "cafe"])
        let bytes = Array(text.utf8)
        #expect(
            tokens.map { String(decoding: bytes[$0.byteRange], as: UTF8.self) } == [
                "MySQL", "数据", "据库", "Groceries", "東京", "café",
            ])
        #expect(tokens.map(\.position) == Array(0..<6))
        // The unicode61 segmentation keeps a CJK run as one term, like FTS5's default.
        #expect(Tokenizer(.english).terms(in: "数据库管理 test") == ["数据库管理", "test"])
    }

    @Test("invalid UTF-8 separates terms and never traps")
    func invalidUTF8() {
        let bytes: [UInt8] = [0x61, 0x62, 0xFF, 0x63, 0xE6, 0x95, 0x61, 0xC3]
        var terms: [String] = []
        bytes.withUnsafeBufferPointer { buffer in
            Tokenizer(.cjk).forEachTerm(utf8: buffer) { term, _, _ in
                terms.append(String(decoding: term, as: UTF8.self))
                return true
            }
        }
        #expect(terms == ["ab", "c", "a"])
    }

    @Test("configuration round-trips through FTS5 tokenizer arguments")
    func fts5Arguments() {
        for configuration in [
            TokenizerConfiguration.english, .unicode, .cjk, .multilingual,
            TokenizerConfiguration(segmentation: .cjkBigram, removesDiacritics: false),
        ] {
            #expect(
                TokenizerConfiguration(fts5Arguments: configuration.fts5Arguments) == configuration)
        }
        #expect(
            TokenizerConfiguration.english.fts5TokenizeArgument
                == "porter unicode61 remove_diacritics 2")
        #expect(TokenizerConfiguration(fts5Arguments: ["porter", "2"]) == nil)
    }

    @Test("bigram segmentation: Thai, Lao, Khmer and Myanmar runs with their marks become bigrams")
    func southeastAsianBigrams() {
        let tokenizer = Tokenizer(.multilingual)
        // กินข้าว "eat rice": vowel and tone marks stay inside the run.
        #expect(tokenizer.terms(in: "กินข้าว") == ["กิ", "ิน", "นข", "ข้", "้า", "าว"])
        #expect(Set(tokenizer.terms(in: "ข้าว")).isSubset(of: Set(tokenizer.terms(in: "กินข้าว"))))
        #expect(tokenizer.terms(in: "ພາສາລາວ").count == 6)  // Lao
        #expect(tokenizer.terms(in: "ភាសាខ្មែរ").count == 8)  // Khmer
        // Thai digits and spaces separate as before; English keeps stemming; CJK as `cjk`.
        #expect(
            tokenizer.terms(in: "ตลาด ๑๒ Groceries 数据库") == [
                "ตล", "ลา", "าด", "๑๒", "groceri", "数据", "据库",
            ])
    }

    @Test(
        "the frozen cjk segmentation still cuts Thai as unicode61 does (old databases keep matching)"
    )
    func cjkSegmentationUnchangedForThai() {
        #expect(Tokenizer(.cjk).terms(in: "กินข้าว ok") == Tokenizer(.english).terms(in: "กินข้าว ok"))
        #expect(Tokenizer(.cjk).terms(in: "数据库") == ["数据", "据库"])
    }

    @Test("multilingual and english agree on text without unspaced scripts")
    func multilingualKeepsEnglish() {
        let text = "Café groceries, the plumber's invoice #2041 für Müller"
        #expect(Tokenizer(.multilingual).terms(in: text) == Tokenizer(.english).terms(in: text))
    }
}
