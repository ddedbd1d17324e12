import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveVectors

/// A collection's configuration, frozen in `trove_meta` when the collection is created and
/// compared on every open.
///
/// ```swift
/// let config = CollectionConfiguration(dimension: 384, metric: .cosine)
/// let notes = try await SearchCollection("notes", in: database, configuration: config)
/// ```
public struct CollectionConfiguration: Codable, Hashable, Sendable {
    /// The default FTS5 tokenizer of search collections: SQLite's own `unicode61` (Unicode word
    /// breaking, case folding, accents removed), which every SQLite connection can write and which
    /// keeps batch inserts at their speed (Trove's tokenizer, ``FullTextDefinition/defaultTokenizer``,
    /// cost about 6% of a batch insert here: BENCHMARKS.md). For Chinese, Japanese, Korean or
    /// Thai content pass ``cjkTokenizer`` or ``FullTextDefinition/defaultTokenizer``.
    public static let defaultTokenizer = "unicode61 remove_diacritics 2"
    /// The default per-row metadata limit: 16 KB.
    public static let defaultMetadataByteLimit = 16_384

    /// Number of components of every vector.
    public var dimension: Int
    /// How closeness is measured.
    public var metric: DistanceMetric
    /// Whether a full-text (FTS5) index is kept over `content`.
    public var lexicalSearch: Bool
    /// Largest metadata JSON accepted, in UTF-8 bytes.
    public var metadataByteLimit: Int
    /// The FTS5 `tokenize=` argument.
    public var tokenizer: String
    /// The in-memory vector index.
    public var index: IndexKind
    /// The embedding model, when the collection was created with an `Embedder`.
    public var embedding: EmbeddingManifest?
    /// Further models, each with a vector field of its own (``vectorFields``: `embedding_2`,
    /// `embedding_3`, … in this order), of the model's dimension and the collection's metric and
    /// index. A collection searched in several languages or domains keeps one row per text and a
    /// vector per model, so every filter and the text leg apply to all of them, and one query
    /// fuses their legs.
    public var additionalEmbeddings: [EmbeddingManifest]
    /// The kind of the rows' ids. `.int64` (the default) is the fastest; `.uuid` or `.string`
    /// ids cannot collide across devices, which a synced collection needs (TroveSync refuses
    /// `.int64`). Rows inserted without an id then get a time-ordered UUIDv7.
    public var ids: IDKind

    /// A configuration; only `dimension` has no default.
    public init(
        dimension: Int, metric: DistanceMetric = .cosine, lexicalSearch: Bool = true,
        metadataByteLimit: Int = CollectionConfiguration.defaultMetadataByteLimit,
        tokenizer: String = CollectionConfiguration.defaultTokenizer,
        index: IndexKind = .flat, embedding: EmbeddingManifest? = nil,
        additionalEmbeddings: [EmbeddingManifest] = [], ids: IDKind = .int64
    ) {
        self.dimension = dimension
        self.metric = metric
        self.lexicalSearch = lexicalSearch
        self.metadataByteLimit = metadataByteLimit
        self.tokenizer = tokenizer
        self.index = index
        self.embedding = embedding
        self.additionalEmbeddings = additionalEmbeddings
        self.ids = ids
    }

    /// The vector fields, one per model: `embedding`, then `embedding_2`, `embedding_3`, … for
    /// ``additionalEmbeddings``. Name them in ``Query/nearest(to:in:weight:k:)`` to search by one model.
    public var vectorFields: [String] {
        ["embedding"] + additionalEmbeddings.indices.map { "embedding_\($0 + 2)" }
    }

    /// The model of the vector field `field`, or nil (no such field, or a field without a model).
    func manifest(of field: String) -> EmbeddingManifest? {
        guard let index = vectorFields.firstIndex(of: field) else { return nil }
        return index == 0 ? embedding : additionalEmbeddings[index - 1]
    }

    enum CodingKeys: String, CodingKey {
        case dimension, metric, lexicalSearch, metadataByteLimit, tokenizer, index, embedding,
            additionalEmbeddings, ids
    }

