import Foundation
import TroveSQLite

/// A document's identity: a 64-bit integer, a UUID or a string, as its collection's schema says.
///
/// Ids are the app's, never SQLite row ids, so they mean the same on every device.
///
/// ```swift
/// let a: DocumentID = 42
/// let b: DocumentID = "note-7"
/// let c = DocumentID.uuid(UUID())
/// ```
public enum DocumentID: Hashable, Sendable, Comparable, CustomStringConvertible {
    case int(Int64)
    case uuid(UUID)
    case string(String)

    /// The kind of id this is.
    public var kind: IDKind {
        switch self {
        case .int: .int64
        case .uuid: .uuid
        case .string: .string
        }
    }

    public var description: String {
        switch self {
        case .int(let v): String(v)
        case .uuid(let v): v.uuidString.lowercased()
        case .string(let v): v
        }
    }

    /// The value bound in SQL: an integer, or text (UUIDs in lowercase canonical form).
    var sqlValue: SQLValue {
        switch self {
        case .int(let v): .integer(v)
        case .uuid(let v): .text(v.uuidString.lowercased())
        case .string(let v): .text(v)
        }
    }

    /// The id as a field value (what filters on `id` compare with).
    public var value: Value {
        switch self {
        case .int(let v): .int(v)
        case .uuid(let v): .string(v.uuidString.lowercased())
        case .string(let v): .string(v)
        }
    }

    static func read(_ value: SQLValue, kind: IDKind) -> DocumentID? {
        switch (kind, value) {
        case (.int64, .integer(let v)): return .int(v)
        case (.uuid, .text(let v)): return UUID(uuidString: v).map(DocumentID.uuid)
        case (.string, .text(let v)): return .string(v)
        default: return nil
        }
    }

    public static func < (a: DocumentID, b: DocumentID) -> Bool {
        switch (a, b) {
        case (.int(let x), .int(let y)): x < y
        default: a.description < b.description
        }
    }
}

extension DocumentID {
    /// The hash dictionaries and sets use: the payload's own (an integer id's is one SipHash of
    /// its 8 bytes, as `Int64` keys have), not a `Hasher` fed the case and then the payload. A
    /// context's identity map hashes the id of every row it fetches. Equal ids are of one case
    /// and hash alike; ids of different cases that hash alike are told apart by `==`.
    ///
    /// - Parameter seed: the table's seed.
    /// - Returns: the hash.
    public func _rawHashValue(seed: Int) -> Int {
        switch self {
        case .int(let v): v._rawHashValue(seed: seed)
        case .uuid(let v): v._rawHashValue(seed: seed)
        case .string(let v): v._rawHashValue(seed: seed)
        }
    }
}

extension DocumentID {
    /// The id that leaves the choice to Trove, as ``ModelID/unassigned`` does for models: an
    /// insert (or upsert) of a document or search entry holding it gives the row a new id (a
    /// time-ordered UUIDv7 in `.uuid` and `.string` collections, the next rowid in `.int64`
    /// ones) and returns it. It is the empty string, which is no valid id of any collection, so
    /// every id a collection can store (`0` included) keeps its meaning.
    public static var unassigned: DocumentID { .string("") }
}

extension DocumentID: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(stringLiteral value: String) { self = .string(value) }
}

/// One record of a document collection: its id and its fields by name.
///
/// Declared fields are checked against the schema on every write; a collection that allows
/// undeclared fields keeps the others in one JSON column, where filters reach them by name or
/// path.
///
/// ```swift
/// var note = Document(id: 1, ["title": "Dentist", "year": 2026])
/// note["tags"] = ["health", "calendar"]
/// try await notes.insert(note)
/// let id = try await notes.insert(Document(["title": "Taxes"]))  // an id chosen by Trove
/// ```
public struct Document: Hashable, Sendable {
    /// The id.
    public var id: DocumentID
    /// The fields by name (`id` is not among them). A missing field is absent, not null.
    ///
    /// A document read from a collection keeps its row as read and decodes a field when it is
    /// read: `document["title"]` decodes that one field, `fields` all of them. Read `fields`
    /// once rather than in a loop.
    public var fields: [String: Value] {
        get {
            switch storage {
            case .values(let values): values
            case .row(let row): row.fields
            }
        }
        set { storage = .values(newValue) }
        // `document.fields[name] = value` changes the dictionary in place, as a stored property's would.
        _modify {
            var values = fields
            storage = .values([:])
            defer { storage = .values(values) }
            yield &values
        }
    }
    /// The version, counted from 1 and raised by every update; used by
    /// ``DocumentCollection/update(_:ifVersion:)`` for optimistic concurrency. 0 for a document
    /// not read from a collection.
    public var version: Int64

    /// The fields as a dictionary, or the row they were read from.
    private var storage: Storage
    private enum Storage: Sendable {
        case values([String: Value])
        case row(StoredRow)
    }

    /// A document with the given fields. Without an id (``DocumentID/unassigned``), an insert
    /// chooses one and returns it.
    public init(id: DocumentID = .unassigned, _ fields: [String: Value] = [:]) {
        self.id = id
        self.storage = .values(fields)
        self.version = 0
    }

    init(id: DocumentID, fields: [String: Value], version: Int64) {
        self.id = id
        self.storage = .values(fields)
        self.version = version
    }

    /// A document read from a collection, its fields decoded when read.
    init(id: DocumentID, row: StoredRow, version: Int64) {
        self.id = id
        self.storage = .row(row)
        self.version = version
    }

    /// A field's value, nil when absent.
    public subscript(name: String) -> Value? {
        get {
            switch storage {
            case .values(let values): values[name]
            case .row(let row): row[name]
            }
        }
        set { fields[name] = newValue }
    }

    public static func == (a: Document, b: Document) -> Bool {
        guard a.id == b.id, a.version == b.version else { return false }
        if case .row(let x) = a.storage, case .row(let y) = b.storage, x.isIdentical(to: y) {
            return true
        }
        return a.fields == b.fields
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(version)
        hasher.combine(fields)
    }
}
