import Foundation
import TroveVectors

/// The kind of id a document collection uses.
public enum IDKind: String, Codable, Hashable, Sendable {
    /// A 64-bit integer (stored as the table's integer primary key: the fastest).
    case int64
    /// A UUID (stored as lowercase text).
    case uuid
    /// Any non-empty string.
    case string
}

/// The type of a declared field.
public enum FieldType: Hashable, Sendable, Codable, CustomStringConvertible {
    case text
    case integer
    case real
    case bool
    /// Stored as seconds since 1970 (REAL), so dates order and compare as numbers.
    case date
    case data
    /// Any JSON value (object, array, string, number, bool, null), queryable by path.
    case json
    /// A float32 vector searched by an in-memory index (exact scan).
    case vector(dimension: Int, metric: DistanceMetric)
    /// A place (``GeoPoint``: latitude, longitude), validated on write and indexed by an R*Tree.
    case point

    public var description: String {
        switch self {
        case .text: "text"
        case .integer: "integer"
        case .real: "real"
        case .bool: "bool"
        case .date: "date"
        case .data: "data"
        case .json: "json"
        case .vector(let d, let m): "vector(\(d), \(m))"
        case .point: "point"
        }
    }

    var isNumeric: Bool {
        switch self {
        case .integer, .real, .bool, .date: true
        default: false
        }
    }

    var vectorDimension: Int? { if case .vector(let d, _) = self { d } else { nil } }
}

/// One declared field of a collection.
///
/// ```swift
/// let fields: [FieldDefinition] = [
///     .text("title"), .integer("year", indexed: true), .real("score", default: 0),
///     .json("tags", optional: true), .vector("embedding", dimension: 384),
/// ]
/// ```
public struct FieldDefinition: Hashable, Sendable, Codable {
    /// The name: `[A-Za-z][A-Za-z0-9_]*`, not `id`.
    public var name: String
    /// The type.
    public var type: FieldType
    /// Whether the field may be null or missing.
    public var isOptional: Bool
    /// The value written when a document leaves the field out.
    public var defaultValue: Value?
    /// Whether two documents may not share a value (null values never collide).
    public var isUnique: Bool
    /// Whether a B-tree index is kept on the field.
    public var isIndexed: Bool
    /// The document collection whose ids this field holds (a SQLite foreign key, always indexed),
    /// or nil; see ``reference(_:to:id:onDelete:optional:unique:)``.
    public var reference: Reference?

    /// A field definition; see the static builders (`.text("title")`, ...).
    public init(
        _ name: String, _ type: FieldType, optional: Bool = false,
        default defaultValue: Value? = nil,
        unique: Bool = false, indexed: Bool = false, reference: Reference? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.defaultValue = defaultValue
        self.isUnique = unique
        self.isIndexed = indexed
        self.reference = reference
    }

    public static func text(
        _ name: String, optional: Bool = false, default value: Value? = nil,
        unique: Bool = false, indexed: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(
            name, .text, optional: optional, default: value, unique: unique, indexed: indexed)
    }
    public static func integer(
        _ name: String, optional: Bool = false, default value: Value? = nil,
        unique: Bool = false, indexed: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(
            name, .integer, optional: optional, default: value, unique: unique, indexed: indexed)
    }
    public static func real(
        _ name: String, optional: Bool = false, default value: Value? = nil,
        unique: Bool = false, indexed: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(
            name, .real, optional: optional, default: value, unique: unique, indexed: indexed)
    }
    public static func bool(
        _ name: String, optional: Bool = false, default value: Value? = nil,
        indexed: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(name, .bool, optional: optional, default: value, indexed: indexed)
    }
    public static func date(
        _ name: String, optional: Bool = false, default value: Value? = nil,
        unique: Bool = false, indexed: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(
            name, .date, optional: optional, default: value, unique: unique, indexed: indexed)
    }
    public static func data(
        _ name: String, optional: Bool = false, default value: Value? = nil,
        unique: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(name, .data, optional: optional, default: value, unique: unique)
    }
    public static func json(_ name: String, optional: Bool = false, default value: Value? = nil)
        -> FieldDefinition
    {
        FieldDefinition(name, .json, optional: optional, default: value)
    }
    public static func vector(
        _ name: String, dimension: Int, metric: DistanceMetric = .cosine,
        optional: Bool = false
    ) -> FieldDefinition {
        FieldDefinition(name, .vector(dimension: dimension, metric: metric), optional: optional)
    }
    /// A place, indexed by an R*Tree: `Field(name).within(kilometres:of:)`, `.within(box)`,
    /// `Query.near(_:in:)`.
    public static func point(_ name: String, optional: Bool = false) -> FieldDefinition {
        FieldDefinition(name, .point, optional: optional)
    }
}