    // Fields added by later versions get their defaults when reading older files.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        dimension = try c.decode(Int.self, forKey: .dimension)
        metric = try c.decode(DistanceMetric.self, forKey: .metric)
        lexicalSearch = try c.decodeIfPresent(Bool.self, forKey: .lexicalSearch) ?? true
        metadataByteLimit =
            try c.decodeIfPresent(Int.self, forKey: .metadataByteLimit)
            ?? Self.defaultMetadataByteLimit
        tokenizer = try c.decodeIfPresent(String.self, forKey: .tokenizer) ?? Self.defaultTokenizer
        index = try c.decodeIfPresent(IndexKind.self, forKey: .index) ?? .flat
        embedding = try c.decodeIfPresent(EmbeddingManifest.self, forKey: .embedding)
        additionalEmbeddings =
            try c.decodeIfPresent([EmbeddingManifest].self, forKey: .additionalEmbeddings) ?? []
        ids = try c.decodeIfPresent(IDKind.self, forKey: .ids) ?? .int64
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(dimension, forKey: .dimension)
        try c.encode(metric, forKey: .metric)
        try c.encode(lexicalSearch, forKey: .lexicalSearch)
        try c.encode(metadataByteLimit, forKey: .metadataByteLimit)
        try c.encode(tokenizer, forKey: .tokenizer)
        try c.encode(index, forKey: .index)
        try c.encodeIfPresent(embedding, forKey: .embedding)
        // Left out when empty, so files of one-model collections store what they always stored.
        if !additionalEmbeddings.isEmpty {
            try c.encode(additionalEmbeddings, forKey: .additionalEmbeddings)
        }
        // Left out when `.int64`, so files of Int64 collections store what they always stored.
        if ids != .int64 { try c.encode(ids, forKey: .ids) }
    }

    /// Checks every value before anything is created.
    public func validate() throws {
        guard (1...65_536).contains(dimension) else { throw TroveError.invalidDimension(dimension) }
        guard metadataByteLimit >= 2 else {
            throw TroveError.invalidConfiguration("metadataByteLimit must be at least 2 bytes")
        }
        guard !tokenizer.isEmpty, !tokenizer.contains("'"), !tokenizer.contains("\0") else {
            throw TroveError.invalidConfiguration(
                "tokenizer must be a non-empty FTS5 tokenizer string without quotes")
        }
        try index.validate()
        if let embedding, embedding.dimension != dimension {
            throw TroveError.invalidConfiguration(
                "embedding model dimension \(embedding.dimension) differs from collection dimension \(dimension)"
            )
        }
        for manifest in additionalEmbeddings where !(1...65_536).contains(manifest.dimension) {
            throw TroveError.invalidDimension(manifest.dimension)
        }
    }

    /// Human-readable differences from another configuration, empty when equal.
    func differences(from other: CollectionConfiguration) -> [String] {
        var out: [String] = []
        func check<T: Equatable>(_ name: String, _ a: T, _ b: T) {
            if a != b { out.append("\(name): stored \(a), requested \(b)") }
        }
        check("dimension", dimension, other.dimension)
        check("metric", metric, other.metric)
        check("lexicalSearch", lexicalSearch, other.lexicalSearch)
        check("metadataByteLimit", metadataByteLimit, other.metadataByteLimit)
        // A request for today's default is served by the default an older collection was made with.
        if !FullTextDefinition.tokenizer(tokenizer, serves: other.tokenizer) {
            check("tokenizer", tokenizer, other.tokenizer)
        }
        check("index", index, other.index)
        check("embedding", embedding?.modelID ?? "none", other.embedding?.modelID ?? "none")
        check(
            "additionalEmbeddings", additionalEmbeddings.map(\.modelID),
            other.additionalEmbeddings.map(\.modelID))
        check("ids", ids, other.ids)
        return out
    }

    func encodedJSON() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain value types cannot fail.
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }
}

/// The names a search collection keeps in the file, and the file format's constants. Its tables
/// are made by ``DocumentLayout`` (the preset's layout, DocumentLayout+Preset.swift), as every
/// collection's are.
struct CollectionSchema: Sendable {
    /// 1: the first format. 2: the change log's update trigger records updates of every column;
    /// document collections (`documents.<name>` keys). 3: search collections' rows have a
    /// `_version`. 4: search collections' tables, logs and snapshots are the document layout's
    /// (`SearchCollectionTable.moveToDocumentLayout`): `_version` after the id, the change log
    /// `(seq, rid, op)` without `AUTOINCREMENT`, the source index `<name>_i0`, the link
    /// triggers, snapshots keyed by field. Older files are upgraded on open (`Database.upgrade`).
    static let formatVersion = 4
    static let metaTable = "trove_meta"

    let name: String
    let configuration: CollectionConfiguration

    var table: String { quoted(name) }
    var ftsName: String { "\(name)_fts" }
    var fts: String { quoted(ftsName) }
    var configKey: String { "collection.\(name)" }

    private func quoted(_ identifier: String) -> String { "\"\(identifier)\"" }

    /// Validates a collection name: a plain identifier that cannot collide with SQLite's or
    /// Trove's own tables.
    static func validate(name: String) throws {
        guard let first = name.unicodeScalars.first else {
            throw TroveError.invalidName(name, reason: "the name is empty")
        }
        guard name.unicodeScalars.count <= 64 else {
            throw TroveError.invalidName(name, reason: "the name is longer than 64 characters")
        }
        func isLetter(_ s: Unicode.Scalar) -> Bool {
            (s >= "A" && s <= "Z") || (s >= "a" && s <= "z") || s == "_"
        }
        guard isLetter(first),
            name.unicodeScalars.allSatisfy({ isLetter($0) || ($0 >= "0" && $0 <= "9") })
        else {
            throw TroveError.invalidName(name, reason: "only [A-Za-z_][A-Za-z0-9_]* is allowed")
        }
        let lower = name.lowercased()
        guard !lower.hasPrefix("sqlite_"), !lower.hasPrefix("trove_") else {
            throw TroveError.invalidName(
                name, reason: "names starting with sqlite_ or trove_ are reserved")
        }
    }

    /// Seconds since 1970 as REAL, computable on SQLite 3.37+ (unixepoch('subsec') needs 3.42).
    static let now = "((julianday('now') - 2440587.5) * 86400.0)"

    /// Whether the table `name` has its `_version` column (format 3 and later; read-only opens
    /// of older files read every row as version 1).
    static func hasVersionColumn(_ name: String, on connection: Connection) throws -> Bool {
        try connection.scalar(
            "SELECT 1 FROM pragma_table_info(?) WHERE name = '_version'", [.text(name)]) != nil
    }

    /// Segments on one level at which the writer merges them itself.
    static let ftsCrisisMerge = 32

    static let ftsHashSize = 8 << 20
}
