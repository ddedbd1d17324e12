import Foundation
import TroveEmbeddings
import TroveSQLite

/// A text to add through the text-in API.
///
/// ```swift
/// try await notes.add([TextEntry(text: "Dentist on Tuesday", source: "calendar", metadata: #"{"day":2}"#)])
/// ```
public struct TextEntry: Hashable, Sendable {
    /// A chosen id, or nil to let SQLite assign one.
    public var id: Int64?
    /// The text to embed and store as `content`.
    public var text: String
    /// Where the text came from (may be empty).
    public var source: String
    /// A JSON object as text, or nil.
    public var metadata: String?

    /// A text to add; `id` nil lets the store assign one.
    public init(id: Int64? = nil, text: String, source: String = "", metadata: String? = nil) {
        self.id = id
        self.text = text
        self.source = source
        self.metadata = metadata
    }
}

extension Collection {
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
    ///   insert errors of ``insertBatch(_:)``.
    @discardableResult
    public func add(text: String, source: String = "", metadata: String? = nil) async throws -> Int64 {
        try await add([TextEntry(text: text, source: source, metadata: metadata)])[0]
    }

    /// Embeds `text` and inserts it with metadata encoded from any `Encodable` object.
    @discardableResult
    public func add(text: String, source: String = "", encoding metadata: some Encodable) async throws -> Int64 {
        try await add(text: text, source: source, metadata: MetadataJSON.encode(metadata))
    }

    /// Embeds and inserts texts in one all-or-nothing transaction (embedding happens first, off
    /// the database's actor, so other work on the database is not blocked while the model runs).
    ///
    /// - Returns: the ids, in order.
    @discardableResult
    public func add(_ entries: [TextEntry]) async throws -> [Int64] {
        guard !entries.isEmpty else { return [] }
        let embedder = try requireEmbedder()
        let vectors = try await embedder.embed(entries.map(\.text))
        guard vectors.count == entries.count else {
            throw TroveError.invalidVector(reason: "the embedder returned \(vectors.count) vectors for \(entries.count) texts")
        }
        let rows = zip(entries, vectors).map {
            PendingRow(id: $0.id, content: $0.text, source: $0.source, metadata: $0.metadata, vector: $1)
        }
        return try await database.withWritingEngine(name) { try $0.write(rows, mode: .insert) }
    }

    /// Searches with text: embeds it and runs hybrid search (vector and words fused with RRF),
    /// or one leg alone. The words are treated as typed by a person: no syntax errors. On a
    /// collection created with lexical search off, `.hybrid` runs the vector leg alone.
    ///
    /// ```swift
    /// let hits = try await notes.search("when is the dentist?", topK: 5)
    /// let wordsOnly = try await notes.search("dentist", mode: .text)
    /// let due = try await notes.search("dentist", filter: SearchFilter(metadata: [.exists("due")]))
    /// ```
    /// - Throws: ``TroveError/embedderRequired(collection:)`` for the vector and hybrid modes
    ///   without an embedder, and the errors of the underlying searches.
    public func search(
        _ text: String, topK: Int = 10, mode: SearchMode = .hybrid, filter: SearchFilter = SearchFilter(),
        snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        switch mode {
        case .text:
            return try await searchText(.typed(text), topK: topK, filter: filter, snippet: snippet)
        case .vector:
            let vector = try await requireEmbedder().embed(text)
            return try await search(vector: vector, topK: topK, filter: filter)
        case .hybrid(let fusion):
            let vector = try await requireEmbedder().embed(text)
            // Without a text index, "hybrid" has only one leg: answer with it rather than fail.
            guard configuration.lexicalSearch else {
                return try await search(vector: vector, topK: topK, filter: filter)
            }
            return try await searchHybrid(
                text: .typed(text), vector: vector, topK: topK, filter: filter, fusion: fusion, snippet: snippet)
        }
    }
}
