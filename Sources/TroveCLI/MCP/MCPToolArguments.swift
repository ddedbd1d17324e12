import Foundation

/// The search tool's arguments: `trove search`'s options under the names MCP clients use, made
/// into the same ``SearchCommand`` value, so both check a request the same way.
struct SearchToolArguments: ToolArguments {
    typealias Argument = CodingKeys

    var query: String
    var mode: String?
    var k: Int?
    var minScore: Double?
    var source: String?
    var collection: [String]?
    var allChunks: Bool?

    enum CodingKeys: String, ToolArgument {
        case query, mode, k
        case minScore = "min_score"
        case source, collection
        case allChunks = "all_chunks"

        var isRequired: Bool { self == .query }

        var schema: ArgumentSchema {
            switch self {
            case .query: .string("what to look for, in plain words")
            case .mode:
                .string(
                    "hybrid (default): meaning and words; vector: meaning only; text: words only",
                    choices: ["hybrid", "vector", "text"])
            case .k: .integer("number of results (default 10)", range: SearchCommand.limits)
            case .minScore:
                .number(
                    "leave out results whose score (a calibrated relevance from 0 to 1) is below this"
                )
            case .source:
                .string("only records whose source is this (a file path for indexed files)")
            case .collection:
                .strings(
                    "only these collections (a name, or a list of names; see list_collections)")
            case .allChunks: .boolean("every matching chunk instead of the best chunk per note")
            }
        }
    }

    /// The request `trove search` would make from the same options.
    /// - Throws: ``CLIError/usage(_:command:)`` as the command line does.
    func command() throws -> SearchCommand {
        try SearchCommand(
            query: query, mode: mode ?? "hybrid", limit: k ?? 10, minimumScore: minScore ?? 0,
            source: source, collections: collection ?? [], allChunks: allChunks ?? false)
    }
}

/// The get tool's arguments: `trove get NOTE :FROM-TO`.
struct GetToolArguments: ToolArguments {
    typealias Argument = CodingKeys

    var note: String
    var fromLine: Int?
    var toLine: Int?

    enum CodingKeys: String, ToolArgument {
        case note
        case fromLine = "from_line"
        case toLine = "to_line"

        var isRequired: Bool { self == .note }

        var schema: ArgumentSchema {
            switch self {
            case .note: .string("a path, a short id such as #3f2a9c01, or a record id")
            case .fromLine: .integer("first line, from 1 (default 1)", range: LineRange.lines)
            case .toLine:
                .integer("last line, included (default: the end)", range: LineRange.lines)
            }
        }
    }

    /// - Throws: ``ToolError`` when `to_line` comes before `from_line`.
    func command() throws -> GetCommand {
        if let toLine, toLine < (fromLine ?? 1) {
            throw ToolError(
                "'\(CodingKeys.toLine.stringValue)' must not be before "
                    + "'\(CodingKeys.fromLine.stringValue)'")
        }
        let range =
            fromLine == nil && toLine == nil ? nil : LineRange(from: fromLine ?? 1, to: toLine)
        return GetCommand(reference: note, range: range)
    }
}

/// The multi_get tool's arguments: `trove multi-get` with its patterns split into one glob and
/// a list.
struct MultiGetToolArguments: ToolArguments {
    typealias Argument = CodingKeys

    var pattern: String?
    var notes: [String]?
    var maxBytes: Int?

    /// An assistant's budget is bounded tighter than the command line's: 16 MiB.
    static let maxBytesRange = 1...16_777_216

    enum CodingKeys: String, ToolArgument {
        case pattern, notes
        case maxBytes = "max_bytes"

        var schema: ArgumentSchema {
            switch self {
            case .pattern: .string("a glob over note paths")
            case .notes: .strings("paths, short ids or globs (one, or a list)")
            case .maxBytes:
                .integer(
                    "byte budget for all texts (default \(NoteRetrieval.defaultMaxBytes))",
                    range: MultiGetToolArguments.maxBytesRange)
            }
        }
    }

    /// - Throws: ``ToolError`` when neither `pattern` nor `notes` is given.
    func command() throws -> MultiGetCommand {
        let patterns = (pattern.map { [$0] } ?? []) + (notes ?? [])
        guard !patterns.isEmpty else {
            throw ToolError(
                "give '\(CodingKeys.pattern.stringValue)' (a glob) or "
                    + "'\(CodingKeys.notes.stringValue)' (paths or short ids)")
        }
        return MultiGetCommand(
            patterns: patterns, maxBytes: maxBytes ?? NoteRetrieval.defaultMaxBytes)
    }
}

/// The index tool's arguments: `trove index [-c NAME...] [PATH...]`.
struct IndexToolArguments: ToolArguments {
    typealias Argument = CodingKeys

    var paths: [String]?
    var collection: [String]?

    enum CodingKeys: String, ToolArgument {
        case paths, collection

        var schema: ArgumentSchema {
            switch self {
            case .paths:
                .strings(
                    "files and folders to add: one, or a list (default: refresh the collections)")
            case .collection:
                .strings("refresh only these collections (a name, or a list of names)")
            }
        }
    }

    /// - Throws: ``CLIError/usage(_:command:)`` as the command line does.
    func command() throws -> IndexCommand {
        try IndexCommand(paths: paths ?? [], collections: collection ?? [])
    }
}
