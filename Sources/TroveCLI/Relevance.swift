import Foundation

/// The 0..1 relevance `trove search` shows and `--min-score` compares: each leg's raw score
/// turned into a calibrated probability-like number, the legs combined, then capped down the
/// list (Documentation/PARAMETERS.md, "Relevance").
///
/// - A vector leg's evidence is the cosine between the query's vector and the note's, through
///   a logistic curve fitted per model (``Calibration``), so 0.5 means "as similar as a right
///   answer is as likely as a wrong one" on notes-dev, for either model, whatever the query.
/// - The text leg's evidence is the query's word coverage (the share of its distinct content
///   words the note holds, matched as snippets match them), through its own fitted curve.
/// - A result's relevance is the largest evidence of the legs that are competent for it
///   (``LegCompetence``), then at most the relevance of the result ranked above it, so it is
///   monotone in rank and a `--min-score` cut keeps a prefix of the ranking.
///
/// ```swift
/// Relevance.calibration(modelID: "sentence-transformers/all-MiniLM-L6-v2").relevance(0.62)
/// Relevance.monotone([0.9, 0.95, 0.4])   // [0.9, 0.9, 0.4]
/// ```
enum Relevance {
    /// A logistic curve `1 / (1 + e^-(a·x + b))` from a leg's raw score `x` to 0..1 (Platt
    /// scaling: Platt 1999), fitted by `scripts/calibrate-relevance.py`.
    struct Calibration: Sendable, Equatable {
        var a: Double
        var b: Double

        /// The relevance of raw score `x`.
        func relevance(_ x: Double) -> Double { 1 / (1 + exp(-(a * x + b))) }
    }

    /// all-MiniLM-L6-v2's cosines (notes-dev: each query's 20 closest notes and its right one,
    /// classes weighted equally): 0.5 at cosine 0.311.
    static let miniLM = Calibration(a: 14.506, b: -4.512)
    /// multilingual-e5-small's cosines: its vectors sit in a narrow cone (unrelated texts near
    /// 0.78), so its curve is steep and late: 0.5 at cosine 0.831.
    static let e5 = Calibration(a: 70.997, b: -59.004)
    /// A model without a fitted curve: 0.5 at cosine 0.5, 0.12 at 0.25, 0.88 at 0.75.
    static let unknownModel = Calibration(a: 8.0, b: -4.0)
    /// The text leg, on word coverage 0...1 (notes holding at least one of the query's words):
    /// 0.5 at a coverage of 0.346.
    static let text = Calibration(a: 8.032, b: -2.781)

    /// The curve for vectors of the model with this manifest id.
    static func calibration(modelID: String) -> Calibration {
        switch modelID {
        case "sentence-transformers/all-MiniLM-L6-v2": return miniLM
        case "intfloat/multilingual-e5-small": return e5
        default: return unknownModel
        }
    }

    /// The share of the query's distinct content words (stopwords aside, unless that is all it
    /// has) that occur in `content`, compared as ``Snippet`` compares them (case and accents
    /// folded; a query word of four letters or more also matches words it begins that are at
    /// most three letters longer).
    /// - Complexity: O(query words × content words).
    ///
    /// Scripts written without spaces (Chinese, Japanese, Thai…) make one long "word" of a whole
    /// phrase, so such a term counts by the share of its character pairs the note holds, as the
    /// text index's bigram tokenizer matches them.
    ///
    /// An identifier (``identifierTerms(_:)``: `DEC-0054`, `v1.2.3`, `2026`) is one term, matched
    /// only whole: a note holding `DEC-0055` shares the word `dec` with the query `DEC-0054` but
    /// holds none of it, so it covers nothing (it used to cover half, a relevance of 0.77).
    static func coverage(query: String, content: String) -> Double {
        let identifiers = identifierTerms(query)
        let terms = Snippet.queryTerms(query).filter { word in
            !identifiers.contains { $0.contains(word) }
        }
        guard !terms.isEmpty || !identifiers.isEmpty else { return 0 }
        let sequence = Snippet.wordRanges(content).map { Snippet.fold(content[$0]) }
        let words = Set(sequence)
        let identifiersFound = identifiers.filter { parts in
            parts.count == 1
                ? words.contains(parts[0])
                : sequence.indices.contains { start in
                    start + parts.count <= sequence.count
                        && Array(sequence[start..<(start + parts.count)]) == parts
                }
        }.count
        var folded: String?
        let found = terms.reduce(Double(identifiersFound)) { total, term in
            if term.unicodeScalars.contains(where: isUnspaced) {
                let characters = Array(term)
                guard characters.count > 1 else {
                    folded = folded ?? Snippet.fold(content[...])
                    return total + (folded!.contains(term) ? 1 : 0)
                }
                folded = folded ?? Snippet.fold(content[...])
                let pairs = (0..<(characters.count - 1)).map { String(characters[$0...($0 + 1)]) }
                return total + Double(pairs.filter { folded!.contains($0) }.count)
                    / Double(pairs.count)
            }
            let matched =
                words.contains(term)
                || (term.count >= 4
                    && words.contains { $0.count <= term.count + 3 && $0.hasPrefix(term) })
            return total + (matched ? 1 : 0)
        }
        return found / Double(terms.count + identifiers.count)
    }

