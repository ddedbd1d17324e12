import Trove

/// The store's table as a document collection: its schema, and rows as documents.
///
/// The columns are SQLiteVecKit's names, so raw SQL written for it (`SELECT c.content ... FROM
/// chunks c`) reads the same table: `content`, `source` (B-tree indexed: per-source filters,
/// counts and deletes), `metadata` (free text, not only JSON) and `embedding`. With lexical
/// search on, an FTS5 index covers `content`.
enum StoreSchema {
    static let content = "content"
    static let source = "source"
    static let metadata = "metadata"
    static let embedding = "embedding"
    /// The fields a search reads: everything but the embedding.
    static let resultFields = [content, source, metadata]

    static func documentSchema(dimension: Int, metric: DistanceMetric, lexicalSearch: Bool)
        -> DocumentSchema
    {
        DocumentSchema(
            id: .int64,
            fields: [
                .text(content), .text(source, indexed: true), .text(metadata, optional: true),
                .vector(embedding, dimension: dimension, metric: metric == .cosine ? .cosine : .l2),
            ],
            fullText: lexicalSearch ? FullTextDefinition(fields: [content]) : nil)
    }

    /// SQLiteVecKit's rule for table names, `[A-Za-z_][A-Za-z0-9_]*`, plus the names Trove keeps
    /// for itself, checked here so that a refusal while opening means the name is taken.
    static func isValid(tableName name: String) -> Bool {
        func isLetter(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c == "_") }
        guard let first = name.first, isLetter(first), name.count <= 64,
            name.allSatisfy({ isLetter($0) || ($0.isASCII && $0.isNumber) })
        else { return false }
        let lower = name.lowercased()
        return !lower.hasPrefix("sqlite_") && !lower.hasPrefix("trove_")
    }

    /// The configuration in words, for ``SQLiteError/schemaMismatch(expected:found:)``.
    static func describe(_ schema: DocumentSchema, table: String) -> String {
        let fields = schema.fields.map { "\($0.name) \($0.type)\($0.isOptional ? "?" : "")" }
            .joined(separator: ", ")
        let text = schema.fullText == nil ? "no full-text index" : "full text over content"
        return "\(table)(id, \(fields)), \(text)"
    }

    /// A row as the document stored for it.
    static func document(_ entry: VectorEntry) -> Document {
        Document(
            id: .int(Int64(entry.id)),
            [
                content: .string(entry.content), source: .string(entry.source),
                metadata: entry.metadata.map(Value.string) ?? .null,
                embedding: .vector(entry.vector),
            ])
    }

    /// A stored document as a row (nil when it is not one of the store's rows).
    static func entry(_ document: Document) -> VectorEntry? {
        guard case .int(let id) = document.id, let vector = document[embedding]?.vectorValue else {
            return nil
        }
        return VectorEntry(
            id: Int(id), content: document[content]?.stringValue ?? "",
            source: document[source]?.stringValue ?? "",
            metadata: document[metadata]?.stringValue, vector: vector)
    }

    /// The id, text, source and metadata of a search hit.
    static func row(_ document: Document) -> (
        id: Int, content: String, source: String, metadata: String?
    ) {
        let id: Int = if case .int(let value) = document.id { Int(value) } else { 0 }
        return (
            id, document[content]?.stringValue ?? "", document[source]?.stringValue ?? "",
            document[metadata]?.stringValue
        )
    }

    /// The filter of a `source:` argument.
    static func filter(source: String?) -> Filter {
        source.map { Field(Self.source) == .string($0) } ?? .all
    }
}
