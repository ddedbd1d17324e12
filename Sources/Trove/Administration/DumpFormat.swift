import Foundation
import TroveSQLite

/// The portable dump file: versioned, line-oriented JSON (one JSON value per line, UTF-8).
///
/// ```
/// line 1      header: {"format":"trove-dump","version":1,"fileFormatVersion":2,"sections":[...]}
///             each section: kind, name, columns, records, and the schema (documents) or the
///             configuration with its embedding manifest (search collections)
/// lines 2...  one record per line, sections in header order, rows in id order:
///             {"c":"<section name>","v":[<one value per column>]}
/// last line   trailer: {"end":{"checksum":"<FNV-1a 64 of every byte before this line>","records":N}}
/// ```
///
/// Values are the stored SQL values, so nothing is converted on the way out or in: integers as
/// JSON integers, reals as the shortest decimal that reads back as the same Double (always with
/// a `.` or an exponent), text as JSON strings, blobs (vectors: little-endian float32) as
/// `{"base64":"..."}`, infinite reals as `{"real":"inf"}` / `{"real":"-inf"}`. The output is
/// canonical (keys in fixed order, no spaces, one number spelling), so a dump of a loaded
/// database is byte-identical to the dump it was loaded from.
enum DumpFormat {
    static let name = "trove-dump"
    static let version = 1
    /// Bytes buffered before a write to the output.
    static let bufferSize = 1 << 20
}

/// The first line of a dump.
struct DumpHeader: Codable, Equatable {
    var format: String
    var version: Int
    /// The Trove file format version of the database dumped.
    var fileFormatVersion: Int
    var sections: [DumpSectionHeader]
}

/// One table kind's part of the dump: what to create before its rows are loaded.
struct DumpSectionHeader: Codable, Equatable {
    /// The section kind (``DumpSectionKind/kind``): `documents`, `search`, ...
    var kind: String
    var name: String
    /// The dumped columns, in the order of each record's values.
    var columns: [String]
    /// How many records follow for this section.
    var records: Int
    /// A document collection's schema.
    var schema: DocumentSchema?
    /// A search collection's configuration (with its embedding manifest).
    var configuration: CollectionConfiguration?
    /// A side table's `CREATE TABLE` statement.
    var definition: String?
}

/// The last line of a dump.
struct DumpTrailer: Codable, Equatable {
    struct End: Codable, Equatable {
        var checksum: String
        var records: Int
    }
    var end: End
}

/// How to rename collections and fields while loading.
///
/// ```swift
/// let renames = DumpRenames(collections: ["notes": "archive"], fields: ["items": ["title": "name"]])
/// ```
public struct DumpRenames: Sendable, Hashable {
    /// Old collection name → new name.
    public var collections: [String: String]
    /// Old collection name → (old field name → new field name), for document collections.
    public var fields: [String: [String: String]]

    public init(collections: [String: String] = [:], fields: [String: [String: String]] = [:]) {
        self.collections = collections
        self.fields = fields
    }

    /// No renames.
    public static let none = DumpRenames()
}

/// What ``Database/dump(to:overwrite:)`` wrote.
public struct DumpReport: Sendable, Hashable, Codable {
    /// Records per section (collection) name.
    public var records: [String: Int]
    /// Bytes written.
    public var bytes: Int
}

/// What ``Database/load(from:renaming:)`` loaded, and the verification afterwards.
public struct LoadReport: Sendable, Hashable, Codable {
    /// Records per (new) collection name.
    public var records: [String: Int]
    /// Problems the verification found after loading (empty when healthy).
    public var problems: [String]
}

/// One kind of table a dump carries. Adding a kind (edges, places) is one conformance and one
/// line in ``DumpCatalog/kinds``.
protocol DumpSectionKind: Sendable {
    /// The `kind` written in section headers.
    static var kind: String { get }
    /// The sections of this kind in the database `connection` reads, sorted by name.
    static func sections(in database: DumpSource) throws -> [DumpSection]
    /// Creates the (empty) table(s) for a section read from a dump, under its new name, inside
    /// the load's transaction; returns where its records go.
    static func create(_ header: DumpSectionHeader, renames: DumpRenames, on connection: Connection)
        throws
        -> DumpLoadTarget
}

/// What a dump reads from: one connection's snapshot and the document stores seen from it.
struct DumpSource {
    let connection: Connection
    let documentStore: (String) throws -> DocumentStore
}

/// A section to dump: its header and the SELECT that reads its records, in canonical order.
struct DumpSection {
    var header: DumpSectionHeader
    /// Reads `header.columns` in order; `bindings` for its `?`.
    var select: String
    var bindings: [SQLValue] = []
}

/// Where a section's records go during a load.
struct DumpLoadTarget {
    /// The new name.
    var name: String
    /// `INSERT INTO ... VALUES (?, ...)` with one mark per dumped column.
    var insert: String
    var columnCount: Int
    /// An FTS5 table to rebuild once the rows are in, and the insert trigger that would have fed
    /// it row by row (dropped for the load: FTS5 before SQLite 3.44 writes a segment per statement).
    var fullText: (table: String, trigger: String)?
}

/// Every section kind a dump can hold, in the order they are written.
enum DumpCatalog {
    static let kinds: [any DumpSectionKind.Type] = [
        DocumentCollectionDump.self,
        SearchCollectionDump.self,
        // Graph edges and other side tables that need more than their rows (triggers on the
        // collections' tables) get their own kind here; plain ones are `SideTableDump`'s.
        SideTableDump.self,
    ]

    static func kind(named name: String) -> (any DumpSectionKind.Type)? {
        kinds.first { $0.kind == name }
    }
}
