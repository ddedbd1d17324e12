/// A checker for SQLite FTS5's full-text query syntax, without SQLite.
///
/// Follows the grammar of <https://sqlite.org/fts5.html#full_text_query_syntax>:
///
/// ```
/// phrase    := string [*] | phrase + phrase
/// neargroup := NEAR ( phrase phrase ... [, N] )
/// query     := [[-] colspec :] [^] phrase | [[-] colspec :] neargroup
///            | [[-] colspec :] ( query ) | query AND query | query OR query
///            | query NOT query | query query          -- implicit AND
/// colspec   := colname | { colname colname ... }
/// ```
///
/// A string is `"…"` (a `""` inside is a quote) or a bareword: a run of ASCII letters, digits,
/// `_`, U+001A and any non-ASCII character. Bare `AND`, `OR`, `NOT` (upper case) are operators;
/// `NEAR` followed by `(` opens a near group.
///
/// ```swift
/// try FTS5QuerySyntax.validate("\"fox jumps\" OR dog*")        // fine
/// try FTS5QuerySyntax.validate("fox AND")                      // throws, at offset 7
/// ```
public enum FTS5QuerySyntax {
    /// Why a query is not valid FTS5 syntax, and where (a UTF-8 byte offset).
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// Byte offset into the query's UTF-8 where the problem was found.
        public var offset: Int
        /// What is wrong, in words.
        public var reason: String

