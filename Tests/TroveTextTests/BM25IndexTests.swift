import Foundation
import Testing
import TroveTestSupport

@testable import TroveText

@Suite("BM25Index")
struct BM25IndexTests {
    static let documents: [Int64: String] = [
        1: "the quick brown fox", 2: "The lazy dog, the end",
        3: "quick quick fox jumps over the lazy dog",
        4: "Foxes are quick; dogs are lazy", 5: "nothing here",
    ]

    func smallIndex() -> BM25Index {
        var index = BM25Index(tokenizer: Tokenizer(.english))
        for (id, text) in Self.documents.sorted(by: { $0.key < $1.key }) {
            index.add(id: id, text: text)
        }
        return index
    }

    // Expected values: SQLite 3.40.1, fts5(x, tokenize='porter unicode61 remove_diacritics 2'),
    // the same five rows, `SELECT rowid, bm25(t) ... ORDER BY rank` (bm25() is the negated score).
    @Test(
        "scores equal SQLite FTS5's bm25(), terms and phrases",
        arguments: [
            (
                "\"quick\" OR \"dog\"",
                [
                    (Int64(3), 1.979390296264491e-06), (4, 1.8487394957983196e-06),
                    (1, 1.089108910891089e-06), (2, 1e-06),
                ]
            ),
            ("\"lazy dog\"", [(2, 0.3364722366212129), (3, 0.2701601899878352)]),
            (
                "\"quick fox\" OR \"foxes\"",
                [(3, 0.8820982609743948), (1, 1.089108910891089e-06), (4, 9.243697478991598e-07)]
            ),
        ])
    func matchesFTS5(example: (String, [(Int64, Double)])) {
        let index = smallIndex()
        let query = TypedQuery(example.0, tokenizer: index.tokenizer)
        let hits = index.search(query, topK: 10)
        #expect(hits.map(\.id) == example.1.map(\.0))
        for (hit, expected) in zip(hits, example.1) {
            #expect(abs(hit.score - expected.1) <= 1e-12 * max(1, expected.1))
        }
    }

    @Test("phrases match in order only")
    func phraseOrder() {
        var index = BM25Index(tokenizer: Tokenizer(.english))
        index.add(id: 1, text: "The quick brown fox jumps over the lazy dog")
        index.add(id: 2, text: "over jumps fox the brown quick")
        let forward = index.search(
            TypedQuery("\"fox jumps over\"", tokenizer: index.tokenizer), topK: 10)
        #expect(forward.map(\.id) == [1])
        let reversed = index.search(
            TypedQuery("\"over jumps fox\"", tokenizer: index.tokenizer), topK: 10)
        #expect(reversed.map(\.id) == [2])
        let absent = index.search(TypedQuery("\"dog lazy\"", tokenizer: index.tokenizer), topK: 10)
        #expect(absent.isEmpty)
    }

    @Test("coverage counts the clauses a document matches")
    func coverage() {
        let index = smallIndex()
        let hits = index.search(TypedQuery("quick lazy dog", tokenizer: index.tokenizer), topK: 10)
        let byID = Dictionary(uniqueKeysWithValues: hits.map { ($0.id, $0) })
        #expect(byID[3]?.matchedClauses == 3)
        #expect(byID[1]?.matchedClauses == 1)
        #expect(byID[1]?.coverage == 1.0 / 3.0)
        #expect(byID[2]?.matchedClauses == 2)
        #expect(byID[5] == nil)
    }