/// A B-tree index over one or more fields or JSON paths (an expression index).
///
/// ```swift
/// IndexDefinition([Field("category"), Field("year")])             // compound
/// IndexDefinition([Field("email")], unique: true)
/// IndexDefinition([Field("meta", path: "$.author")])              // JSON path
/// ```
public struct IndexDefinition: Hashable, Sendable, Codable {
    /// The keys, in order.
    public var keys: [Field]
    /// Whether the combination of keys is unique.
    public var isUnique: Bool

    public init(_ keys: [Field], unique: Bool = false) {
        self.keys = keys
        self.isUnique = unique
    }
}

/// A full-text (FTS5) index over one or more text fields, ranked by BM25 with per-field weights.
///
/// Without a `tokenizer`, the index uses ``defaultTokenizer``: words of spaced scripts as FTS5's
/// `unicode61` cuts them, and CJK, Thai, Lao, Khmer and Myanmar text in overlapping bigrams, so
/// `東京` finds `東京で寿司を食べた`. The tokenizer is frozen with the index.
///
/// ```swift
/// FullTextDefinition(["title": 2, "body": 1])
/// ```
public struct FullTextDefinition: Hashable, Sendable, Codable {
    /// The indexed text fields in column order.
    public var fields: [String]
    /// BM25 weight of each field (same order as ``fields``); 1 when not given.
    public var weights: [Double]
    /// The FTS5 `tokenize=` argument.
    public var tokenizer: String

    /// An index over `fields` with the given BM25 weights.
    public init(
        _ weightedFields: KeyValuePairs<String, Double>,
        tokenizer: String = FullTextDefinition.defaultTokenizer
    ) {
        self.fields = weightedFields.map(\.key)
        self.weights = weightedFields.map(\.value)
        self.tokenizer = tokenizer
    }

    /// An index over `fields`, all weighted 1.
    public init(fields: [String], tokenizer: String = FullTextDefinition.defaultTokenizer) {
        self.fields = fields
        self.weights = fields.map { _ in 1 }
        self.tokenizer = tokenizer
    }
}

/// What a document collection holds: its id kind, declared fields, indexes, and whether
/// undeclared fields are kept (in one JSON column, queryable by name and path).
///
/// Frozen in the file when the collection is created; opening it with another schema throws
/// ``TroveError/schemaMismatch(collection:details:)``.
///
/// ```swift
/// let schema = DocumentSchema(
///     id: .int64,
///     fields: [.text("title"), .text("body"), .text("category", indexed: true), .integer("year"),
///              .real("score"), .json("tags", optional: true)],
///     indexes: [IndexDefinition([Field("category"), Field("year")])],
///     fullText: FullTextDefinition(["title": 2, "body": 1]))
/// let items = try await database.documents("items", schema: schema)
/// ```
public struct DocumentSchema: Hashable, Sendable, Codable {
    /// The id kind.
    public var id: IDKind
    /// The declared fields.
    public var fields: [FieldDefinition]
    /// B-tree indexes beyond the per-field `indexed`/`unique` flags.
    public var indexes: [IndexDefinition]
    /// The full-text index, if any.
    public var fullText: FullTextDefinition?
    /// Whether fields that are not declared are kept (as JSON) instead of rejected.
    public var allowsUndeclaredFields: Bool
    /// The in-memory index of each vector field: `.flat` (exact, the default) or `.hnsw(...)`
    /// (approximate; float32 or int8 walks, always re-scored with float32).
    public var vectorIndexes: [String: IndexKind]
    /// For vector fields filled by embedding a text field: the text field and the model.
    public var embeddingSources: [String: EmbeddingSource]
    /// Whether documents may carry an expiry time (``Expiry``): an `_expires` column, invisible to
    /// every read from that second on, removed by ``DocumentCollection/purgeExpired()``.
    public var allowsExpiry: Bool

    public init(
        id: IDKind = .int64, fields: [FieldDefinition], indexes: [IndexDefinition] = [],
        fullText: FullTextDefinition? = nil, allowsUndeclaredFields: Bool = false,
        vectorIndexes: [String: IndexKind] = [:], embeddingSources: [String: EmbeddingSource] = [:],
        allowsExpiry: Bool = false
    ) {
        self.allowsExpiry = allowsExpiry
        self.id = id
        self.fields = fields
        self.indexes = indexes
        self.fullText = fullText
        self.allowsUndeclaredFields = allowsUndeclaredFields
        self.vectorIndexes = vectorIndexes
        self.embeddingSources = embeddingSources
    }

