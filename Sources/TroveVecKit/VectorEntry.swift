import Foundation

/// One row of a store: id, text, source label, optional metadata string and embedding.
///
/// ```swift
/// let plain = VectorEntry(id: 1, content: "Oat milk", source: "shopping.md", vector: embedding)
/// let raw = VectorEntry(id: 2, content: "Bread", source: "shopping.md",
///                       metadata: #"{"aisle":4}"#, vector: embedding)
/// let typed = try VectorEntry(id: 3, content: "Eggs", source: "shopping.md",
///                             encoding: Item(aisle: 2), vector: embedding)   // JSON for you
/// ```
public struct VectorEntry: Sendable, Equatable, Codable {
    /// The row's id, unique in the store (you choose it, or let ``VectorStore`` assign one).
    public let id: Int
    /// The text: returned by searches, and ranked by text search when the store has its index.
    public let content: String
    /// A label such as a document name; searches and deletes can be restricted to one.
    public let source: String
    /// Any string (JSON usually, but not required), nil for none; at most the store's
    /// `metadataByteLimit` UTF-8 bytes.
    public let metadata: String?
    /// The embedding; its length must be the store's dimension.
    public let vector: [Float]

    /// An entry whose metadata is stored exactly as given.
    public init(id: Int, content: String, source: String, metadata: String? = nil, vector: [Float])
    {
        self.id = id
        self.content = content
        self.source = source
        self.metadata = metadata
        self.vector = vector
    }

    /// An entry from a `[Double]` embedding (stored as 32-bit floats).
    @_disfavoredOverload
    public init(id: Int, content: String, source: String, metadata: String? = nil, vector: [Double])
    {
        self.init(
            id: id, content: content, source: source, metadata: metadata,
            vector: vector.map(Float.init))
    }

    /// An entry whose metadata is `metadata` encoded as compact JSON with sorted keys.
    ///
    /// A different label from `metadata:` on purpose: a `String` passed as `metadata:` is kept
    /// as it is, never encoded into a quoted JSON string.
    ///
    /// - Throws: what `JSONEncoder` throws for `metadata`.
    public init(
        id: Int, content: String, source: String, encoding metadata: some Encodable, vector: [Float]
    ) throws {
        self.init(
            id: id, content: content, source: source, metadata: try MetadataJSON.string(metadata),
            vector: vector)
    }

    /// An entry from a `[Double]` embedding whose metadata is `metadata` encoded as JSON.
    @_disfavoredOverload
    public init(
        id: Int, content: String, source: String, encoding metadata: some Encodable,
        vector: [Double]
    ) throws {
        try self.init(
            id: id, content: content, source: source, encoding: metadata,
            vector: vector.map(Float.init))
    }
}

/// The JSON form of `encoding:` metadata and of ``SearchResult/decodeMetadata(_:)``.
enum MetadataJSON {
    /// Sorted keys, so equal values always store equal strings.
    static func string(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from string: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(string.utf8))
    }
}
