import Foundation

/// Per-code-point facts the tokenizer needs: is it part of a term, and what does it fold to.
///
/// Built once from the standard library's Unicode properties (plus Foundation's canonical
/// decomposition for diacritics) into flat tables for the Basic Multilingual Plane; code points
/// above it are classified on the fly. The rules reproduce FTS5's `unicode61` tokenizer:
///
/// - token characters: general categories L*, N*, Co (private use) and Cn (unassigned: FTS5's
///   tables, from an older Unicode version, treat code points they do not know as token
///   characters, so text written with newer letters still forms terms);
/// - the combining diacritics U+0300–U+0331 continue a term without starting one, and are
///   dropped when diacritics are removed;
/// - case folding is Unicode simple case folding (`µ`→`μ`, `ς`→`σ`, `ſ`→`s`, `İ`→`i`);
/// - removing diacritics maps a Latin letter whose canonical decomposition is an ASCII letter
///   followed by combining marks to that ASCII letter (`é`→`e`, `ǖ`→`u`, `ấ`→`a`); `ø`, `ł`,
///   `æ`, `ß` have no such decomposition and stay, and other scripts keep their marks (`й`, `ά`),
///   as in FTS5.
enum UnicodeFolding {
    /// What a code point is to the tokenizer.
    struct Info {
        /// A `unicode61` token character (L*, N*, Co, Cn).
        var isToken: Bool
        /// A combining diacritic: continues a term, never starts one.
        var isDiacritic: Bool
        /// 0: not CJK; 1: Han, Hiragana or Katakana; 2: Hangul; 3: Thai, Lao, Khmer or Myanmar
        /// (letters and their combining marks). Bigrams never cross classes; class 3 is cut into
        /// bigrams only by ``TokenizerConfiguration/Segmentation/bigram``.
        var cjkClass: UInt8
        /// The case-folded code point (diacritics kept).
        var folded: UInt32
    }

