import Foundation

/// The BERT uncased WordPiece tokenizer, identical to the reference (Hugging Face `tokenizers`
/// `BertNormalizer` + `BertPreTokenizer` + `WordPiece`, as used by sentence-transformers).
///
/// Steps, in the reference's order:
/// 1. The literal special tokens `[PAD] [UNK] [CLS] [SEP] [MASK]` in the raw text become their ids.
/// 2. Cleaning: NUL, U+FFFD and control/format/unassigned characters are dropped; whitespace
///    (tab, newlines, Unicode White_Space) becomes a space.
/// 3. CJK ideographs are surrounded by spaces, so each is one word.
/// 4. Accent stripping (NFD, then drop non-spacing marks) and lowercasing, one scalar at a time.
/// 5. Words split at whitespace; each punctuation character (ASCII punctuation or Unicode `P*`)
///    is a word of its own.
/// 6. Greedy longest-match WordPiece with `##` continuations; a word longer than 100 scalars or
///    with an unmatched remainder becomes `[UNK]`.
/// 7. `[CLS] … [SEP]`, truncated to ``maxSequenceLength`` ids in total.
///
/// ```swift
/// let tokenizer = try WordPieceTokenizer(vocabularyFile: modelDirectory.appending(path: "vocab.txt"))
/// tokenizer.encode("Hello, world!")  // [101, 7592, 1010, 2088, 999, 102]
/// ```
public struct WordPieceTokenizer: Sendable {
    /// Longest output, in ids, including `[CLS]` and `[SEP]`.
    public let maxSequenceLength: Int
    /// The id of `[CLS]`, which starts every sequence.
    public let clsID: Int32
    /// The id of `[SEP]`, which ends every sequence.
    public let sepID: Int32
    /// The id of `[UNK]`, used for words the vocabulary cannot spell.
    public let unknownID: Int32
    /// The id of `[PAD]`, used to fill short rows of a batch.
    public let paddingID: Int32
    /// Words longer than this many Unicode scalars become `[UNK]` (the reference's 100).
    public let maxInputCharactersPerWord = 100

    // Keyed by UTF-8 bytes, not String: Swift's String equality is canonical equivalence, while
    // the reference compares code points exactly. About 30k entries, ~1.5 MB.
    private let vocabulary: [[UInt8]: Int32]
    private let specialTokens: [(text: [Unicode.Scalar], id: Int32)]

    /// The number of entries in the vocabulary.
    public var vocabularySize: Int { vocabulary.count }

    /// Loads the vocabulary from a `vocab.txt` file (one token per line, id = line number).
    ///
    /// - Parameters:
    ///   - vocabularyFile: The `vocab.txt` of a BERT model.
    ///   - maxSequenceLength: Longest output in ids, including `[CLS]` and `[SEP]`.
    /// - Throws: ``EmbeddingError/missingModelFile(path:)`` or
    ///   ``EmbeddingError/invalidModelFile(path:reason:)``.
    public init(vocabularyFile: URL, maxSequenceLength: Int = 512) throws {
        guard FileManager.default.fileExists(atPath: vocabularyFile.path) else {
            throw EmbeddingError.missingModelFile(path: vocabularyFile.path)
        }
        let data: Data
        do { data = try Data(contentsOf: vocabularyFile) } catch {
            throw EmbeddingError.invalidModelFile(path: vocabularyFile.path, reason: "\(error)")
        }
        // Split on "\n" bytes only: a String split would treat "\r\n" and other separators as
        // line breaks and shift every id after them.
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { Array($0) }
        if lines.last?.isEmpty == true { lines.removeLast() }
        do {
            try self.init(vocabularyBytes: lines, maxSequenceLength: maxSequenceLength)
        } catch EmbeddingError.invalidModelFile(_, let reason) {
            throw EmbeddingError.invalidModelFile(path: vocabularyFile.path, reason: reason)
        }
    }

