import TroveText

extension CollectionConfiguration {
    /// The tokenizer for English text: `unicode61`, diacritics removed, Porter stemming
    /// (`groceries` finds `grocery`). The default of collections created with an embedder, since
    /// the default model (all-MiniLM-L6-v2) is English. See Documentation/PARAMETERS.md.
    public static let englishTokenizer = TokenizerConfiguration.english.fts5TokenizeArgument
    /// The tokenizer for Chinese, Japanese and Korean mixed with other scripts: Trove's own
    /// (overlapping CJK bigrams, `unicode61` elsewhere, diacritics removed, Porter stemming).
    public static let cjkTokenizer = TokenizerConfiguration.cjk.fts5TokenizeArgument
}
