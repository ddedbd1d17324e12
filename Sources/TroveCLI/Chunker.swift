import Foundation

/// Splits long documents into chunks that fit the embedding model's input.
///
/// all-MiniLM-L6-v2 reads at most 256 WordPiece tokens (including `[CLS]` and `[SEP]`) and
/// silently drops the rest, so a long note embedded whole is searched by its beginning only.
/// The chunker cuts at the most natural boundary that makes every piece fit: paragraphs (blank
/// lines) first, then lines, then sentences, then words, and characters only for a single
/// "word" longer than the limit (a URL or an encoded blob). Neighbouring pieces are packed
/// greedily into chunks of at most ``maxTokens`` tokens, so short notes stay whole.
///
/// ```swift
/// let chunker = Chunker(maxTokens: 200)
/// let chunks = chunker.chunks(of: longMarkdown)   // [String], each under ~200 tokens
/// ```
///
/// Token counts come from ``TokenEstimate`` unless a real tokenizer's count is supplied.
struct Chunker: Sendable {
    /// The default chunk limit: well under the model's 254 content tokens, so that an
    /// estimate that is off by a quarter still fits.
    static let defaultMaxTokens = 200

    /// Largest chunk, in tokens as counted by ``countTokens``.
    var maxTokens: Int
    /// Counts the model tokens of a piece of text.
    var countTokens: @Sendable (Substring) -> Int

    /// - Parameters:
    ///   - maxTokens: the largest chunk in tokens; must be at least 8.
    ///   - countTokens: the tokenizer's count; defaults to a conservative estimate.
    init(
        maxTokens: Int = Chunker.defaultMaxTokens,
        countTokens: @escaping @Sendable (Substring) -> Int = TokenEstimate.count
    ) {
        precondition(maxTokens >= 8, "a chunk must hold at least 8 tokens")
        self.maxTokens = maxTokens
        self.countTokens = countTokens
    }

    /// The chunks of `text`, in order; empty when the text holds nothing but whitespace.
    ///
    /// Each chunk is a contiguous slice of `text` (whitespace at its ends trimmed), so the
    /// original formatting inside a chunk is kept.
    /// - Complexity: O(n) token counts over pieces of the text, for n characters.
    func chunks(of text: String) -> [String] {
        var units: [(range: Range<String.Index>, tokens: Int)] = []
        split(text.startIndex..<text.endIndex, in: text, level: .paragraph, into: &units)

        var chunks: [String] = []
        var start: String.Index?
        var end = text.startIndex
        var tokens = 0
        for unit in units {
            if start != nil, tokens + unit.tokens > maxTokens {
                chunks.append(String(text[start!..<end]))
                start = nil
                tokens = 0
            }
            if start == nil { start = unit.range.lowerBound }
            end = unit.range.upperBound
            tokens += unit.tokens
        }
        if let start { chunks.append(String(text[start..<end])) }
        return chunks
    }

    /// Boundaries, from the most to the least natural.
    enum Level: Int {
        case paragraph, line, sentence, word, character
    }

    private func split(
        _ range: Range<String.Index>, in text: String, level: Level,
        into units: inout [(range: Range<String.Index>, tokens: Int)]
    ) {
        for piece in Self.pieces(of: range, in: text, level: level) {
            let tokens = countTokens(text[piece])
            if tokens <= maxTokens || level == .character {
                units.append((piece, tokens))
            } else {
                split(piece, in: text, level: Level(rawValue: level.rawValue + 1)!, into: &units)
            }
        }
    }

