import Foundation
import Testing
import TroveEmbeddings

@Suite("WordPieceTokenizer")
struct WordPieceTokenizerTests {
    /// The golden cases need the model's own vocab.txt, so they use the installed model and fail
    /// (naming `trove model install`) when it is absent.
    static func modelTokenizer() throws -> WordPieceTokenizer { try loaded.get() }

    // Loaded once: the 444 parameterised cases would otherwise re-read vocab.txt each time.
    private static let loaded = Result<WordPieceTokenizer, any Error> {
        let dir = try Fixtures.requireModel()
        return try WordPieceTokenizer(
            vocabularyFile: dir.appendingPathComponent("vocab.txt"), maxSequenceLength: 256)
    }

    @Test("fixture file has all 444 reference cases")
    func fixtureCount() {
        #expect(Fixtures.tokenizerCases.count == 444)
    }

    @Test(
        "every reference case gives exactly the reference ids", arguments: Fixtures.tokenizerCases)
    func referenceIDs(_ testCase: Fixtures.TokenizerCase) throws {
        let tokenizer = try Self.modelTokenizer()
        #expect(tokenizer.encode(testCase.text) == testCase.ids)
    }

    @Test("truncates to maxSequenceLength, keeping [SEP] last")
    func truncation() throws {
        let tokenizer = try Self.modelTokenizer()
        let long = String(repeating: "word ", count: 1000)
        let ids = tokenizer.encode(long)
        #expect(ids.count == 256)
        #expect(ids.first == tokenizer.clsID)
        #expect(ids.last == tokenizer.sepID)
        #expect(tokenizer.wordPieceIDs(long).count == 1000)
    }

    @Test(
        "empty and whitespace-only text give [CLS] [SEP]",
        arguments: ["", " ", "\t\n\r ", "\u{00A0}\u{3000}"])
    func emptyText(_ text: String) throws {
        let tokenizer = try Self.modelTokenizer()
        #expect(tokenizer.encode(text) == [tokenizer.clsID, tokenizer.sepID])
    }

    @Test("in-memory vocabulary: greedy longest match with ## continuations and [UNK]")
    func smallVocabulary() throws {
        let vocab = [
            "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "unaff", "a",
            ",", "##b",
        ]
        let tokenizer = try WordPieceTokenizer(vocabulary: vocab, maxSequenceLength: 16)
        // "unaffable" -> longest prefix "unaff", then "##able".
        #expect(tokenizer.wordPieceIDs("Unaffable") == [8, 7])
        // A remainder the vocabulary cannot spell makes the whole word [UNK].
        #expect(tokenizer.wordPieceIDs("unaffz") == [1])
        #expect(tokenizer.wordPieceIDs("a,a") == [9, 10, 9])
        #expect(tokenizer.wordPieceIDs("[MASK] a") == [4, 9])
        #expect(tokenizer.wordPieceIDs(String(repeating: "a", count: 101)) == [1])
    }

    @Test("a vocabulary without [UNK] is rejected")
    func missingSpecialToken() {
        #expect(throws: EmbeddingError.self) {
            try WordPieceTokenizer(vocabulary: ["[PAD]", "[CLS]", "[SEP]", "a"])
        }
    }

    @Test("a missing vocab.txt names the file")
    func missingVocabulary() throws {
        let url = URL(fileURLWithPath: "/nonexistent-trove/vocab.txt")
        #expect(throws: EmbeddingError.missingModelFile(path: url.path)) {
            try WordPieceTokenizer(vocabularyFile: url)
        }
    }
}
