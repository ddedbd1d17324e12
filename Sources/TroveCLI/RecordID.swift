import Foundation
import Trove
import TroveSQLite

// Record ids in the tool's output and SQL: notes databases made (or migrated) by this version
// have UUIDv7 ids (see NotebookMigration.swift), older ones opened read-only whole numbers.

extension JSONValue {
    /// A record id as JSON: a number for an Int64 id, the text of a UUID or String id.
    init(_ id: DocumentID) {
        if case .int(let value) = id { self = .int(value) } else { self = .string(id.description) }
    }
}

extension SQLValue {
    /// A record id as stored: an integer, or text (UUIDs in lowercase, as Trove stores them).
    init(_ id: DocumentID) {
        if case .int(let value) = id { self = .integer(value) } else { self = .text(id.description) }
    }
}