    @Test("add, update and remove by id; stemming and diacritics on both sides")
    func mutations() {
        var index = BM25Index(tokenizer: Tokenizer(.english))
        index.add(id: 10, text: "Café au lait")
        index.add(id: 20, text: "Weekly groceries list")
        #expect(index.count == 2)
        #expect(
            index.search(TypedQuery("cafe", tokenizer: index.tokenizer), topK: 5).map(\.id) == [10])
        #expect(
            index.search(TypedQuery("grocery", tokenizer: index.tokenizer), topK: 5).map(\.id) == [
                20
            ])
        index.add(id: 10, text: "Tea")  // replaces
        #expect(index.count == 2)
        #expect(index.search(TypedQuery("cafe", tokenizer: index.tokenizer), topK: 5).isEmpty)
        #expect(
            index.search(TypedQuery("tea", tokenizer: index.tokenizer), topK: 5).map(\.id) == [10])
        let removed = index.remove(id: 20)
        let removedAgain = index.remove(id: 20)
        #expect(removed)
        #expect(!removedAgain)
        #expect(!index.contains(id: 20))
        #expect(index.search(TypedQuery("groceries", tokenizer: index.tokenizer), topK: 5).isEmpty)
        #expect(index.averageDocumentLength == 1)
        index.removeAll()
        #expect(index.count == 0)
        #expect(index.search(TypedQuery("tea", tokenizer: index.tokenizer), topK: 5).isEmpty)
    }

    // MARK: - Oracle

    /// A corpus over a Zipf-like vocabulary so a few terms are very common (long lists, many
    /// ties) and most are rare.
    static func randomIndex(seed: UInt64, documents: Int, vocabulary: Int) -> (
        BM25Index, [String], SeededGenerator
    ) {
        var generator = SeededGenerator(seed: seed)
        let words = (0..<vocabulary).map { "w\($0)" }
        func word() -> String {
            // P(rank r) ∝ 1/(r+1): inverse-CDF by rejection-free approximation.
            let u = Double.random(in: 0..<1, using: &generator)
            return words[min(vocabulary - 1, Int(pow(Double(vocabulary + 1), u)) - 1)]
        }
        var index = BM25Index(tokenizer: Tokenizer(.unicode))
        for id in 0..<documents {
            let length = Int.random(in: 1...30, using: &generator)
            index.add(
                id: Int64(id * 7 % documents),
                text: (0..<length).map { _ in word() }.joined(separator: " "))
        }
        return (index, words, generator)
    }

    static func randomClauses(_ words: [String], using generator: inout SeededGenerator)
        -> [[String]]
    {
        (0..<Int.random(in: 1...8, using: &generator)).map { _ in
            let length = Double.random(in: 0..<1, using: &generator) < 0.15 ? 2 : 1
            return (0..<length).map { _ in
                let u = Double.random(in: 0..<1, using: &generator)
                return words[min(words.count - 1, Int(pow(Double(words.count + 1), u)) - 1)]
            }
        }
    }

    @Test(
        "MaxScore top-k equals the exhaustive top-k",
        arguments: [(UInt64(1), 2000, 300), (2, 3000, 60), (3, 500, 2000)])
    func pruningIsExact(setup: (UInt64, Int, Int)) {
        var (index, words, generator) = Self.randomIndex(
            seed: setup.0, documents: setup.1, vocabulary: setup.2)
        for round in 0..<120 {
            if round % 20 == 10 {
                // Mutate between rounds: removals and replacements keep the bounds valid.
                for _ in 0..<50 {
                    let id = Int64.random(in: 0..<Int64(setup.1), using: &generator)
                    if Bool.random(using: &generator) {
                        index.remove(id: id)
                    } else {
                        index.add(
                            id: id,
                            text: (0..<5).map { _ in words.randomElement(using: &generator)! }
                                .joined(separator: " "))
                    }
                }
            }
            let clauses = Self.randomClauses(words, using: &generator)
            let k = [1, 3, 10, 50, 400].randomElement(using: &generator)!
            let pruned = index.search(clauses: clauses, topK: k)
            let exact = index.exhaustiveSearch(clauses: clauses, topK: k)
            #expect(pruned == exact, "clauses \(clauses) k \(k)")
        }
    }

    @Test("many replacements compact the slots; results stay exact")
    func compaction() {
        var (index, words, generator) = Self.randomIndex(seed: 21, documents: 300, vocabulary: 80)
        for _ in 0..<3000 {
            let id = Int64.random(in: 0..<300, using: &generator)
            index.add(
                id: id,
                text: (0..<Int.random(in: 1...12, using: &generator)).map { _ in
                    words.randomElement(using: &generator)!
                }.joined(separator: " "))
        }
        #expect(index.count == 300)
        #expect(index.slotIDs.count < 2 * 300 + 1100)
        for _ in 0..<30 {
            let clauses = Self.randomClauses(words, using: &generator)
            #expect(
                index.search(clauses: clauses, topK: 20)
                    == index.exhaustiveSearch(clauses: clauses, topK: 20))
        }
    }

    @Test("a filter applies before ranking: k allowed documents whenever k match")
    func filteredSearch() {
        var (index, words, generator) = Self.randomIndex(seed: 9, documents: 2000, vocabulary: 200)
        for fraction in [0.01, 0.1, 0.5] {
            for _ in 0..<20 {
                let allowed = Set(
                    (0..<2000).filter { _ in Double.random(in: 0..<1, using: &generator) < fraction
                    }.map(Int64.init))
                let clauses = Self.randomClauses(words, using: &generator)
                let all = index.exhaustiveSearch(clauses: clauses, topK: 2000)
                let expected = Array(all.filter { allowed.contains($0.id) }.prefix(10))
                #expect(index.search(clauses: clauses, topK: 10, allowedIDs: allowed) == expected)
            }
        }
    }
}