    // Each entry: bits 0..<21 the case-folded code point, bit 21 token, bit 22 diacritic,
    // bits 24..<26 the CJK class. 65,536 × 4 bytes = 256 KiB, built lazily on first use
    // (once) and shared by every tokenizer for the life of the process.
    static let table: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 0x1_0000)
        for code in 0..<0x1_0000 {
            guard let scalar = Unicode.Scalar(UInt32(code)) else {
                table[code] = UInt32(code)  // surrogates: separators
                continue
            }
            table[code] = pack(classify(scalar))
        }
        return table
    }()

    // Diacritic removal for the Latin blocks (U+0080–U+24FF, which holds Latin Extended
    // Additional at U+1E00–U+1EFF): case-folded code point → ASCII base, 0 where nothing
    // changes. 9,472 × 1 byte, built lazily.
    static let strippedLatin: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 0x2500)
        for code in 0x80..<0x2500 {
            guard let scalar = Unicode.Scalar(UInt32(code)), scalar.properties.isAlphabetic else {
                continue
            }
            let decomposed = String(Character(scalar)).decomposedStringWithCanonicalMapping
                .unicodeScalars
            guard let base = decomposed.first, base.isASCII, decomposed.count > 1,
                decomposed.dropFirst().allSatisfy({ (0x300...0x36F).contains($0.value) })
            else { continue }
            table[code] = UInt8(base.value)
        }
        return table
    }()

    static func pack(_ info: Info) -> UInt32 {
        info.folded | (info.isToken ? 1 << 21 : 0) | (info.isDiacritic ? 1 << 22 : 0)
            | (UInt32(info.cjkClass) << 24)
    }

    /// The facts about a non-ASCII code point.
    @inline(__always)
    static func lookup(_ code: UInt32) -> Info {
        if code < 0x1_0000 {
            let entry = table[Int(code)]
            return Info(
                isToken: entry & (1 << 21) != 0, isDiacritic: entry & (1 << 22) != 0,
                cjkClass: UInt8((entry >> 24) & 3), folded: entry & 0x1F_FFFF)
        }
        guard let scalar = Unicode.Scalar(code) else {
            return Info(isToken: false, isDiacritic: false, cjkClass: 0, folded: code)
        }
        return classify(scalar)
    }

    /// The ASCII base of a case-folded Latin letter with diacritics, or the letter itself.
    @inline(__always)
    static func removingDiacritic(_ folded: UInt32) -> UInt32 {
        if folded < 0x2500 {
            let base = strippedLatin[Int(folded)]
            if base != 0 { return UInt32(base) }
        }
        return folded
    }

    static func classify(_ scalar: Unicode.Scalar) -> Info {
        let code = scalar.value
        let cjkClass: UInt8 =
            isHangul(code) ? 2 : isHanKana(code) ? 1 : isSoutheastAsian(code) ? 3 : 0
        if (0x300...0x331).contains(code) {
            return Info(isToken: false, isDiacritic: true, cjkClass: 0, folded: code)
        }
        let isToken: Bool
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .privateUse, .unassigned:
            isToken = true
        default:
            isToken = false
        }
        return Info(
            isToken: isToken, isDiacritic: false, cjkClass: cjkClass,
            folded: isToken ? simpleCaseFold(scalar) : code)
    }

    static func isHanKana(_ code: UInt32) -> Bool {
        switch code {
        case 0x3005...0x3007,  // 々 〆 〇
            0x3040...0x309F,  // Hiragana
            0x30A0...0x30FF,  // Katakana (with ー)
            0x31F0...0x31FF,  // Katakana phonetic extensions
            0x3400...0x4DBF,  // CJK Extension A
            0x4E00...0x9FFF,  // CJK Unified Ideographs
            0xF900...0xFAFF,  // CJK Compatibility Ideographs
            0xFF66...0xFF9F,  // Half-width Katakana
            0x2_0000...0x3_FFFF:  // CJK Extensions B and later, compatibility supplement
            return true
        default:
            return false
        }
    }

    /// Thai, Lao, Myanmar and Khmer: scripts written without spaces between words. Only their
    /// letters and combining marks (vowel signs, tone marks) count; their digits and
    /// punctuation keep their `unicode61` roles.
    static func isSoutheastAsian(_ code: UInt32) -> Bool {
        switch code {
        case 0x0E01...0x0E3A, 0x0E40...0x0E4E,  // Thai letters, vowels, tone marks
            0x0E81...0x0EBD, 0x0EC0...0x0ECE,  // Lao
            0x1000...0x103F, 0x1050...0x108F,  // Myanmar (without its digits)
            0x1780...0x17D3, 0x17DC...0x17DD:  // Khmer (without its punctuation and digits)
            return true
        default:
            return false
        }
    }

    static func isHangul(_ code: UInt32) -> Bool {
        switch code {
        case 0x1100...0x11FF, 0x3130...0x318F, 0xA960...0xA97F, 0xAC00...0xD7AF, 0xD7B0...0xD7FF,
            0xFFA0...0xFFDC:
            return true
        default:
            return false
        }
    }

    /// Unicode simple case folding: the one-code-point lower-case mapping, with the handful of
    /// letters whose folding differs from their lower case.
    static func simpleCaseFold(_ scalar: Unicode.Scalar) -> UInt32 {
        switch scalar.value {
        case 0xB5: return 0x3BC  // µ micro sign → μ
        case 0x130: return 0x69  // İ → i (its full lower case adds a combining dot)
        case 0x17F: return 0x73  // ſ long s → s
        case 0x345, 0x1FBE: return 0x3B9  // ypogegrammeni, prosgegrammeni → ι
        case 0x3C2: return 0x3C3  // ς final sigma → σ
        case 0x3D0: return 0x3B2  // ϐ → β
        case 0x3D1: return 0x3B8  // ϑ → θ
        case 0x3D5: return 0x3C6  // ϕ → φ
        case 0x3D6: return 0x3C0  // ϖ → π
        case 0x3F0: return 0x3BA  // ϰ → κ
        case 0x3F1: return 0x3C1  // ϱ → ρ
        case 0x3F5: return 0x3B5  // ϵ → ε
        case 0x1E9B: return 0x1E61  // ẛ → ṡ
        default: break
        }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        if lower.count == 1, let first = lower.first { return first.value }
        return scalar.value
    }
}