    /// Builds a tokenizer from an in-memory vocabulary; `tokens[i]` gets id `i`.
    ///
    /// - Parameters:
    ///   - tokens: The vocabulary, which must contain `[PAD]`, `[UNK]`, `[CLS]` and `[SEP]`.
    ///   - maxSequenceLength: Longest output in ids, including `[CLS]` and `[SEP]` (at least 2).
    /// - Throws: ``EmbeddingError/invalidModelFile(path:reason:)`` when a special token is missing.
    public init(vocabulary tokens: [String], maxSequenceLength: Int = 512) throws {
        try self.init(
            vocabularyBytes: tokens.map { Array($0.utf8) }, maxSequenceLength: maxSequenceLength)
    }

    private init(vocabularyBytes lines: [[UInt8]], maxSequenceLength: Int) throws {
        precondition(
            maxSequenceLength >= 2, "maxSequenceLength must leave room for [CLS] and [SEP]")
        var vocabulary: [[UInt8]: Int32] = [:]
        vocabulary.reserveCapacity(lines.count)
        for (id, line) in lines.enumerated() where vocabulary[line] == nil {
            vocabulary[line] = Int32(id)  // the reference keeps the first of duplicate lines
        }
        func id(_ token: String) throws -> Int32 {
            guard let id = vocabulary[Array(token.utf8)] else {
                throw EmbeddingError.invalidModelFile(
                    path: "vocab.txt", reason: "no \(token) token")
            }
            return id
        }
        self.vocabulary = vocabulary
        self.maxSequenceLength = maxSequenceLength
        clsID = try id("[CLS]")
        sepID = try id("[SEP]")
        unknownID = try id("[UNK]")
        paddingID = try id("[PAD]")
        var specials: [(text: [Unicode.Scalar], id: Int32)] = []
        for token in ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] {
            if let id = vocabulary[Array(token.utf8)] {
                specials.append((Array(token.unicodeScalars), id))
            }
        }
        specialTokens = specials
    }

    /// Turns a text into the ids the model receives: `[CLS]`, word pieces, `[SEP]`, truncated
    /// to ``maxSequenceLength``.
    ///
    /// - Parameter text: Any text; empty or whitespace-only gives `[CLS] [SEP]`.
    /// - Returns: Between 2 and ``maxSequenceLength`` ids.
    /// - Complexity: O(n·w) for n scalars and words of at most w = 100 scalars.
    public func encode(_ text: String) -> [Int32] {
        var ids: [Int32] = [clsID]
        let budget = maxSequenceLength - 1
        forEachPiece(of: text) { id in
            guard ids.count < budget else { return false }
            ids.append(id)
            return true
        }
        ids.append(sepID)
        return ids
    }

    /// The word-piece ids of a text without `[CLS]`/`[SEP]` and without truncation.
    ///
    /// - Parameter text: Any text.
    /// - Returns: One id per word piece.
    public func wordPieceIDs(_ text: String) -> [Int32] {
        var ids: [Int32] = []
        forEachPiece(of: text) {
            ids.append($0)
            return true
        }
        return ids
    }

    /// Calls `body` with each word-piece id in order until it returns false.
    private func forEachPiece(of text: String, _ body: (Int32) -> Bool) {
        let scalars = Array(text.unicodeScalars)
        var segmentStart = 0
        var i = 0
        // Special tokens are matched in the raw text before any normalisation, like the
        // reference's added-vocabulary pass (case-sensitive, leftmost, longest).
        while i < scalars.count {
            if scalars[i] == "[", let special = specialToken(in: scalars, at: i) {
                if !pieces(of: scalars[segmentStart..<i], body) { return }
                if !body(special.id) { return }
                i += special.length
                segmentStart = i
            } else {
                i += 1
            }
        }
        _ = pieces(of: scalars[segmentStart..<scalars.count], body)
    }

    private func specialToken(in scalars: [Unicode.Scalar], at start: Int) -> (
        id: Int32, length: Int
    )? {
        var best: (id: Int32, length: Int)?
        for special in specialTokens where start + special.text.count <= scalars.count {
            if scalars[start..<(start + special.text.count)].elementsEqual(special.text),
                special.text.count > (best?.length ?? 0)
            {
                best = (special.id, special.text.count)
            }
        }
        return best
    }

    /// Normalises and splits one segment of text (no special tokens inside); false = stopped.
    private func pieces(of segment: ArraySlice<Unicode.Scalar>, _ body: (Int32) -> Bool) -> Bool {
        if segment.isEmpty { return true }
        let normalized = Self.normalize(segment)
        var word: [Unicode.Scalar] = []
        for scalar in normalized {
            if Self.isWhitespace(scalar) {
                if !word.isEmpty, !wordPieces(word, body) { return false }
                word.removeAll(keepingCapacity: true)
            } else if Self.isPunctuation(scalar) {
                if !word.isEmpty, !wordPieces(word, body) { return false }
                word.removeAll(keepingCapacity: true)
                if !wordPieces([scalar], body) { return false }
            } else {
                word.append(scalar)
            }
        }
        if !word.isEmpty { return wordPieces(word, body) }
        return true
    }

    /// Greedy longest-match-first WordPiece over one word; false = stopped.
    private func wordPieces(_ word: [Unicode.Scalar], _ body: (Int32) -> Bool) -> Bool {
        if word.count > maxInputCharactersPerWord { return body(unknownID) }
        // UTF-8 bytes of the word and the byte offset of every scalar boundary.
        var bytes: [UInt8] = []
        var offsets: [Int] = [0]
        for scalar in word {
            bytes.append(contentsOf: String(scalar).utf8)
            offsets.append(bytes.count)
        }
        var found: [Int32] = []
        var start = 0
        var key: [UInt8] = []
        while start < word.count {
            var end = word.count
            var match: Int32?
            while start < end {
                key.removeAll(keepingCapacity: true)
                if start > 0 { key.append(contentsOf: [UInt8(ascii: "#"), UInt8(ascii: "#")]) }
                key.append(contentsOf: bytes[offsets[start]..<offsets[end]])
                if let id = vocabulary[key] {
                    match = id
                    break
                }
                end -= 1
            }
            guard let id = match else { return body(unknownID) }
            found.append(id)
            start = end
        }
        for id in found where !body(id) { return false }
        return true
    }

    // MARK: Normalisation (BertNormalizer: clean text, CJK spacing, strip accents, lowercase)

    static func normalize(_ segment: ArraySlice<Unicode.Scalar>) -> [Unicode.Scalar] {
        var cleaned = String.UnicodeScalarView()
        for scalar in segment {
            if scalar.value == 0 || scalar.value == 0xFFFD || isControl(scalar) { continue }
            if isWhitespace(scalar) {
                cleaned.append(" ")
            } else if isCJK(scalar) {
                cleaned.append(" ")
                cleaned.append(scalar)
                cleaned.append(" ")
            } else {
                cleaned.append(scalar)
            }
        }
        // Accent stripping: the reference strips whenever it lowercases (strip_accents unset).
        let decomposed = String(cleaned).decomposedStringWithCanonicalMapping
        var out: [Unicode.Scalar] = []
        out.reserveCapacity(segment.count)
        for scalar in decomposed.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            if scalar.isASCII {
                let v = scalar.value
                out.append(v >= 65 && v <= 90 ? Unicode.Scalar(v + 32)! : scalar)
            } else {
                // One scalar at a time, like Rust's char::to_lowercase: no final-sigma context.
                out.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
            }
        }
        return out
    }

    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case " ", "\t", "\n", "\r": return true
        default: return scalar.properties.isWhitespace
        }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "\t", "\n", "\r": return false
        default:
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned: return true
            default: return false
            }
        }
    }

    static func isPunctuation(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        if (33...47).contains(v) || (58...64).contains(v) || (91...96).contains(v)
            || (123...126).contains(v)
        {
            return true
        }
        switch scalar.properties.generalCategory {
        case .connectorPunctuation, .dashPunctuation, .openPunctuation, .closePunctuation,
            .initialPunctuation, .finalPunctuation, .otherPunctuation:
            return true
        default:
            return false
        }
    }

    static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x4E00...0x9FFF, 0x3400...0x4DBF, 0x20000...0x2A6DF, 0x2A700...0x2B73F,
            0x2B740...0x2B81F, 0x2B920...0x2CEAF, 0xF900...0xFAFF, 0x2F800...0x2FA1F:
            return true
        default:
            return false
        }
    }
}