    enum CodingKeys: String, CodingKey {
        case id, fields, indexes, fullText, allowsUndeclaredFields, vectorIndexes, embeddingSources,
            allowsExpiry
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(IDKind.self, forKey: .id)
        fields = try c.decode([FieldDefinition].self, forKey: .fields)
        indexes = try c.decodeIfPresent([IndexDefinition].self, forKey: .indexes) ?? []
        fullText = try c.decodeIfPresent(FullTextDefinition.self, forKey: .fullText)
        allowsUndeclaredFields =
            try c.decodeIfPresent(Bool.self, forKey: .allowsUndeclaredFields) ?? false
        vectorIndexes =
            try c.decodeIfPresent([String: IndexKind].self, forKey: .vectorIndexes) ?? [:]
        embeddingSources =
            try c.decodeIfPresent([String: EmbeddingSource].self, forKey: .embeddingSources) ?? [:]
        allowsExpiry = try c.decodeIfPresent(Bool.self, forKey: .allowsExpiry) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(fields, forKey: .fields)
        try c.encode(indexes, forKey: .indexes)
        try c.encodeIfPresent(fullText, forKey: .fullText)
        try c.encode(allowsUndeclaredFields, forKey: .allowsUndeclaredFields)
        try c.encode(vectorIndexes, forKey: .vectorIndexes)
        // Written only when on, so schemas stored before expiry existed read back unchanged.
        if allowsExpiry { try c.encode(allowsExpiry, forKey: .allowsExpiry) }
        if !embeddingSources.isEmpty { try c.encode(embeddingSources, forKey: .embeddingSources) }
    }

    /// A schemaless document collection: any fields, kept as JSON, queryable by path.
    public static func documents(id: IDKind = .int64) -> DocumentSchema {
        DocumentSchema(id: id, fields: [], allowsUndeclaredFields: true)
    }

    /// The declared field named `name`.
    public func field(_ name: String) -> FieldDefinition? { fields.first { $0.name == name } }

    /// Checks names, types, defaults and indexes before anything is created.
    ///
    /// - Throws: ``TroveError/invalidConfiguration(_:)`` or ``TroveError/invalidName(_:reason:)``.
    public func validate() throws {
        var seen: Set<String> = []
        for field in fields {
            try Self.validate(fieldName: field.name)
            guard seen.insert(field.name).inserted else {
                throw TroveError.invalidConfiguration("field \(field.name) is declared twice")
            }
            if case .vector(let dimension, _) = field.type {
                guard (1...65_536).contains(dimension) else {
                    throw TroveError.invalidDimension(dimension)
                }
                guard !field.isUnique, !field.isIndexed, field.defaultValue == nil else {
                    throw TroveError.invalidConfiguration(
                        "vector field \(field.name) cannot be unique, B-tree indexed or defaulted")
                }
            }
            try field.reference?.validate(field)
            if field.type == .point {
                guard !field.isUnique, !field.isIndexed, field.defaultValue == nil else {
                    throw TroveError.invalidConfiguration(
                        "point field \(field.name) cannot be unique, B-tree indexed or defaulted (its R*Tree is the index)"
                    )
                }
            }
            if let value = field.defaultValue {
                guard !value.isNull || field.isOptional else {
                    throw TroveError.invalidConfiguration(
                        "field \(field.name): a required field cannot default to null")
                }
                _ = try FieldCodec.bind(value, for: field)
            }
        }
        for index in indexes {
            guard !index.keys.isEmpty else {
                throw TroveError.invalidConfiguration("an index needs at least one key")
            }
            for key in index.keys { _ = try FieldResolver(schema: self).column(key) }
        }
        for (name, kind) in vectorIndexes {
            guard field(name)?.type.vectorDimension != nil else {
                throw TroveError.invalidConfiguration(
                    "vectorIndexes names \(name), which is not a vector field")
            }
            try kind.validate()
        }
        if let fullText {
            guard !fullText.fields.isEmpty, fullText.fields.count == fullText.weights.count else {
                throw TroveError.invalidConfiguration(
                    "a full-text index needs fields, each with a weight")
            }
            for name in fullText.fields {
                guard field(name)?.type == .text else {
                    throw TroveError.invalidConfiguration(
                        "full-text field \(name) must be a declared text field")
                }
            }
            guard fullText.weights.allSatisfy({ $0 >= 0 && $0.isFinite }) else {
                throw TroveError.invalidConfiguration("full-text weights must be finite and >= 0")
            }
            let tokenizer = fullText.tokenizer
            guard !tokenizer.isEmpty, !tokenizer.contains("'"), !tokenizer.contains("\0") else {
                throw TroveError.invalidConfiguration(
                    "tokenizer must be a non-empty FTS5 tokenizer string without quotes")
            }
        }
        try validateEmbeddingSources()
    }

