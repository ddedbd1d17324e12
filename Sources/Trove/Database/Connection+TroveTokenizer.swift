import TroveSQLite
import TroveText

extension Connection {
    /// Registers Trove's Swift tokenizer (`TokenizerConfiguration.fts5TokenizerName`) with this
    /// connection's FTS5, so collections created with a CJK configuration
    /// (`tokenize='trove cjk remove_diacritics 2 porter 1'`) can be written and searched. Every
    /// connection that opens such a collection must register it before touching the table.
    func registerTroveTokenizer() throws {
        try registerFTS5Tokenizer(named: TokenizerConfiguration.fts5TokenizerName) { arguments in
            guard let configuration = TokenizerConfiguration(fts5Arguments: arguments) else {
                return nil
            }
            let tokenizer = Tokenizer(configuration)
            return { text, emit in
                tokenizer.forEachTerm(utf8: text) { term, start, end in emit(term, start, end) }
            }
        }
    }
}