    /// The non-blank pieces of `range` at one level, trimmed of surrounding whitespace.
    static func pieces(
        of range: Range<String.Index>, in text: String, level: Level
    ) -> [Range<String.Index>] {
        var result: [Range<String.Index>] = []
        func add(_ from: String.Index, _ to: String.Index) {
            var lower = from
            var upper = to
            while lower < upper, text[lower].isWhitespace { lower = text.index(after: lower) }
            while upper > lower, text[text.index(before: upper)].isWhitespace {
                upper = text.index(before: upper)
            }
            if lower < upper { result.append(lower..<upper) }
        }

        switch level {
        case .paragraph, .line:
            // Paragraphs end at a line holding only whitespace; lines at every line break.
            var pieceStart = range.lowerBound
            var lineStart = range.lowerBound
            var index = range.lowerBound
            while index < range.upperBound {
                let character = text[index]
                let next = text.index(after: index)
                if character.isNewline {
                    if level == .line {
                        add(pieceStart, index)
                        pieceStart = next
                    } else if text[lineStart..<index].allSatisfy(\.isWhitespace) {
                        add(pieceStart, lineStart)
                        pieceStart = next
                    }
                    lineStart = next
                }
                index = next
            }
            add(pieceStart, range.upperBound)
        case .sentence:
            // A sentence ends after . ! ? … (and any closing quotes or brackets) followed by
            // whitespace, or right after the CJK full stops, which take no space.
            var pieceStart = range.lowerBound
            var index = range.lowerBound
            while index < range.upperBound {
                let character = text[index]
                var next = text.index(after: index)
                if "。！？".contains(character) {
                    add(pieceStart, next)
                    pieceStart = next
                } else if ".!?…".contains(character) {
                    while next < range.upperBound, "\"')]”’»".contains(text[next]) {
                        next = text.index(after: next)
                    }
                    if next == range.upperBound || text[next].isWhitespace {
                        add(pieceStart, next)
                        pieceStart = next
                    }
                }
                index = next
            }
            add(pieceStart, range.upperBound)
        case .word:
            var pieceStart = range.lowerBound
            var index = range.lowerBound
            while index < range.upperBound {
                let next = text.index(after: index)
                if text[index].isWhitespace {
                    add(pieceStart, index)
                    pieceStart = next
                }
                index = next
            }
            add(pieceStart, range.upperBound)
        case .character:
            // Only a single "word" longer than the limit gets here; every character is a piece
            // and packing puts them back together up to the limit.
            var index = range.lowerBound
            while index < range.upperBound {
                let next = text.index(after: index)
                result.append(index..<next)
                index = next
            }
        }
        return result
    }
}

/// A conservative estimate of how many WordPiece tokens all-MiniLM-L6-v2 makes of a text.
///
/// The BERT uncased tokenizer splits punctuation into tokens of their own, gives every CJK
/// character its own token, and splits words it does not know into pieces. Common English words
/// are one token; rare words, names and codes take several. The estimate counts every
/// punctuation or symbol character and every non-Latin letter as one token, and each run of
/// letters and digits as one token per three characters, rounded up — above the real count for
/// ordinary prose (by about 1.5×), so chunks sized with it fit the model.
///
/// ```swift
/// TokenEstimate.count("Dentist on Tuesday, 3 pm.")   // 11 (the real tokenizer says 7)
/// ```
enum TokenEstimate {
    /// The estimated token count of `text`.
    /// - Complexity: O(n) in the text's Unicode scalars.
    @Sendable static func count(_ text: Substring) -> Int {
        var tokens = 0
        var run = 0
        for scalar in text.unicodeScalars {
            let properties = scalar.properties
            if properties.isAlphabetic || properties.numericType != nil {
                if isLatinOrDigit(scalar) {
                    run += 1
                    continue
                }
                // CJK and other scripts the tokenizer splits into single characters.
                tokens += (run + 2) / 3 + 1
                run = 0
            } else {
                tokens += (run + 2) / 3
                run = 0
                if !properties.isWhitespace, !isIgnorable(scalar) { tokens += 1 }
            }
        }
        return tokens + (run + 2) / 3
    }

    private static func isLatinOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII letters and digits, and Latin letters with accents (the tokenizer strips them).
        switch scalar.value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0xC0...0x24F: return true
        default: return false
        }
    }

    private static func isIgnorable(_ scalar: Unicode.Scalar) -> Bool {
        // Combining marks and format characters vanish in the tokenizer's cleaning step.
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark, .format, .control: return true
        default: return false
        }
    }
}
