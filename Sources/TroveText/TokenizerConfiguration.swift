/// How text is cut into terms: the frozen, per-collection tokenizer configuration.
///
/// The same configuration tokenizes documents and queries, in FTS5 and in the in-memory
/// ``BM25Index``, so a word is found exactly when its indexed form equals the query's.
///
/// - ``Segmentation/unicode61`` behaves like FTS5's built-in `unicode61` tokenizer: token
///   characters are Unicode letters, numbers and private-use characters; everything else
///   separates; case is folded; with ``removesDiacritics`` Latin letters lose their accents
///   (`café` = `cafe`), as `remove_diacritics 2` does.
/// - ``Segmentation/cjkBigram`` is the same, except that runs of Han, Hiragana, Katakana
///   (together) and Hangul are cut into overlapping two-character terms (a run of one character
///   is a single term), so `数据库` matches `数据库管理` without a dictionary.
/// - ``Segmentation/bigram`` is ``Segmentation/cjkBigram`` plus the same rule for the other
///   scripts written without spaces: a run of Thai, Lao, Khmer or Myanmar letters and their
///   combining marks is cut into overlapping two-code-point terms (`กินข้าว` → `กิ`, `ิน`,
///   `นข`, …), so any part of a word of two or more code points is found. It is a separate
///   value, not a change to `cjk`, because a collection's tokenizer is frozen: text indexed by
///   `cjk` must keep tokenizing the same way.
/// - ``stemsEnglish`` applies the Porter (1980) stemmer to each term, as FTS5's `porter`
///   wrapper does (`groceries` and `grocery` both index as `groceri`).
///
/// ```swift
/// let tokenizer = Tokenizer(.english)
/// tokenizer.terms(in: "Café groceries") // ["cafe", "groceri"]
/// ```
public struct TokenizerConfiguration: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Where terms begin and end.
    public enum Segmentation: String, Sendable, Hashable, Codable {
        /// FTS5 `unicode61`: runs of letters and numbers.
        case unicode61
        /// `unicode61`, with CJK runs cut into overlapping bigrams.
        case cjkBigram = "cjk"
        /// `unicode61`, with CJK, Thai, Lao, Khmer and Myanmar runs cut into overlapping bigrams.
        case bigram
    }

    /// Where terms begin and end.
    public var segmentation: Segmentation
    /// Whether Latin diacritics are removed (`remove_diacritics 2`); case is always folded.
    public var removesDiacritics: Bool
    /// Whether terms are reduced by the Porter stemmer (English).
    public var stemsEnglish: Bool

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - segmentation: Where terms begin and end.
    ///   - removesDiacritics: Whether Latin diacritics are removed. Default `true`.
    ///   - stemsEnglish: Whether the Porter stemmer is applied. Default `false`.
    public init(
        segmentation: Segmentation = .unicode61, removesDiacritics: Bool = true,
        stemsEnglish: Bool = false
    ) {
        self.segmentation = segmentation
        self.removesDiacritics = removesDiacritics
        self.stemsEnglish = stemsEnglish
    }

    /// English text (the default for the English default embedding model): `unicode61`,
    /// diacritics removed, Porter stemming.
    public static let english = TokenizerConfiguration(stemsEnglish: true)
    /// Any alphabetic language: `unicode61`, diacritics removed, no stemming.
    public static let unicode = TokenizerConfiguration()
    /// Chinese, Japanese, Korean mixed with other scripts: CJK bigrams, diacritics removed,
    /// Porter stemming for the other words.
    public static let cjk = TokenizerConfiguration(segmentation: .cjkBigram, stemsEnglish: true)

    /// Notes in any language (the `trove` tool's default): CJK, Thai, Lao, Khmer and Myanmar
    /// runs cut into bigrams, diacritics removed, Porter stemming for English words. English
    /// text tokenizes exactly as with ``english``.
    public static let multilingual = TokenizerConfiguration(
        segmentation: .bigram, stemsEnglish: true)

    /// The name under which Trove registers its own FTS5 tokenizer (used by ``Segmentation/cjkBigram``).
    public static let fts5TokenizerName = "trove"

    /// The value of FTS5's `tokenize=` option that tokenizes like this configuration.
    ///
    /// `unicode61` configurations use SQLite's built-in tokenizers; the bigram segmentations need
    /// Trove's tokenizer registered on the connection under ``fts5TokenizerName``, which reads
    /// back the same arguments with ``init(fts5Arguments:)``.
    public var fts5TokenizeArgument: String {
        switch segmentation {
        case .unicode61:
            let base = "unicode61 remove_diacritics \(removesDiacritics ? 2 : 0)"
            return stemsEnglish ? "porter \(base)" : base
        case .cjkBigram, .bigram:
            return "\(Self.fts5TokenizerName) \(fts5Arguments.joined(separator: " "))"
        }
    }

    /// The arguments Trove's registered FTS5 tokenizer receives (after its name).
    public var fts5Arguments: [String] {
        [
            segmentation.rawValue, "remove_diacritics", removesDiacritics ? "2" : "0",
            "porter", stemsEnglish ? "1" : "0",
        ]
    }

    /// Reads the arguments written by ``fts5Arguments``; `nil` for anything else.
    ///
    /// - Parameter fts5Arguments: The arguments FTS5 passes to the tokenizer's constructor.
    public init?(fts5Arguments: [String]) {
        var configuration = TokenizerConfiguration()
        var rest = fts5Arguments[...]
        if let first = rest.first, let segmentation = Segmentation(rawValue: first) {
            configuration.segmentation = segmentation
            rest = rest.dropFirst()
        }
        while let key = rest.first {
            guard let value = rest.dropFirst().first else { return nil }
            switch (key, value) {
            case ("remove_diacritics", "0"): configuration.removesDiacritics = false
            case ("remove_diacritics", "1"), ("remove_diacritics", "2"):
                configuration.removesDiacritics = true
            case ("porter", "0"): configuration.stemsEnglish = false
            case ("porter", "1"): configuration.stemsEnglish = true
            default: return nil
            }
            rest = rest.dropFirst(2)
        }
        self = configuration
    }

    /// Reads an FTS5 `tokenize=` value that this configuration can reproduce: `unicode61` with
    /// or without `porter` and `remove_diacritics`, or Trove's own tokenizer with its arguments.
    /// `nil` for anything else (`ascii`, `trigram`, other options, other tokenizers).
    ///
    /// ```swift
    /// TokenizerConfiguration(fts5TokenizeArgument: "porter unicode61 remove_diacritics 2") // .english
    /// ```
    ///
    /// - Parameter fts5TokenizeArgument: The value of FTS5's `tokenize=` option.
    public init?(fts5TokenizeArgument: String) {
        var words = fts5TokenizeArgument.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(
            String.init)[...]
        if words.first == Self.fts5TokenizerName {
            self.init(fts5Arguments: Array(words.dropFirst()))
            return
        }
        var configuration = TokenizerConfiguration(removesDiacritics: true, stemsEnglish: false)
        if words.first == "porter" {
            configuration.stemsEnglish = true
            words = words.dropFirst()
        }
        // FTS5's defaults: porter wraps unicode61; unicode61 removes diacritics (mode 1).
        if let base = words.first {
            guard base == "unicode61" else { return nil }
            words = words.dropFirst()
        }
        while let key = words.first {
            guard key == "remove_diacritics", let value = words.dropFirst().first else {
                return nil
            }
            switch value {
            case "0": configuration.removesDiacritics = false
            case "1", "2": configuration.removesDiacritics = true
            default: return nil
            }
            words = words.dropFirst(2)
        }
        self = configuration
    }

    public var description: String {
        "\(segmentation.rawValue)\(removesDiacritics ? " remove_diacritics" : "")\(stemsEnglish ? " porter" : "")"
    }
}
