import Foundation
import TroveEmbeddings
import TroveSQLite

/// A text to add through the text-in API.
///
/// ```swift
/// try await notes.add([TextEntry(text: "Dentist on Tuesday", source: "calendar", metadata: #"{"day":2}"#)])
/// ```
public struct TextEntry: Hashable, Sendable {
    /// A chosen id (of the collection's kind), or nil to let Trove choose one.
    public var id: DocumentID?
    /// The text to embed and store as `content`.
    public var text: String
    /// Where the text came from (may be empty).
    public var source: String
    /// A JSON object as text, or nil.
    public var metadata: String?

    /// A text to add; `id` nil lets the store assign one.
    public init(id: DocumentID? = nil, text: String, source: String = "", metadata: String? = nil) {
        self.id = id
        self.text = text
        self.source = source
        self.metadata = metadata
    }
}

extension SearchCollection {
    private func requireEmbedder() throws -> any Embedder {
        guard let embedder else { throw TroveError.embedderRequired(collection: name) }
        return embedder
    }

    /// Embeds `text` with the collection's embedder and inserts it.
    ///
    /// ```swift
    /// let id = try await notes.add(text: "Dentist on Tuesday at 10", source: "calendar")
    /// ```
    /// - Returns: the new row's id.
    /// - Throws: ``TroveError/embedderRequired(collection:)``, the embedder's errors, or the
    ///   insert errors of ``insert(_:)-([VectorEntry])``.
    @discardableResult
    public func add(text: String, source: String = "", metadata: String? = nil) async throws
        -> DocumentID
    {
        try await add([TextEntry(text: text, source: source, metadata: metadata)])[0]
    }

    /// Embeds `text` and inserts it with metadata encoded from any `Encodable` object.
    @discardableResult
    public func add(text: String, source: String = "", encoding metadata: some Encodable)
        async throws -> DocumentID
    {
        try await add(text: text, source: source, metadata: MetadataJSON.encode(metadata))
    }

    /// Embeds and inserts texts in one all-or-nothing transaction (embedding happens first, off
    /// the database's actor, so other work on the database is not blocked while the model runs).
    ///
    /// - Returns: the ids, in order.
    @discardableResult
    public func add(_ entries: [TextEntry]) async throws -> [DocumentID] {
        guard !entries.isEmpty else { return [] }
        let embedder = try requireEmbedder()
        let vectors = try await embedder.embed(entries.map(\.text))
        guard vectors.count == entries.count else {
            throw TroveError.invalidVector(
                reason: "the embedder returned \(vectors.count) vectors for \(entries.count) texts")
        }
        let rows = zip(entries, vectors).map {
            PendingRow(
                id: $0.id, content: $0.text, source: $0.source, metadata: $0.metadata, vector: $1)
        }
        return try await write(rows, mode: .insert)
    }

    /// Searches with text: embeds it as a query and runs hybrid search (vector and words fused),
    /// or one leg alone. The words are treated as typed by a person: no syntax errors. On a
    /// collection created with lexical search off, `.hybrid` runs the vector leg alone.
    ///
    /// The text is embedded with the embedder's `embedQuery(_:)`, as `trove search` does: models
    /// trained with instructions (multilingual-e5: `query: ` against the stored `passage: `) rank
    /// well only when the question carries the query prefix.
    ///
    /// ```swift
    /// let hits = try await notes.search("when is the dentist?", limit: 5)
    /// let wordsOnly = try await notes.search("dentist", mode: .text, snippet: SnippetStyle())
    /// let due = try await notes.search("dentist", where: Field("metadata", path: "$.due").exists)
    /// ```
    /// - Throws: ``TroveError/embedderRequired(collection:)`` for the vector and hybrid modes
    ///   without an embedder, and the errors of ``search(_:)``.
    public func search(
        _ text: String, mode: SearchMode = .hybrid, where filter: Filter = .all, limit: Int = 10,
        snippet: SnippetStyle? = nil
    ) async throws -> [Hit<VectorEntry>] {
        var query = Query(filter).limit(limit)
        if mode != .text {
            query = query.nearest(to: try await requireEmbedder().embedQuery(text), in: "embedding")
        }
        // Without a text index, "hybrid" has only one leg: answer with it rather than fail.
        if mode == .text || (mode == .hybrid && configuration.lexicalSearch) {
            query = query.matching(.typed(text))
            if let snippet { query = query.snippets(snippet) }
        }
        return try await search(query)
    }
}
