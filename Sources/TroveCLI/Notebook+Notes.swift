import Foundation
import Trove
import TroveSQLite

/// Notes (files and .jsonl documents) rather than chunks: listing them, finding one by path,
/// short id or record id, matching them with a glob, and reading their text.
extension Notebook {
    /// Every note in the database, by file then document id.
    /// - Complexity: one grouped scan of the records.
    func notes() async throws -> [Note] {
        let rows = try await database.query(
            """
            SELECT json_extract(metadata, '$.file') AS file, json_extract(metadata, '$.doc_id') AS doc,
                   min(source) AS source
            FROM \(Self.collectionName) WHERE json_extract(metadata, '$.file') IS NOT NULL
            GROUP BY file, doc ORDER BY file, doc
            """)
        return rows.compactMap { row in
            guard let file = row.string("file") else { return nil }
            return Note(
                file: file, documentID: row.string("doc"), source: row.string("source") ?? file)
        }
    }

    /// The note a search result or record belongs to, from its metadata.
    static func note(metadata: String?, source: String) -> Note? {
        guard let metadata = metadata.flatMap({ try? JSONValue.parse($0) }),
            let file = metadata["file"]?.string
        else { return nil }
        return Note(file: file, documentID: metadata["doc_id"]?.idString, source: source)
    }

    /// The note `reference` names: `#` and the start of a short id (at least 4 digits), a path
    /// (absolute, `~/…` or relative to `currentDirectory`; a .jsonl document as `FILE#ID`), or
    /// a record id.
    /// - Throws: ``CLIError/notFound(_:)`` when nothing matches; ``CLIError/usage(_:command:)``
    ///   when a short id matches several notes (they are listed).
    func note(
        _ reference: String, environment: [String: String], currentDirectory: String,
        command: String
    ) async throws -> Note {
        let notes = try await notes()
        if reference.hasPrefix("#") {
            let digits = reference.dropFirst().lowercased()
            guard digits.count >= 4, digits.allSatisfy(\.isHexDigit) else {
                throw CLIError.usage(
                    "'\(reference)' is not a short id: # and at least 4 of the hex digits search shows",
                    command: command)
            }
            let matches = notes.filter { $0.shortID.dropFirst().hasPrefix(digits) }
            if matches.count > 1 {
                throw CLIError.usage(
                    "\(reference) matches \(matches.count) notes: "
                        + matches.map { "\($0.shortID) \($0.label)" }.joined(separator: ", "),
                    command: command)
            }
            guard let note = matches.first else {
                throw CLIError.notFound("no note with short id \(reference)")
            }
            return note
        }
        let absolute = Locations.absolute(
            reference, environment: environment, currentDirectory: currentDirectory)
        if let note = notes.first(where: {
            $0.documentID == nil && ($0.file == absolute || $0.file == reference)
        }) {
            return note
        }
        if let hash = absolute.lastIndex(of: "#") {
            let file = String(absolute[..<hash])
            let id = String(absolute[absolute.index(after: hash)...])
            if let note = notes.first(where: { $0.file == file && $0.documentID == id }) {
                return note
            }
        }
        // A record id: a UUID, or a whole number in a database not yet moved to UUIDs.
        if let id = UUID(uuidString: reference).map(DocumentID.uuid)
            ?? Int64(reference).map(DocumentID.int)
        {
            let rows = try await database.query(
                "SELECT metadata, source FROM \(Self.collectionName) WHERE id = ?",
                bindings: [SQLValue(id)])
            if let row = rows.first,
                let note = Self.note(
                    metadata: row.string("metadata"), source: row.string("source") ?? "")
            {
                return note
            }
        }
        throw CLIError.notFound(
            "no indexed note \(reference) (give a path that 'trove index' read, a #shortid from "
                + "'trove search', or a record id)")
    }

    /// The names of the collections whose records hold the note.
    func collections(of note: Note) async throws -> Set<String> {
        let rows = try await database.query(
            """
            SELECT DISTINCT json_extract(metadata, '$.collection') AS name FROM \(Self.collectionName)
            WHERE json_extract(metadata, '$.file') = ? AND json_extract(metadata, '$.doc_id') IS ?
            """,
            bindings: [.text(note.file), note.documentID.map { .text($0) } ?? .null])
        return Set(rows.compactMap { $0.string("name") })
    }

    /// The text of a note: the file as it is on disk now, or, for a .jsonl document or a file
    /// that is gone or unreadable, its indexed chunks joined by blank lines.
    /// - Returns: the text and whether it came from the file (`true`) or the index.
    func text(of note: Note) async throws -> (text: String, fromFile: Bool) {
        if note.documentID == nil, let data = FileManager.default.contents(atPath: note.file),
            let text = String(data: data, encoding: .utf8)
        {
            return (text, true)
        }
        let rows = try await database.query(
            """
            SELECT content FROM \(Self.collectionName)
            WHERE json_extract(metadata, '$.file') = ? AND json_extract(metadata, '$.doc_id') IS ?
            ORDER BY json_extract(metadata, '$.chunk')
            """,
            bindings: [.text(note.file), note.documentID.map { .text($0) } ?? .null])
        return (rows.compactMap { $0.string("content") }.joined(separator: "\n\n"), false)
    }
}

/// A ``Glob`` over the absolute paths of notes (`multi-get`, the multi_get tool).
///
/// An absolute pattern (or one starting with `~`) matches whole paths; a relative one matches a
/// path relative to the current folder, or the end of a path at a folder boundary, so `*.md`
/// matches every Markdown note and `journal/2025-*.md` the notes of any `journal` folder.
///
/// ```swift
/// let pattern = try NotePattern("journal/*.md", environment: [:], currentDirectory: "/home/ana")
/// pattern.matches("/home/ana/notes/journal/2025-05-01.md")   // true
/// ```
struct NotePattern: Sendable {
    private let glob: Glob
    private let anchored: Bool
    private let currentDirectory: String

    /// - Throws: ``CLIError/usage(_:command:)`` for a pattern ``Glob`` cannot read.
    init(
        _ pattern: String, environment: [String: String], currentDirectory: String,
        command: String = "multi-get"
    )
        throws
    {
        var text = pattern
        if text == "~" || text.hasPrefix("~/"), let home = environment["HOME"] {
            text = home + text.dropFirst()
        }
        anchored = text.hasPrefix("/")
        self.currentDirectory = currentDirectory
        do {
            glob = try Glob(anchored ? String(text.drop { $0 == "/" }) : text)
        } catch {
            throw CLIError.usage(
                "'\(pattern)' is not a valid pattern (an unclosed [ or {?)", command: command)
        }
    }

    /// Whether the absolute `path` matches.
    func matches(_ path: String) -> Bool {
        if anchored { return glob.matches(String(path.drop { $0 == "/" })) }
        if path.hasPrefix(currentDirectory + "/"),
            glob.matches(String(path.dropFirst(currentDirectory.count + 1)))
        {
            return true
        }
        // Every tail of the path that starts after a `/`.
        var index = path.startIndex
        while let slash = path[index...].firstIndex(of: "/") {
            index = path.index(after: slash)
            if glob.matches(String(path[index...])) { return true }
        }
        return false
    }

    /// Whether `text` holds pattern characters (otherwise it names one note).
    static func isPattern(_ text: String) -> Bool { text.contains { "*?[{".contains($0) } }
}
