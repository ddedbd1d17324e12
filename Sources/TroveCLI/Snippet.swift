import Foundation

/// A short excerpt of a record around the words of the query, with those words highlighted.
///
/// Words are compared case- and accent-insensitively; a query word of four or more letters
/// also matches words up to three letters longer that it begins (`dentist` matches
/// `dentists`, `plant` matches `planting`, `data` does not match `database`), which is close to
/// what a stemming full-text index finds. The excerpt is the window of ``wordCount`` words holding
/// the most distinct query words (the earliest such window on ties), with line breaks folded
/// into spaces and `…` where text was cut.
///
/// ```swift
/// Snippet.make(content: "Dentist on Tuesday at 3", query: "dentist", style: Style(enabled: false))
/// // "Dentist on Tuesday at 3" (piped: plain; on a terminal "Dentist" in bold yellow)
/// ```
enum Snippet {
    /// Words in an excerpt.
    static let wordCount = 32

    /// Function words that would highlight noise.
    static let stopwords: Set<String> = [
        "a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "how", "i", "in",
        "is", "it", "my", "of", "on", "or", "our", "the", "to", "was", "we", "what", "when",
        "where", "which", "who", "with", "why", "you", "your", "me", "is", "does", "did", "this",
        "that", "there", "can", "will", "about", "after", "all", "any", "been", "but", "have",
        "has", "had", "if", "into", "not", "no", "so", "than", "then", "them", "they", "up",
        "out", "its", "were", "would", "should", "could", "some", "much", "many",
    ]

    /// The excerpt of `content` for `query`, highlighted with `style`.
    /// - Complexity: O(n) in the content's length.
    static func make(
        content: String, query: String, style: Style, wordCount: Int = Snippet.wordCount
    ) -> String {
        let terms = queryTerms(query)
        let words = wordRanges(content)
        guard !words.isEmpty else { return "" }
        let matches: [Int?] = words.map { range in
            let word = fold(content[range])
            return terms.firstIndex { term in
                word == term
                    || (term.count >= 4 && word.count <= term.count + 3 && word.hasPrefix(term))
            }
        }

        // Slide a window of `wordCount` words; keep the one covering most distinct terms.
        var best = 0
        var bestScore = -1
        let span = min(wordCount, words.count)
        var counts: [Int: Int] = [:]
        for index in 0..<words.count {
            if let term = matches[index] { counts[term, default: 0] += 1 }
            if index >= span, let term = matches[index - span] {
                counts[term]! -= 1
                if counts[term] == 0 { counts[term] = nil }
            }
            if index >= span - 1, counts.count > bestScore {
                bestScore = counts.count
                best = index - span + 1
            }
        }
        // Centre the matches of the chosen window, so a match has context on both sides.
        let matched = (best..<best + span).filter { matches[$0] != nil }
        if let first = matched.first, let lastMatch = matched.last {
            best = first - (span - (lastMatch - first + 1)) / 2
            best = max(0, min(words.count - span, best))
        }
        let last = best + span - 1

        var out = best > 0 ? "…" : ""
        var cursor = words[best].lowerBound
        for index in best...last {
            let range = words[index]
            out += collapse(content[cursor..<range.lowerBound])
            let word = String(content[range])
            out += matches[index] != nil ? style.highlight(word) : word
            cursor = range.upperBound
        }
        // Keep punctuation that closes the last word ("3 pm." keeps its full stop).
        let tail = content[cursor...].prefix { !$0.isWhitespace && !$0.isLetter && !$0.isNumber }
        out += tail
        if last < words.count - 1 { out += " …" }
        return out
    }

    /// The folded, distinct content words of a query (all words when every one is a stopword).
    static func queryTerms(_ query: String) -> [String] {
        var terms: [String] = []
        for range in wordRanges(query) {
            let word = fold(query[range])
            if !terms.contains(word) { terms.append(word) }
        }
        let content = terms.filter { !stopwords.contains($0) }
        return content.isEmpty ? terms : content
    }

    /// Ranges of maximal runs of letters, digits and apostrophes inside words.
    static func wordRanges(_ text: String) -> [Range<String.Index>] {
        var ranges: [Range<String.Index>] = []
        var start: String.Index?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character.isLetter || character.isNumber {
                if start == nil { start = index }
            } else if let lower = start {
                ranges.append(lower..<index)
                start = nil
            }
            index = text.index(after: index)
        }
        if let lower = start { ranges.append(lower..<text.endIndex) }
        return ranges
    }

    static func fold(_ word: Substring) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    private static func collapse(_ gap: Substring) -> String {
        var out = ""
        var pendingSpace = false
        for character in gap {
            if character.isWhitespace {
                pendingSpace = true
            } else {
                if pendingSpace { out += " " }
                pendingSpace = false
                out.append(character)
            }
        }
        if pendingSpace { out += " " }
        return out
    }
}
