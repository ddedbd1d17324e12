/// One term of a text, where it came from, and its position among the text's terms.
public struct Token: Sendable, Hashable {
    /// The indexed form: case folded, diacritics removed and stemmed as configured.
    public var term: String
    /// The bytes of the UTF-8 text this term was read from (FTS5 needs them for snippets).
    public var byteRange: Range<Int>
    /// The term's index among the text's terms (0, 1, 2, ...); phrases need consecutive ones.
    public var position: Int

    /// Creates a token.
    public init(term: String, byteRange: Range<Int>, position: Int) {
        self.term = term
        self.byteRange = byteRange
        self.position = position
    }
}

/// Cuts text into terms according to a ``TokenizerConfiguration``.
///
/// The scanner works on UTF-8 bytes, the form FTS5 hands to tokenizers, and never allocates per
/// term on the byte-level path (``forEachTerm(utf8:_:)``). ASCII is classified by a 128-entry
/// table; other code points by ``UnicodeFolding``'s shared tables.
///
/// ```swift
/// let tokenizer = Tokenizer(.cjk)
/// tokenizer.terms(in: "東京で寿司 Sushi") // ["東京", "京で", "で寿", "寿司", "sushi"]
/// ```
public struct Tokenizer: Sendable {
    /// How this tokenizer cuts and folds terms.
    public let configuration: TokenizerConfiguration

    /// Creates a tokenizer.
    ///
    /// - Parameter configuration: How terms are cut and folded. Default ``TokenizerConfiguration/english``.
    public init(_ configuration: TokenizerConfiguration = .english) {
        self.configuration = configuration
    }

    /// The terms of a text with their byte ranges and positions.
    ///
    /// - Parameter text: Any text.
    /// - Returns: The tokens in text order.
    /// - Complexity: O(n) in the UTF-8 length of `text`.
    public func tokens(in text: String) -> [Token] {
        var tokens: [Token] = []
        var text = text
        text.withUTF8 { bytes in
            forEachTerm(utf8: bytes) { term, start, end in
                tokens.append(
                    Token(
                        term: String(decoding: term, as: UTF8.self), byteRange: start..<end,
                        position: tokens.count))
                return true
            }
        }
        return tokens
    }

    /// The terms of a text, in order, repeats included.
    ///
    /// - Parameter text: Any text.
    /// - Returns: The indexed form of each term.
    public func terms(in text: String) -> [String] {
        tokens(in: text).map(\.term)
    }

