// libFuzzer target: the WordPiece tokenizer (WordPieceTokenizer.encode / wordPieceIDs).
// Properties: never traps; encode returns [CLS] ... [SEP] with 2...maxSequenceLength ids, every
// id inside the vocabulary; the un-truncated pieces start with the same ids as encode's middle.
// Vocabulary: $TROVE_FUZZ_VOCAB (run.sh passes the all-MiniLM-L6-v2 vocab.txt), else a small one.
import Foundation

private let fuzzTokenizer: WordPieceTokenizer = {
    if let path = ProcessInfo.processInfo.environment["TROVE_FUZZ_VOCAB"] {
        return try! WordPieceTokenizer(vocabularyFile: URL(fileURLWithPath: path), maxSequenceLength: 128)
    }
    let tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "##a", "##b", "the", "##s", "un", "##able",
                  "!", "?", ".", "ü", "##ü", "中", "é", "##é"]
    return try! WordPieceTokenizer(vocabulary: tokens, maxSequenceLength: 16)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWordPiece(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let tokenizer = fuzzTokenizer
    let ids = tokenizer.encode(text)
    precondition(ids.count >= 2 && ids.count <= tokenizer.maxSequenceLength, "encode length \(ids.count)")
    precondition(ids.first == tokenizer.clsID && ids.last == tokenizer.sepID, "missing [CLS]/[SEP]")
    let size = Int32(tokenizer.vocabularySize)
    precondition(ids.allSatisfy { $0 >= 0 && $0 < size }, "id outside the vocabulary")
    let pieces = tokenizer.wordPieceIDs(text)
    precondition(pieces.allSatisfy { $0 >= 0 && $0 < size }, "piece id outside the vocabulary")
    precondition(Array(pieces.prefix(ids.count - 2)) == Array(ids.dropFirst().dropLast()), "encode differs from pieces")
    return 0
}
