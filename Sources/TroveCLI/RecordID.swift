import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite

// Record ids in the tool's output and SQL: notes databases made (or migrated) by this version
// have UUID ids (see NoteRecordID below and NotebookMigration.swift); older ones, whole numbers,
// move to UUIDs when opened.

/// The record id of a chunk `trove index` writes: a name-based UUID (RFC 9562 version 8) made
/// from the SHA-256 of the collection's name, the file's ``NoteCollection/key(of:)`` (its path
/// below its collection's folder, not the absolute path, since home folders differ) and the
/// chunk's position among the file's records (for a .jsonl file, counted across its documents).
///
/// Two machines indexing the same notes therefore write the same ids, and `trove sync` merges
/// the two copies of a chunk into one (field by field, the later write winning) instead of
/// keeping both. Short ids (`#` and 8 hex digits) are not record ids: they hash the
/// absolute path (``Note/shortID``).
///
/// ```swift
/// NoteRecordID.make(collection: "notes", key: "notes/tea.md", chunk: 0)
/// // .uuid(…-8…): the same on every machine, for every run
/// ```
enum NoteRecordID {
    /// The id of chunk `chunk` (0-based) of the file named `key` in the collection `collection`.
    /// - Complexity: one SHA-256 of the three parts.
    static func make(collection: String, key: String, chunk: Int) -> DocumentID {
        // NUL separates the parts: no collection name or path holds one.
        var bytes = Array("trove.note".utf8) + [0] + Array(collection.utf8) + [0] + Array(key.utf8)
        bytes += [0] + Array(String(chunk).utf8)
        var digest = Array(SHA256.digest(bytes).prefix(16))
        digest[6] = (digest[6] & 0x0f) | 0x80  // version 8: custom, here name-based with SHA-256
        digest[8] = (digest[8] & 0x3f) | 0x80  // the RFC 9562 variant
        let uuid = UUID(
            uuid: (
                digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6],
                digest[7],
                digest[8], digest[9], digest[10], digest[11], digest[12], digest[13], digest[14],
                digest[15]
            ))
        return .uuid(uuid)
    }
}

extension JSONValue {
    /// A record id as JSON: a number for an Int64 id, the text of a UUID or String id.
    init(_ id: DocumentID) {
        if case .int(let value) = id { self = .int(value) } else { self = .string(id.description) }
    }
}

extension SQLValue {
    /// A record id as stored: an integer, or text (UUIDs in lowercase, as Trove stores them).
    init(_ id: DocumentID) {
        if case .int(let value) = id {
            self = .integer(value)
        } else {
            self = .text(id.description)
        }
    }
}
