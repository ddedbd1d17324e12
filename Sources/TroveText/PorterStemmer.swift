/// The Porter (1980) suffix-stripping stemmer, as SQLite's FTS5 `porter` tokenizer applies it.
///
/// M. F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980. Like FTS5 (and
/// Porter's own reference implementation), step 2 maps `-bli` to `-ble` and `-logi` to `-log`.
/// It works on the bytes of a term that the `unicode61` segmentation has already folded; terms
/// shorter than 3 or longer than 64 bytes pass through unchanged; non-letter bytes count as
/// consonants. The result is identical to FTS5's for every term, so documents indexed by FTS5
/// and queries stemmed here (or the reverse) agree.
///
/// ```swift
/// PorterStemmer.stem("groceries") // "groceri"
/// PorterStemmer.stem("grocery")   // "groceri"
/// ```
public enum PorterStemmer {
    /// Terms longer than this many bytes are not stemmed (FTS5's limit).
    public static let maximumTermBytes = 64

    /// The stem of a single folded (lower-case) term.
    ///
    /// - Parameter term: A term as the tokenizer produces it (lower case).
    /// - Returns: Its Porter stem.
    public static func stem(_ term: String) -> String {
        var bytes = Array(term.utf8)
        let count = bytes.count
        bytes.append(contentsOf: [0, 0])  // room for the one-byte growth of step 1b
        let stemmed = stem(&bytes, count: count)
        return String(decoding: bytes[..<stemmed], as: UTF8.self)
    }

    /// Stems `word[0..<count]` in place.
    ///
    /// - Parameters:
    ///   - word: The term's bytes, with at least one spare byte after `count`.
    ///   - count: The number of bytes of the term.
    /// - Returns: The number of bytes of the stem.
    static func stem(_ word: inout [UInt8], count: Int) -> Int {
        guard count >= 3, count <= maximumTermBytes else { return count }
        return word.withUnsafeMutableBufferPointer { w in
            var n = count
            step1a(w, &n)
            if step1b(w, &n) { step1bCleanup(w, &n) }
            // Step 1c: (*v*) y -> i
            if w[n - 1] == y, hasVowel(w, n - 1) { w[n - 1] = i }
            apply(step2, w, &n)
            apply(step3, w, &n)
            apply(step4, w, &n)
            // Step 5a: (m > 1) e -> ; (m = 1 and not *o) e ->
            if w[n - 1] == e {
                let m = measure(w, n - 1)
                if m > 1 || (m == 1 && !endsCVC(w, n - 1)) { n -= 1 }
            }
            // Step 5b: (m > 1 and *d and *L) -> single letter
            if n > 1, w[n - 1] == l, w[n - 2] == l, measure(w, n - 1) > 1 { n -= 1 }
            return n
        }
    }

    // MARK: - Letters and measures

    private static let a = UInt8(ascii: "a"), e = UInt8(ascii: "e"), i = UInt8(ascii: "i")
    private static let o = UInt8(ascii: "o"), u = UInt8(ascii: "u"), y = UInt8(ascii: "y")
    private static let l = UInt8(ascii: "l"), s = UInt8(ascii: "s"), z = UInt8(ascii: "z")

    @inline(__always)
    private static func isVowel(_ c: UInt8, yIsVowel: Bool) -> Bool {
        c == a || c == e || c == i || c == o || c == u || (yIsVowel && c == y)
    }

    /// Porter's m: the number of vowel-consonant sequences in `w[0..<n]` ([C](VC)^m[V]).
    /// `y` is a vowel after a consonant.
    private static func measure(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: Int) -> Int {
        var m = 0
        var previousIsConsonant = false
        var seenVowel = false
        for index in 0..<n {
            let isConsonant = !isVowel(w[index], yIsVowel: previousIsConsonant)
            if isConsonant, seenVowel {
                m += 1
                seenVowel = false
            }
            if !isConsonant { seenVowel = true }
            previousIsConsonant = isConsonant
        }
        return m
    }

    /// *v*: the stem contains a vowel. As in FTS5, `y` counts as a vowel anywhere but first.
    private static func hasVowel(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: Int) -> Bool {
        for index in 0..<n where isVowel(w[index], yIsVowel: index > 0) { return true }
        return false
    }

    /// *o: the stem ends consonant-vowel-consonant, the last not w, x or y.
    private static func endsCVC(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: Int) -> Bool {
        guard n >= 3 else { return false }
        let last = w[n - 1]
        if last == UInt8(ascii: "w") || last == UInt8(ascii: "x") || last == y { return false }
        // Consonant flags of the last three letters (y's status depends on all before it).
        var third = false
        var second = false
        var first = false
        var previousIsConsonant = false
        for index in 0..<n {
            let isConsonant = !isVowel(w[index], yIsVowel: previousIsConsonant)
            (third, second, first) = (second, first, isConsonant)
            previousIsConsonant = isConsonant
        }
        return third && !second && first
    }

    @inline(__always)
    private static func ends(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: Int, _ suffix: [UInt8])
        -> Bool
    {
        // The stem before the suffix must not be empty (FTS5 requires n > length).
        guard n > suffix.count else { return false }
        var k = n - suffix.count
        for c in suffix {
            if w[k] != c { return false }
            k += 1
        }
        return true
    }

    // MARK: - Steps

    private static func step1a(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: inout Int) {
        guard w[n - 1] == s else { return }
        if w[n - 2] == e {
            // sses -> ss, ies -> i, other -es -> -e
            if (n > 4 && w[n - 4] == s && w[n - 3] == s) || (n > 3 && w[n - 3] == i) {
                n -= 2
            } else {
                n -= 1
            }
        } else if w[n - 2] != s {
            n -= 1  // s -> ; ss stays
        }
    }

