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
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
        "it",
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

extension Stopwords {
    /// Function words of other languages people write notes in, folded (lowercase, diacritics
    /// removed) like the terms they are compared with. Each list holds articles, pronouns,
    /// prepositions, conjunctions, auxiliaries and question words, after the Snowball lists
    /// (and, for Hindi written in Latin letters, the particles and light verbs of Hinglish).
    /// Only used for a query written in that language (``forQuery(_:)``): several of these words
    /// are English words too (`die`, `son`, `hat`, `plus`, `main`).
    public static let otherLanguages: [(language: String, words: Set<String>)] = [
        (
            "es",
            [
                "a", "al", "algo", "ante", "antes", "como", "con", "contra", "cual", "cuando",
                "cuanto",
                "cuanta", "cuantos", "cuantas", "de", "del", "desde", "donde", "durante", "e", "el",
                "ella",
                "ellos", "en", "entre", "era", "es", "esa", "ese", "eso", "esta", "estan", "estar",
                "estas",
                "este", "esto", "estos", "fue", "ha", "hasta", "hay", "la", "las", "le", "les",
                "lo", "los",
                "me", "mi", "mis", "muy", "mas", "nada", "ni", "no", "nos", "o", "para", "pero",
                "poco",
                "por", "porque", "que", "quien", "se", "ser", "si", "sin", "sobre", "son", "su",
                "sus",
                "tambien", "te", "ti", "tu", "tus", "un", "una", "unas", "uno", "unos", "y", "ya",
                "yo",
            ]
        ),
        (
            "fr",
            [
                "a", "ai", "au", "aux", "avec", "avez", "avoir", "avons", "c", "ce", "ces", "cet",
                "cette",
                "combien", "comment", "d", "dans", "de", "des", "du", "elle", "elles", "en", "es",
                "est",
                "et", "etes", "etre", "eux", "il", "ils", "j", "je", "l", "la", "le", "les", "leur",
                "lui",
                "m", "ma", "mais", "me", "meme", "mes", "moi", "mon", "n", "ne", "nos", "notre",
                "nous",
                "on", "ont", "ou", "par", "pas", "pour", "pourquoi", "qu", "quand", "que", "quel",
                "quelle",
                "quels", "quelles", "qui", "quoi", "s", "sa", "se", "ses", "son", "sont", "suis",
                "sur",
                "t", "ta", "te", "tes", "toi", "ton", "tu", "un", "une", "vos", "votre", "vous",
                "y",
            ]
        ),
        (
            "de",
            [
                "aber", "alle", "als", "also", "am", "an", "auch", "auf", "aufs", "aus", "bei",
                "bin",
                "bis", "bist", "da", "damit", "dann", "das", "dass", "dein", "deine", "dem", "den",
                "der",
                "des", "dich", "die", "dir", "doch", "du", "durch", "ein", "eine", "einem", "einen",
                "einer", "er", "es", "euch", "fur", "haben", "hat", "hatte", "ich", "ihm", "ihn",
                "ihr",
                "im", "in", "ist", "ja", "kann", "kein", "keine", "man", "mein", "meine", "mich",
                "mir",
                "mit", "muss", "mussen", "nach", "nicht", "noch", "nun", "nur", "ob", "oder",
                "ohne",
                "sehr", "sein", "sich", "sie", "sind", "so", "soll", "um", "und", "uns", "unter",
                "vom",
                "von", "vor", "wann", "war", "warum", "was", "weil", "welche", "wenn", "wer",
                "werden",
                "wie", "wir", "wird", "wo", "zu", "zum", "zur",
            ]
        ),
        (
            "it",
            [
                "a", "abbiamo", "ai", "al", "alla", "alle", "che", "chi", "ci", "come", "con",
                "cui",
                "da", "dei", "del", "della", "delle", "di", "dove", "e", "ed", "era", "fra", "gli",
                "ha",
                "hai", "hanno", "ho", "i", "il", "in", "la", "le", "lo", "ma", "mi", "mia", "mio",
                "nel",
                "nella", "non", "o", "per", "perche", "quando", "quanto", "quanta", "quella",
                "quello",
                "questa", "questo", "sei", "si", "sono", "su", "sua", "suo", "ti", "tra", "tua",
                "tuo",
                "un", "una", "uno", "vi",
            ]
        ),
        (
            "pt",
            [
                "a", "ao", "aos", "as", "ate", "com", "como", "da", "das", "de", "do", "dos", "e",
                "ela",
                "ele", "eles", "em", "entre", "essa", "esse", "eu", "foi", "isso", "ja", "mais",
                "mas",
                "me", "meu", "minha", "muito", "na", "nao", "nas", "nem", "no", "nos", "o", "onde",
                "os",
                "ou", "para", "pela", "pelo", "por", "porque", "qual", "quando", "quanto", "que",
                "quem",
                "sao", "se", "sem", "ser", "seu", "sua", "tambem", "tem", "um", "uma", "voce",
            ]
        ),
        (
            "nl",
            [
                "aan", "al", "als", "ben", "bij", "dan", "dat", "de", "deze", "die", "dit", "door",
                "een",
                "en", "er", "geen", "had", "haar", "heb", "hebben", "heeft", "het", "hij", "hoe",
                "hun",
                "ik", "in", "is", "je", "kan", "maar", "me", "meer", "met", "mij", "mijn", "moet",
                "naar",
                "niet", "nog", "nu", "of", "om", "ons", "ook", "op", "over", "te", "tot", "u",
                "uit",
                "van", "voor", "waar", "wanneer", "waarom", "was", "wat", "wie", "wil", "zal", "ze",
                "zich", "zij", "zijn", "zo", "zou",
            ]
        ),
        (
            "hi-Latn",
            [
                "aap", "abhi", "apna", "apni", "aur", "bhi", "diya", "ek", "gaya", "gayi", "hai",
                "hain",
                "hi", "ho", "hona", "hum", "iska", "jab", "ka", "kab", "kahan", "kaise", "kar",
                "karna",
                "karo", "kaun", "ke", "ki", "kiya", "kitna", "kitne", "kitni", "ko", "koi", "kuch",
                "kya",
                "kyon", "kyun", "liya", "main", "me", "mein", "mera", "meri", "na", "nahi", "nahin",
                "par", "raha", "rahe", "rahi", "se", "tab", "tera", "teri", "tha", "the", "thi",
                "to",
                "tum", "uska", "uski", "vo", "wo", "woh", "ya", "ye", "yeh",
            ]
        ),
    ]

    /// The stop words for one query: English, plus the function words of the language the
    /// query is written in, when that is not English.
    ///
    /// The language is the one whose list holds the most of the query's words, provided it holds
    /// at least two and more than the English list does: "gaadi ka insurance kab renew karna hai"
    /// counts four Hindi particles and no English stop word, so `ka`, `kab`, `karna` and `hai`
    /// are dropped and the keyword leg searches for gaadi, insurance and renew. An English query
    /// keeps every word that only another language calls a stop word (`winter hat`, `die cast`).
    ///
    /// - Parameter foldedTerms: The query's words, folded and unstemmed.
    public static func forQuery(_ foldedTerms: [String]) -> Set<String> {
        let englishCount = foldedTerms.count { english.contains($0) }
        var best: (count: Int, words: Set<String>)?
        for (_, words) in otherLanguages {
            let count = foldedTerms.count { words.contains($0) }
            if count > (best?.count ?? 0) { best = (count, words) }
        }
        guard let best, best.count >= 2, best.count > englishCount else { return english }
        return english.union(best.words)
    }
}
