import Foundation

/// One record: an id, the text, where it came from, optional JSON metadata and its vector.
///
/// An entry without an id (``DocumentID/unassigned``) gets a new one when inserted; one without
/// a vector is embedded by the collection's embedder.
///
/// ```swift
/// let entry = try VectorEntry(id: 1, content: "Buy oat milk", source: "notes/today.md",
///                             encoding: ["tag": "groceries"], vector: embedding)
/// try await notes.insert(entry)
/// let id = try await notes.insert(VectorEntry(content: "Dentist on Tuesday at 10"))  // embedded
/// ```
public struct VectorEntry: Hashable, Sendable, Identifiable {
    /// The row's id, of the collection's kind (``CollectionConfiguration/ids``): `.int` in an
    /// Int64 collection (integer literals are ids: `VectorEntry(id: 1, ...)`), `.uuid` or
    /// `.string` otherwise.
    public var id: DocumentID
    /// The text; indexed for full-text search when the collection has lexical search on.
    public var content: String
    /// A label for where the text came from (a file path, a URL, a document id). May be empty.
    public var source: String
    /// A JSON object as text, or nil.
    public var metadata: String?
    /// The embedding; empty for a row stored without one, and in an entry for the collection's
    /// embedder to fill at insert.
    public var vector: [Float]
    /// The vectors of the collection's further models
    /// (``CollectionConfiguration/additionalEmbeddings``: `embedding_2`, … in order); empty for
    /// the collection's embedders to fill at insert, and in a collection of one model.
    public var additionalVectors: [[Float]]

    /// Creates an entry with metadata given as JSON text.
    public init(
        id: DocumentID = .unassigned, content: String, source: String = "",
        metadata: String? = nil, vector: [Float] = [], additionalVectors: [[Float]] = []
    ) {
        self.id = id
        self.content = content
        self.source = source
        self.metadata = metadata
        self.vector = vector
        self.additionalVectors = additionalVectors
    }

    /// Creates an entry from a `[Double]` vector (converted to Float).
    @_disfavoredOverload
    public init(
        id: DocumentID = .unassigned, content: String, source: String = "",
        metadata: String? = nil, vector: [Double]
    ) {
        self.init(
            id: id, content: content, source: source, metadata: metadata,
            vector: vector.map(Float.init))
    }

    /// Creates an entry whose metadata is any `Encodable` value, stored as compact JSON with
    /// sorted keys. The value must encode to a JSON object.
    ///
    /// - Throws: `EncodingError` when the value cannot be encoded.
    public init(
        id: DocumentID = .unassigned, content: String, source: String = "",
        encoding metadata: some Encodable, vector: [Float] = []
    ) throws {
        self.init(
            id: id, content: content, source: source, metadata: try MetadataJSON.encode(metadata),
            vector: vector)
    }

    /// `[Double]` variant of ``init(id:content:source:encoding:vector:)-(_,_,_,_,[Float])``.
    @_disfavoredOverload
    public init(
        id: DocumentID = .unassigned, content: String, source: String = "",
        encoding metadata: some Encodable, vector: [Double]
    ) throws {
        try self.init(
            id: id, content: content, source: source, encoding: metadata,
            vector: vector.map(Float.init))
    }

    /// Decodes the metadata JSON as `T`; nil when the row has no metadata.
    public func decodeMetadata<T: Decodable>(_ type: T.Type) throws -> T? {
        try metadata.map { try MetadataJSON.decode(type, from: $0) }
    }
}

/// JSON encoding for metadata: compact, sorted keys, so equal values give equal text.
public enum MetadataJSON {
    /// Encodes a value as compact JSON text with sorted keys.
    public static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Decodes JSON text as `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from json: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }
}