        public var description: String { "FTS5 syntax error at byte \(offset): \(reason)" }
    }

    /// Checks a query.
    ///
    /// - Parameters:
    ///   - query: An FTS5 MATCH expression. As SQLite reads it as a C string, a NUL ends it.
    ///   - columns: The table's column names (compared case-insensitively), or `nil` to accept
    ///     any name in a column filter.
    /// - Throws: ``Error`` with the offset and the reason of the first problem.
    /// - Complexity: O(n) in the length of `query`.
    public static func validate(_ query: String, columns: [String]? = nil) throws {
        let bytes = Array(query.utf8.prefix { $0 != 0 })
        var parser = Parser(
            tokens: try lex(bytes), columns: columns.map { Set($0.map { $0.lowercased() }) })
        try parser.parseQuery()
        if let token = parser.peek() {
            throw Error(offset: token.offset, reason: "unexpected \(token.kind)")
        }
    }

    /// Whether a query is valid FTS5 syntax.
    public static func isValid(_ query: String, columns: [String]? = nil) -> Bool {
        (try? validate(query, columns: columns)) != nil
    }

    // MARK: - Lexer

    enum Kind: Equatable, CustomStringConvertible {
        case string, and, or, not, near, leftParen, rightParen, leftBrace, rightBrace
        case colon, comma, plus, star, caret, minus

        var description: String {
            switch self {
            case .string: "string"
            case .and: "AND"
            case .or: "OR"
            case .not: "NOT"
            case .near: "NEAR"
            case .leftParen: "'('"
            case .rightParen: "')'"
            case .leftBrace: "'{'"
            case .rightBrace: "'}'"
            case .colon: "':'"
            case .comma: "','"
            case .plus: "'+'"
            case .star: "'*'"
            case .caret: "'^'"
            case .minus: "'-'"
            }
        }
    }

    struct Lexeme {
        var kind: Kind
        var offset: Int
        var text: [UInt8] = []
    }

    static func isBareword(_ byte: UInt8) -> Bool {
        byte >= 0x80 || byte == 0x1A || byte == UInt8(ascii: "_")
            || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
            || (byte >= 0x61 && byte <= 0x7A)
    }

    static func lex(_ bytes: [UInt8]) throws -> [Lexeme] {
        var lexemes: [Lexeme] = []
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"),
                0x0B, 0x0C:
                i += 1
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                var text: [UInt8] = []
                var closed = false
                while i < bytes.count {
                    if bytes[i] == UInt8(ascii: "\"") {
                        if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "\"") {
                            text.append(bytes[i])
                            i += 2
                            continue
                        }
                        closed = true
                        i += 1
                        break
                    }
                    text.append(bytes[i])
                    i += 1
                }
                guard closed else { throw Error(offset: start, reason: "unterminated string") }
                lexemes.append(Lexeme(kind: .string, offset: start, text: text))
            case _ where isBareword(byte):
                let start = i
                while i < bytes.count, isBareword(bytes[i]) { i += 1 }
                let word = Array(bytes[start..<i])
                let kind: Kind
                switch String(decoding: word, as: UTF8.self) {
                case "AND": kind = .and
                case "OR": kind = .or
                case "NOT": kind = .not
                case "NEAR":
                    var j = i
                    while j < bytes.count,
                        bytes[j] == UInt8(ascii: " ") || bytes[j] == UInt8(ascii: "\t")
                    { j += 1 }
                    kind = j < bytes.count && bytes[j] == UInt8(ascii: "(") ? .near : .string
                default: kind = .string
                }
                lexemes.append(Lexeme(kind: kind, offset: start, text: word))
            default:
                let kind: Kind
                switch byte {
                case UInt8(ascii: "("): kind = .leftParen
                case UInt8(ascii: ")"): kind = .rightParen
                case UInt8(ascii: "{"): kind = .leftBrace
                case UInt8(ascii: "}"): kind = .rightBrace
                case UInt8(ascii: ":"): kind = .colon
                case UInt8(ascii: ","): kind = .comma
                case UInt8(ascii: "+"): kind = .plus
                case UInt8(ascii: "*"): kind = .star
                case UInt8(ascii: "^"): kind = .caret
                case UInt8(ascii: "-"): kind = .minus
                default:
                    throw Error(
                        offset: i, reason: "unexpected character 0x\(String(byte, radix: 16))")
                }
                lexemes.append(Lexeme(kind: kind, offset: i))
                i += 1
            }
        }
        return lexemes
    }

    // MARK: - Parser

    struct Parser {
        var tokens: [Lexeme]
        var columns: Set<String>?
        var index = 0
        var end: Int { tokens.last.map { $0.offset + max(1, $0.text.count) } ?? 0 }

        func peek(_ ahead: Int = 0) -> Lexeme? {
            index + ahead < tokens.count ? tokens[index + ahead] : nil
        }

        mutating func expect(_ kind: Kind, _ what: String) throws -> Lexeme {
            guard let token = peek() else {
                throw Error(offset: end, reason: "expected \(what) at end of query")
            }
            guard token.kind == kind else {
                throw Error(offset: token.offset, reason: "expected \(what), found \(token.kind)")
            }
            index += 1
            return token
        }

        /// query := and-expression (OR and-expression)*; precedence NOT > AND > OR, as in FTS5.
        mutating func parseQuery() throws {
            try parseAnd()
            while peek()?.kind == .or {
                index += 1
                try parseAnd()
            }
        }

        mutating func parseAnd() throws {
            try parseNot()
            while let token = peek() {
                if token.kind == .and {
                    index += 1
                    try parseNot()
                } else if startsPrimary(token.kind) {
                    try parseNot()  // implicit AND
                } else {
                    break
                }
            }
        }

        mutating func parseNot() throws {
            try parsePrimary()
            while peek()?.kind == .not {
                index += 1
                try parsePrimary()
            }
        }

        func startsPrimary(_ kind: Kind) -> Bool {
            switch kind {
            case .string, .near, .leftParen, .leftBrace, .minus, .caret: true
            default: false
            }
        }

        mutating func parsePrimary() throws {
            guard let token = peek() else {
                throw Error(offset: end, reason: "expected a term at end of query")
            }
            // Optional column filter: [-] colname : | [-] { colnames } :
            if token.kind == .minus || token.kind == .leftBrace
                || (token.kind == .string && peek(1)?.kind == .colon)
            {
                if token.kind == .minus { index += 1 }
                if peek()?.kind == .leftBrace {
                    index += 1
                    try column(try expect(.string, "a column name"))
                    while let name = peek(), name.kind == .string {
                        try column(name)
                        index += 1
                    }
                    _ = try expect(.rightBrace, "'}'")
                } else {
                    try column(try expect(.string, "a column name"))
                }
                _ = try expect(.colon, "':' after the column filter")
            }
            guard let next = peek() else {
                throw Error(offset: end, reason: "expected a term at end of query")
            }
            switch next.kind {
            case .leftParen:
                index += 1
                try parseQuery()
                _ = try expect(.rightParen, "')'")
            case .near:
                index += 1
                _ = try expect(.leftParen, "'(' after NEAR")
                try parsePhrase()
                while peek()?.kind == .string { try parsePhrase() }
                if peek()?.kind == .comma {
                    index += 1
                    let distance = try expect(.string, "a distance after ','")
                    guard !distance.text.isEmpty,
                        distance.text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
                    else {
                        throw Error(
                            offset: distance.offset, reason: "NEAR distance must be a number")
                    }
                }
                _ = try expect(.rightParen, "')' closing NEAR")
            case .caret:
                index += 1
                try parsePhrase()
            default:
                try parsePhrase()
            }
        }

        func column(_ name: Lexeme) throws {
            guard let columns else { return }
            let text = String(decoding: name.text, as: UTF8.self).lowercased()
            guard columns.contains(text) else {
                throw Error(offset: name.offset, reason: "no such column: \(text)")
            }
        }

        /// phrase := string [*] (+ string [*])*
        mutating func parsePhrase() throws {
            _ = try expect(.string, "a term or \"phrase\"")
            if peek()?.kind == .star { index += 1 }
            while peek()?.kind == .plus {
                index += 1
                _ = try expect(.string, "a term after '+'")
                if peek()?.kind == .star { index += 1 }
            }
        }
    }
}