    /// Calls `body` with each term of a UTF-8 text, in order.
    ///
    /// Invalid UTF-8 is tolerated: a byte that does not start a valid sequence separates terms.
    ///
    /// - Parameters:
    ///   - utf8: The text's bytes.
    ///   - body: Receives the term's bytes (valid only during the call), and the start and end
    ///     byte offsets it was read from. Return `false` to stop.
    /// - Complexity: O(n) in the length of `utf8`.
    public func forEachTerm(
        utf8: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, Int, Int) throws -> Bool
    ) rethrows {
        let count = utf8.count
        let removesDiacritics = configuration.removesDiacritics
        let bigrams = configuration.segmentation != .unicode61
        // The frozen `cjk` segmentation predates the Southeast Asian rule: its Thai stays as
        // `unicode61` cuts it, so databases written by it keep matching.
        let maximumClass: UInt8 = configuration.segmentation == .bigram ? 3 : 2
        let stems = configuration.stemsEnglish
        // The term being built; grows past 64 bytes only for very long terms.
        var term = [UInt8]()
        term.reserveCapacity(80)
        var run: [(start: Int, end: Int, code: UInt32)] = []
        var index = 0
        // A local copy of the shared table: no lazy-global check or retain per byte.
        let asciiIsToken = Self.asciiIsToken

        func emit(_ bytes: inout [UInt8], _ start: Int, _ end: Int, stem: Bool) throws -> Bool {
            var length = bytes.count
            if stem, length >= 3, length <= PorterStemmer.maximumTermBytes {
                bytes.append(0)  // room for one byte of growth
                length = PorterStemmer.stem(&bytes, count: length)
            }
            return try bytes.withUnsafeBufferPointer {
                try body(UnsafeBufferPointer(rebasing: $0[..<length]), start, end)
            }
        }

        while index < count {
            // Skip separators until a term (or a CJK run) starts.
            var start = index
            var first: UnicodeFolding.Info?
            var firstLength = 1
            while index < count {
                let byte = utf8[index]
                if byte < 0x80 {
                    if asciiIsToken[Int(byte)] { break }
                    index += 1
                    continue
                }
                let (code, length) = Self.decode(utf8, at: index)
                let info = UnicodeFolding.lookup(code)
                if info.isToken || (bigrams && info.cjkClass != 0 && info.cjkClass <= maximumClass)
                {
                    first = info
                    firstLength = length
                    break
                }
                index += length
            }
            guard index < count else { return }
            start = index

            if bigrams, let info = first, info.cjkClass != 0, info.cjkClass <= maximumClass {
                // A CJK run: consecutive characters of one class, cut into overlapping bigrams.
                run.removeAll(keepingCapacity: true)
                run.append((index, index + firstLength, info.folded))
                index += firstLength
                while index < count, utf8[index] >= 0x80 {
                    let (code, length) = Self.decode(utf8, at: index)
                    let next = UnicodeFolding.lookup(code)
                    guard next.cjkClass == info.cjkClass else { break }
                    run.append((index, index + length, next.folded))
                    index += length
                }
                if run.count == 1 {
                    term.removeAll(keepingCapacity: true)
                    Self.appendUTF8(run[0].code, to: &term)
                    if try !emit(&term, run[0].start, run[0].end, stem: false) { return }
                } else {
                    for k in 0..<(run.count - 1) {
                        term.removeAll(keepingCapacity: true)
                        Self.appendUTF8(run[k].code, to: &term)
                        Self.appendUTF8(run[k + 1].code, to: &term)
                        if try !emit(&term, run[k].start, run[k + 1].end, stem: false) { return }
                    }
                }
                continue
            }

            // A unicode61 term: token characters and diacritics, folded.
            term.removeAll(keepingCapacity: true)
            var end = index
            while index < count {
                let byte = utf8[index]
                if byte < 0x80 {
                    guard asciiIsToken[Int(byte)] else { break }
                    term.append(byte >= 0x41 && byte <= 0x5A ? byte + 32 : byte)
                    index += 1
                } else {
                    let (code, length) = Self.decode(utf8, at: index)
                    let info = UnicodeFolding.lookup(code)
                    if bigrams && info.cjkClass != 0 && info.cjkClass <= maximumClass { break }
                    if info.isDiacritic {
                        if !removesDiacritics { Self.appendUTF8(code, to: &term) }
                    } else if info.isToken {
                        let folded =
                            removesDiacritics
                            ? UnicodeFolding.removingDiacritic(info.folded) : info.folded
                        Self.appendUTF8(folded, to: &term)
                    } else {
                        break
                    }
                    index += length
                }
                end = index
            }
            if try !emit(&term, start, end, stem: stems) { return }
        }
    }

    // MARK: - Bytes

    /// ASCII letters and digits are token characters; everything else in ASCII separates.
    static let asciiIsToken: [Bool] = (0..<128).map { byte in
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }

    /// Decodes the code point at `index` (a byte >= 0x80). Invalid sequences decode as U+FFFD
    /// over one byte, which separates terms.
    @inline(__always)
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> (UInt32, Int) {
        let b0 = UInt32(bytes[index])
        let length: Int
        var code: UInt32
        switch b0 {
        case 0xC2...0xDF:
            length = 2
            code = b0 & 0x1F
        case 0xE0...0xEF:
            length = 3
            code = b0 & 0x0F
        case 0xF0...0xF4:
            length = 4
            code = b0 & 0x07
        default: return (0xFFFD, 1)
        }
        guard index + length <= bytes.count else { return (0xFFFD, 1) }
        for k in 1..<length {
            let b = UInt32(bytes[index + k])
            guard b & 0xC0 == 0x80 else { return (0xFFFD, 1) }
            code = (code << 6) | (b & 0x3F)
        }
        return (code, length)
    }

    @inline(__always)
    static func appendUTF8(_ code: UInt32, to bytes: inout [UInt8]) {
        switch code {
        case 0..<0x80:
            bytes.append(UInt8(code))
        case 0x80..<0x800:
            bytes.append(UInt8(0xC0 | (code >> 6)))
            bytes.append(UInt8(0x80 | (code & 0x3F)))
        case 0x800..<0x1_0000:
            bytes.append(UInt8(0xE0 | (code >> 12)))
            bytes.append(UInt8(0x80 | ((code >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (code & 0x3F)))
        default:
            bytes.append(UInt8(0xF0 | (code >> 18)))
            bytes.append(UInt8(0x80 | ((code >> 12) & 0x3F)))
            bytes.append(UInt8(0x80 | ((code >> 6) & 0x3F)))
            bytes.append(UInt8(0x80 | (code & 0x3F)))
        }
    }
}