    static func validate(fieldName name: String) throws {
        let scalars = Array(name.unicodeScalars)
        func isLetter(_ s: Unicode.Scalar) -> Bool {
            (s >= "A" && s <= "Z") || (s >= "a" && s <= "z")
        }
        guard let first = scalars.first, isLetter(first), scalars.count <= 64,
            scalars.allSatisfy({ isLetter($0) || ($0 >= "0" && $0 <= "9") || $0 == "_" })
        else {
            throw TroveError.invalidName(
                name, reason: "a field name is [A-Za-z][A-Za-z0-9_]*, at most 64 characters")
        }
        guard name != "id", name.lowercased() != "rowid" else {
            throw TroveError.invalidName(name, reason: "\(name) is reserved")
        }
    }

    /// Human-readable differences from another schema, empty when equal.
    func differences(from other: DocumentSchema) -> [String] {
        var out: [String] = []
        if id != other.id { out.append("id: stored \(id), requested \(other.id)") }
        let a = Dictionary(fields.map { ($0.name, $0) }, uniquingKeysWith: { x, _ in x })
        let b = Dictionary(other.fields.map { ($0.name, $0) }, uniquingKeysWith: { x, _ in x })
        for name in Set(a.keys).union(b.keys).sorted() where a[name] != b[name] {
            out.append(
                "field \(name): stored \(a[name].map(Self.describe) ?? "none"), requested \(b[name].map(Self.describe) ?? "none")"
            )
        }
        if indexes != other.indexes { out.append("indexes differ") }
        // A stored index serves the current default tokenizer when it was made with an earlier one.
        if !FullTextDefinition.stored(fullText, serves: other.fullText) {
            out.append("full-text index differs")
        }
        if allowsUndeclaredFields != other.allowsUndeclaredFields {
            out.append("allowsUndeclaredFields differs")
        }
        if vectorIndexes != other.vectorIndexes { out.append("vector indexes differ") }
        // A requested schema that names no embedding sources accepts the stored ones.
        if !other.embeddingSources.isEmpty, embeddingSources != other.embeddingSources {
            out.append("embedding sources differ")
        }
        if allowsExpiry != other.allowsExpiry { out.append("allowsExpiry differs") }
        return out
    }

    private static func describe(_ f: FieldDefinition) -> String {
        "\(f.type)\(f.isOptional ? "?" : "")\(f.isUnique ? " unique" : "")\(f.isIndexed ? " indexed" : "")"
            + (f.defaultValue.map { " default \($0)" } ?? "")
            + (f.reference.map { " references \($0.collection) on delete \($0.onDelete)" } ?? "")
    }
}

// MARK: Value is stored in the schema (defaults) as tagged JSON

extension Value: Codable {
    private enum Tag: String, CodingKey {
        case null, bool, int, double, string, date, data, vector, array, object
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Tag.self)
        switch self {
        case .null: try c.encodeNil(forKey: .null)
        case .bool(let v): try c.encode(v, forKey: .bool)
        case .int(let v): try c.encode(v, forKey: .int)
        case .double(let v): try c.encode(v, forKey: .double)
        case .string(let v): try c.encode(v, forKey: .string)
        case .date(let v): try c.encode(v.timeIntervalSince1970, forKey: .date)
        case .data(let v): try c.encode(v.base64EncodedString(), forKey: .data)
        case .vector(let v): try c.encode(v, forKey: .vector)
        case .array(let v): try c.encode(v, forKey: .array)
        case .object(let v): try c.encode(v, forKey: .object)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Tag.self)
        guard let key = c.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: c.codingPath, debugDescription: "empty value"))
        }
        switch key {
        case .null: self = .null
        case .bool: self = .bool(try c.decode(Bool.self, forKey: key))
        case .int: self = .int(try c.decode(Int64.self, forKey: key))
        case .double: self = .double(try c.decode(Double.self, forKey: key))
        case .string: self = .string(try c.decode(String.self, forKey: key))
        case .date:
            self = .date(Date(timeIntervalSince1970: try c.decode(Double.self, forKey: key)))
        case .data:
            self = .data(Data(base64Encoded: try c.decode(String.self, forKey: key)) ?? Data())
        case .vector: self = .vector(try c.decode([Float].self, forKey: key))
        case .array: self = .array(try c.decode([Value].self, forKey: key))
        case .object: self = .object(try c.decode([String: Value].self, forKey: key))
        }
    }
}
