/// Small stop-word lists for the typed-query path.
///
/// Stop words are dropped from what a person types before the keyword leg runs: a very common
/// word matches most documents, carries almost no BM25 weight, and costs the most to rank (it
/// has the longest posting list). Documents are always indexed in full, so a quoted phrase
/// containing a stop word still matches, and a query made only of stop words keeps them.
public enum Stopwords {
    /// The English list: Lucene's 33 classic stop words, plus pronouns, question words,
    /// auxiliaries and the clitic remnants of `what's` / `don't` (`s`, `t`, `d`, `ll`, `m`, `re`,
    /// `ve`) — the words people type into a search box that say nothing about the topic.
    /// Compared in folded, unstemmed form. 83 words.
    public static let english: Set<String> = [
        // Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (33).
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
        "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
        "they", "this", "to", "was", "will", "with",
        // Question words and function words people type into a search box.
        "what", "which", "who", "whom", "whose", "where", "when", "why", "how",
        "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her",
        "its", "them", "do", "does", "did", "have", "has", "had", "were", "been", "am",
        "from", "about", "so", "than", "too", "very", "can", "would", "should", "could",
        "s", "t", "d", "ll", "m", "re", "ve",
    ]
}
