import Foundation

/// What `trove get --json` prints and the MCP get tool returns: one note, or lines of it.
struct GetResult: Codable, Equatable, Sendable {
    /// The file the note was indexed from (absolute).
    var path: String
    /// The document's id inside a .jsonl file.
    var documentID: String?
    /// `#` and 8 hex digits.
    var shortID: String
    var source: String
    var fromLine: Int
    var toLine: Int
    /// Lines in the whole note.
    var lines: Int
    /// `file`: read from disk now; `index`: the indexed text.
    var origin: String
    /// The collections holding the note.
    var collections: [Collection]
    var text: String

    struct Collection: Codable, Equatable, Sendable {
        var name: String
        /// What the collection's notes are.
        var context: String?
    }

    enum CodingKeys: String, CodingKey {
        case path
        case documentID = "document_id"
        case shortID = "short_id"
        case source
        case fromLine = "from_line"
        case toLine = "to_line"
        case lines, origin, collections, text
    }
}

/// What `trove multi-get --json` prints and the MCP multi_get tool returns: the notes that fit
/// in the byte budget (the last one perhaps cut at a line end), and those left out.
struct MultiGetResult: Codable, Equatable, Sendable {
    var maxBytes: Int
    /// Bytes of text given, at most ``maxBytes``.
    var bytes: Int
    var notes: [Entry]
    var leftOut: [LeftOut]

    struct Entry: Codable, Equatable, Sendable {
        var path: String
        var documentID: String?
        var shortID: String
        var bytes: Int
        var totalBytes: Int
        var cut: Bool
        var text: String

        enum CodingKeys: String, CodingKey {
            case path
            case documentID = "document_id"
            case shortID = "short_id"
            case bytes
            case totalBytes = "total_bytes"
            case cut, text
        }
    }

    struct LeftOut: Codable, Equatable, Sendable {
        var path: String
        var documentID: String?
        var shortID: String
        var totalBytes: Int

        enum CodingKeys: String, CodingKey {
            case path
            case documentID = "document_id"
            case shortID = "short_id"
            case totalBytes = "total_bytes"
        }
    }

    enum CodingKeys: String, CodingKey {
        case maxBytes = "max_bytes"
        case bytes, notes
        case leftOut = "left_out"
    }
}
