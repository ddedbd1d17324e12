import Foundation
import TroveSQLite

extension Collection {
    /// The search collection's row shape as a document schema, for compiling a ``Query``'s filter
    /// over its columns: `id`, `content`, `source`, `metadata` (JSON, reachable by path),
    /// `created_at`, `updated_at` (seconds since 1970).
    static let querySchema = DocumentSchema(
        id: .int64,
        fields: [.text("content"), .text("source"), .json("metadata", optional: true),
                 .real("created_at"), .real("updated_at")])

    /// Runs a ranked ``Query`` — the same value document collections take — on this search
    /// collection: its filter over `content`, `source`, `metadata` paths, `created_at`,
    /// `updated_at` and `id`; a vector leg on `embedding`; a text leg on `content`; fused by RRF,
    /// with MMR when asked. The other search methods are conveniences for the common cases.
    ///
    /// ```swift
    /// let hits = try await notes.search(Query(Field("source") == "a.pdf" && Field("metadata", path: "$.page") <= 10)
    ///     .nearest(to: q, in: "embedding").matching(.typed("router reset")).limit(5))
    /// ```
    /// - Throws: ``TroveError/invalidQuery(_:)`` for parts a search collection cannot run
    ///   (an order, a cursor, a projection, normalised-score fusion, an unranked query),
    ///   ``TroveError/notVectorField(field:type:)`` / ``TroveError/notTextField(field:fullTextFields:)``
    ///   for legs on other columns, and the errors of the underlying searches.
    public func search(_ query: Query) async throws -> [SearchResult] {
        guard query.isRanked else {
            throw TroveError.invalidQuery("a search collection runs ranked queries; add a vector or text leg")
        }
        guard query.order.isEmpty, query.cursor == nil, query.projection == nil else {
            throw TroveError.invalidQuery("a search collection's query has no order, cursor or projection")
        }
        guard query.vectorLegs.count <= 1 else {
            throw TroveError.invalidQuery("a search collection has one vector column, embedding")
        }
        if let leg = query.vectorLegs.first, leg.field != "embedding" {
            throw TroveError.notVectorField(field: leg.field, type: Self.querySchema.field(leg.field)?.type.description ?? "unknown")
        }
        if let leg = query.textLeg, let fields = leg.fields, fields != ["content"] {
            throw TroveError.notTextField(field: fields.first { $0 != "content" } ?? "", fullTextFields: ["content"])
        }
        guard case .reciprocalRank(let k) = query.fusion else {
            throw TroveError.invalidQuery("a search collection fuses with reciprocal rank fusion")
        }
        guard query.offset >= 0 else { throw TroveError.invalidQuery("offset must be >= 0, got \(query.offset)") }
        let filter: SearchFilter
        if case .all = query.filter {
            filter = SearchFilter()
        } else {
            let condition = try FilterCompiler(resolver: FieldResolver(schema: Self.querySchema)).compile(query.filter)
            filter = SearchFilter(sql: condition.sql, bindings: condition.bindings)
        }
        let topK = (query.limit ?? 10) + query.offset
        let results: [SearchResult]
        switch (query.vectorLegs.first, query.textLeg) {
        case (let vector?, let text?):
            let fusion = Fusion(k: k, vectorWeight: vector.weight, textWeight: text.weight, mmrLambda: query.mmrLambda)
            results = try await searchHybrid(text: text.query, vector: vector.vector, topK: topK, filter: filter, fusion: fusion)
        case (let vector?, nil):
            guard query.mmrLambda == nil else { throw TroveError.invalidQuery("MMR needs a vector and a text leg on a search collection") }
            results = try await search(vector: vector.vector, topK: topK, filter: filter)
        case (nil, let text?):
            guard query.mmrLambda == nil else { throw TroveError.invalidQuery("MMR needs a vector leg") }
            results = try await searchText(text.query, topK: topK, filter: filter)
        case (nil, nil):
            results = []
        }
        return Array(results.dropFirst(query.offset))
    }
}