    private static let eed = Array("eed".utf8), ed = Array("ed".utf8), ing = Array("ing".utf8)
    private static let cleanupSuffixes = [Array("at".utf8), Array("bl".utf8), Array("iz".utf8)]

    /// (m > 0) eed -> ee; (*v*) ed -> ; (*v*) ing -> . Returns whether -ed or -ing went.
    private static func step1b(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: inout Int) -> Bool {
        if ends(w, n, eed) {
            if measure(w, n - 3) > 0 { n -= 1 }
            return false
        }
        if ends(w, n, ed) {
            if hasVowel(w, n - 2) {
                n -= 2
                return true
            }
            return false
        }
        if ends(w, n, ing) {
            if hasVowel(w, n - 3) {
                n -= 3
                return true
            }
        }
        return false
    }

    /// After -ed/-ing: at -> ate, bl -> ble, iz -> ize; undouble; (m = 1 and *o) -> e.
    private static func step1bCleanup(_ w: UnsafeMutableBufferPointer<UInt8>, _ n: inout Int) {
        for suffix in cleanupSuffixes where ends(w, n, suffix) {
            w[n] = e
            n += 1
            return
        }
        let c = w[n - 1]
        if n >= 2, !isVowel(c, yIsVowel: false), c != l, c != s, c != z, c == w[n - 2] {
            n -= 1
        } else if measure(w, n) == 1, endsCVC(w, n) {
            w[n] = e
            n += 1
        }
    }

    private struct Rule {
        let suffix: [UInt8]
        let replacement: [UInt8]
        let minimumMeasure: Int
        /// Step 4's -ion needs the stem to end in s or t.
        let needsSOrT: Bool

        init(_ suffix: String, _ replacement: String, m: Int, sOrT: Bool = false) {
            self.suffix = Array(suffix.utf8)
            self.replacement = Array(replacement.utf8)
            minimumMeasure = m
            needsSOrT = sOrT
        }
    }

    /// The first rule whose suffix ends the word decides: its replacement applies when its
    /// condition holds, and no later rule is tried either way (Porter's longest-match, as the
    /// rules are listed longest first where one suffix ends another).
    private static func apply(
        _ rules: [[Rule]], _ w: UnsafeMutableBufferPointer<UInt8>, _ n: inout Int
    ) {
        guard n >= 2 else { return }
        // Only rules whose suffix has the word's second-to-last letter can match (FTS5 switches on
        // it the same way); their relative order is kept.
        for rule in rules[Int(w[n - 2])] where ends(w, n, rule.suffix) {
            let stem = n - rule.suffix.count
            guard measure(w, stem) >= rule.minimumMeasure else { return }
            if rule.needsSOrT, w[stem - 1] != s, w[stem - 1] != UInt8(ascii: "t") { return }
            for (offset, c) in rule.replacement.enumerated() { w[stem + offset] = c }
            n = stem + rule.replacement.count
            return
        }
    }

    /// Rules grouped by their suffix's second-to-last byte (256 buckets).
    private static func byPenultimate(_ rules: [Rule]) -> [[Rule]] {
        var buckets = [[Rule]](repeating: [], count: 256)
        for rule in rules { buckets[Int(rule.suffix[rule.suffix.count - 2])].append(rule) }
        return buckets
    }

    private static let step2: [[Rule]] = byPenultimate([
        Rule("ational", "ate", m: 1), Rule("tional", "tion", m: 1),
        Rule("enci", "ence", m: 1), Rule("anci", "ance", m: 1),
        Rule("izer", "ize", m: 1),
        Rule("logi", "log", m: 1),
        Rule("bli", "ble", m: 1), Rule("alli", "al", m: 1), Rule("entli", "ent", m: 1),
        Rule("eli", "e", m: 1), Rule("ousli", "ous", m: 1),
        Rule("ization", "ize", m: 1), Rule("ation", "ate", m: 1), Rule("ator", "ate", m: 1),
        Rule("alism", "al", m: 1), Rule("iveness", "ive", m: 1), Rule("fulness", "ful", m: 1),
        Rule("ousness", "ous", m: 1),
        Rule("aliti", "al", m: 1), Rule("iviti", "ive", m: 1), Rule("biliti", "ble", m: 1),
    ])

    private static let step3: [[Rule]] = byPenultimate([
        Rule("ical", "ic", m: 1),
        Rule("ness", "", m: 1),
        Rule("icate", "ic", m: 1), Rule("iciti", "ic", m: 1),
        Rule("ful", "", m: 1),
        Rule("ative", "", m: 1),
        Rule("alize", "al", m: 1),
    ])

    private static let step4: [[Rule]] = byPenultimate([
        Rule("al", "", m: 2),
        Rule("ance", "", m: 2), Rule("ence", "", m: 2),
        Rule("er", "", m: 2),
        Rule("ic", "", m: 2),
        Rule("able", "", m: 2), Rule("ible", "", m: 2),
        Rule("ant", "", m: 2), Rule("ement", "", m: 2), Rule("ment", "", m: 2),
        Rule("ent", "", m: 2),
        Rule("ion", "", m: 2, sOrT: true), Rule("ou", "", m: 2),
        Rule("ism", "", m: 2),
        Rule("ate", "", m: 2), Rule("iti", "", m: 2),
        Rule("ous", "", m: 2),
        Rule("ive", "", m: 2),
        Rule("ize", "", m: 2),
    ])
}