    /// Characters that join the parts of one identifier when no space surrounds them.
    static let identifierJoiners: Set<Character> = ["-", "_", ".", "/", ":", "#"]

    /// The query's identifiers, each as its folded words in order: a run of words joined by
    /// ``identifierJoiners`` (no spaces) or a single word, that holds a digit (`DEC-0054` is
    /// `["dec", "0054"]`, `v1.2.3` is `["v1", "2", "3"]`, `2026` is `["2026"]`). Plain words
    /// (`well-known`) and runs of unspaced scripts are not identifiers. An identifier names one thing: a note matches it only
    /// when it holds all of it, and a text model's vectors cannot tell it from its neighbours.
    static func identifierTerms(_ query: String) -> [[String]] {
        var groups: [[Range<String.Index>]] = []
        for range in Snippet.wordRanges(query) {
            if let last = groups.last?.last,
                query.index(after: last.upperBound) == range.lowerBound,
                identifierJoiners.contains(query[last.upperBound])
            {
                groups[groups.count - 1].append(range)
            } else {
                groups.append([range])
            }
        }
        var identifiers: [[String]] = []
        for group in groups {
            let parts = group.map { Snippet.fold(query[$0]) }
            // Unspaced scripts keep their bigram matching (`第2章` is a phrase, not a code).
            guard parts.contains(where: { $0.contains(where: \.isNumber) }),
                !identifiers.contains(parts),
                !parts.contains(where: { $0.unicodeScalars.contains(where: isUnspaced) })
            else { continue }
            identifiers.append(parts)
        }
        return identifiers
    }

    /// Whether the query is nothing but identifiers (`DEC-0054`, `INV-2291 INV-2292`): then
    /// only words can tell a match from a near miss (``LegCompetence``).
    static func isIdentifierQuery(_ query: String) -> Bool {
        let identifiers = identifierTerms(query)
        return !identifiers.isEmpty
            && Snippet.queryTerms(query).allSatisfy { word in
                identifiers.contains { $0.contains(word) }
            }
    }

    /// Letters of scripts written without spaces between words: CJK ideographs, kana, Hangul
    /// syllables, Thai, Lao, Khmer, Myanmar.
    static func isUnspaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0E00...0x0EFF, 0x1000...0x109F, 0x1780...0x17FF, 0x3040...0x30FF, 0x3400...0x4DBF,
            0x4E00...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF, 0x20000...0x2FA1F:
            return true
        default:
            return false
        }
    }

    /// Cosine similarity of two vectors (0 when either is all zeros).
    static func cosine(_ x: [Float], _ y: [Float]) -> Double {
        var dot = 0.0
        var xx = 0.0
        var yy = 0.0
        for index in 0..<min(x.count, y.count) {
            dot += Double(x[index]) * Double(y[index])
            xx += Double(x[index]) * Double(x[index])
            yy += Double(y[index]) * Double(y[index])
        }
        return xx > 0 && yy > 0 ? dot / (xx.squareRoot() * yy.squareRoot()) : 0
    }

    /// Each score capped by the one before it: non-increasing, equal to the input where the
    /// input already was.
    static func monotone(_ scores: [Double]) -> [Double] {
        var cap = Double.infinity
        return scores.map { score in
            cap = min(cap, score)
            return cap
        }
    }
}
