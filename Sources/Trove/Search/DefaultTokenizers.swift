import TroveText

/// The tokenizers new text indexes get when none is named, and the rule that lets a file created
/// with an earlier default keep its own.
///
/// New indexes cut Chinese, Japanese, Korean, Thai, Lao, Khmer and Myanmar runs into overlapping
/// bigrams (``TokenizerConfiguration/Segmentation/bigram``), so `東京` or `数据库` are found
/// without configuration. Every other script tokenizes exactly as the earlier `unicode61`
/// defaults did (same terms, same stems, so the same BM25 scores): the bigram form costs English
/// nothing. A tokenizer is frozen with its index, so a collection created with an earlier default
/// keeps it: opening it with the current default is accepted and the stored tokenizer is used.
extension FullTextDefinition {
    /// The tokenizer of full-text indexes created without one: `unicode61` with diacritics removed
    /// and no stemming, plus bigrams for the scripts written without spaces (Trove's FTS5
    /// tokenizer, `trove bigram remove_diacritics 2 porter 0`).
    ///
    /// ```swift
    /// FullTextDefinition(fields: ["body"])   // finds 東京 in "東京で寿司を食べた"
    /// ```
    public static let defaultTokenizer = TokenizerConfiguration(segmentation: .bigram)
        .fts5TokenizeArgument

    /// The default of search collections created with an embedder: as ``defaultTokenizer`` with
    /// Porter stemming for English words (`TokenizerConfiguration.multilingual`, the `trove`
    /// tool's tokenizer).
    static let defaultStemmingTokenizer = TokenizerConfiguration.multilingual.fts5TokenizeArgument

    /// Each current default and the defaults it replaced, which tokenize every spaced script the
    /// same way (the earlier values are written out: they are what older files hold).
    private static let earlierDefaults: [String: Set<String>] = [
        defaultTokenizer: ["unicode61 remove_diacritics 2"],
        defaultStemmingTokenizer: ["porter unicode61 remove_diacritics 2"],
    ]

    /// Whether an index stored with tokenizer `stored` serves a request for `requested`: the
    /// same, or `requested` is a current default and `stored` one it replaced.
    static func tokenizer(_ stored: String, serves requested: String) -> Bool {
        stored == requested || earlierDefaults[requested]?.contains(stored) == true
    }

    /// Whether an index stored as `self` serves a request for `requested`: the same fields,
    /// weights and a tokenizer that ``tokenizer(_:serves:)``.
    func serves(_ requested: FullTextDefinition) -> Bool {
        fields == requested.fields && weights == requested.weights
            && Self.tokenizer(tokenizer, serves: requested.tokenizer)
    }

    /// Whether the stored definition `stored` serves `requested` (both absent counts).
    static func stored(_ stored: FullTextDefinition?, serves requested: FullTextDefinition?) -> Bool
    {
        switch (stored, requested) {
        case (nil, nil): return true
        case (let stored?, let requested?): return stored.serves(requested)
        default: return false
        }
    }
}
