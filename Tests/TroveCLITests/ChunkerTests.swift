import Foundation
import Testing
import TroveTestSupport

@testable import TroveCLI

@Suite("Chunker")
struct ChunkerTests {
    /// Words of a text, for checking that chunking loses and reorders nothing.
    func words(_ text: String) -> [Substring] { text.split(whereSeparator: \.isWhitespace) }

    /// A seeded pseudo-English text: `paragraphs` paragraphs of sentences of words.
    func prose(paragraphs: Int, seed: UInt64) -> String {
        var rng = SeededGenerator(seed: seed)
        let vocabulary = [
            "the", "greyhound", "needs", "a", "walk", "before", "school", "dentist", "Tuesday",
            "invoice", "furnace", "renewal", "Mateo", "recipe", "with", "roasted", "poblano",
            "and", "garden", "tomatoes", "licence", "insurance", "appointment", "at", "3pm",
        ]
        return (0..<paragraphs).map { _ in
            (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                let count = Int.random(in: 3...25, using: &rng)
                var sentence = (0..<count).map { _ in vocabulary.randomElement(using: &rng)! }
                    .joined(separator: " ")
                sentence = sentence.prefix(1).uppercased() + sentence.dropFirst() + "."
                return sentence
            }.joined(separator: " ")
        }.joined(separator: "\n\n")
    }

    @Test("a short note is one chunk, trimmed")
    func shortNote() {
        let chunker = Chunker()
        #expect(
            chunker.chunks(of: "  Buy oat milk.\n\nAnd eggs.\n") == ["Buy oat milk.\n\nAnd eggs."])
        #expect(chunker.chunks(of: " \n\t\n ").isEmpty)
        #expect(chunker.chunks(of: "").isEmpty)
    }

    @Test(
        "long text: every chunk within the limit, nothing lost or reordered", arguments: [1, 2, 3])
    func longText(seed: UInt64) {
        let text = prose(paragraphs: 40, seed: seed)
        let chunker = Chunker(maxTokens: 60)
        let chunks = chunker.chunks(of: text)
        #expect(chunks.count > 5)
        for chunk in chunks {
            #expect(TokenEstimate.count(Substring(chunk)) <= 60)
            #expect(chunk == chunk.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(chunks.flatMap(words) == words(text))
    }

    @Test("cuts at paragraph boundaries when paragraphs fit")
    func paragraphBoundaries() {
        let paragraph = Array(repeating: "cat", count: 20).joined(separator: " ")  // 20 tokens
        let text = [paragraph, paragraph, paragraph].joined(separator: "\n\n")
        let chunks = Chunker(maxTokens: 45).chunks(of: text)
        #expect(chunks == [paragraph + "\n\n" + paragraph, paragraph])
    }

    @Test("a long paragraph is cut at sentence ends, not mid-sentence")
    func sentenceBoundaries() {
        let sentence = Array(repeating: "cat", count: 9).joined(separator: " ") + "."  // 10 tokens
        let text = Array(repeating: sentence, count: 6).joined(separator: " ")
        let chunks = Chunker(maxTokens: 25).chunks(of: text)
        #expect(
            chunks == [
                sentence + " " + sentence, sentence + " " + sentence, sentence + " " + sentence,
            ])
    }

    @Test("lines of a list are kept whole")
    func lines() {
        let items = (1...12).map { "- item number \($0) for the shopping list" }
        let text = items.joined(separator: "\n")
        let chunks = Chunker(maxTokens: 30).chunks(of: text)
        #expect(chunks.count > 1)
        for chunk in chunks {
            for line in chunk.split(separator: "\n") { #expect(items.contains(String(line))) }
        }
    }

    @Test("one over-long word is cut into pieces within the limit")
    func longWord() {
        let blob = String(repeating: "abcdefghij", count: 100)
        let chunks = Chunker(maxTokens: 20).chunks(of: "start " + blob + " end")
        #expect(chunks.joined().replacingOccurrences(of: " ", with: "") == "start" + blob + "end")
        for chunk in chunks { #expect(TokenEstimate.count(Substring(chunk)) <= 20) }
    }

    @Test("a custom token counter is honoured")
    func customCounter() {
        let perWord: @Sendable (Substring) -> Int = { $0.split(separator: " ").count }
        let text = Array(repeating: "alpha beta gamma.", count: 10).joined(separator: " ")
        let chunks = Chunker(maxTokens: 9, countTokens: perWord).chunks(of: text)
        #expect(chunks.allSatisfy { perWord(Substring($0)) <= 9 })
        #expect(chunks.count == 4)
    }
}

@Suite("TokenEstimate")
struct TokenEstimateTests {
    @Test("counts words, punctuation and CJK characters")
    func counts() {
        #expect(TokenEstimate.count("") == 0)
        #expect(TokenEstimate.count("the cat") == 2)
        #expect(TokenEstimate.count("appointment") == 4)  // 11 letters → ⌈11/3⌉
        #expect(TokenEstimate.count("3 pm.") == 3)
        #expect(TokenEstimate.count("Dentist on Tuesday, 3 pm.") == 11)
        #expect(TokenEstimate.count("東京タワー") == 5)
        #expect(TokenEstimate.count("café") == 2)
    }
}
