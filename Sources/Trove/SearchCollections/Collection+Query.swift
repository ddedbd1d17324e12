import Foundation
import TroveSQLite

extension Collection {
    /// Runs a ranked ``Query`` — the same value document collections take — on this search
    /// collection: its filter over `content`, `source`, `metadata` paths, `embedding`,
    /// `created_at`, `updated_at` and `id` (the preset schema, DocumentLayout+Preset.swift); a
    /// vector leg on `embedding`; a text leg on `content`; fused by RRF, with MMR when asked.
    /// The other search methods are conveniences for the common cases.
    ///
    /// ```swift
    /// let hits = try await notes.search(Query(Field("source") == "a.pdf" && Field("metadata", path: "$.page") <= 10)
    ///     .nearest(to: q, in: "embedding").matching(.typed("router reset")).limit(5))
    /// ```
    /// - Throws: ``TroveError/invalidQuery(_:)`` for parts a ranked search cannot run
    ///   (an order, a cursor, a projection, normalised-score fusion, an unranked query: run
    ///   those with ``fetch(_:)``), ``TroveError/notVectorField(field:type:)`` /
    ///   ``TroveError/notTextField(field:fullTextFields:)`` for legs on other columns, and the
    ///   errors of the underlying searches.
    public func search(_ query: Query) async throws -> [SearchResult] {
        try await database.withReadingEngine(name) { try $0.search(query) }
    }
}

extension CollectionEngine {
    /// A ranked query on this search collection (``Collection/search(_:)``).
    func search(_ query: Query) throws -> [SearchResult] {
        guard query.isRanked else {
            throw TroveError.invalidQuery("a search collection's search() runs ranked queries; add a vector or text leg, or use fetch()")
        }
        guard query.order.isEmpty, query.cursor == nil, query.projection == nil else {
            throw TroveError.invalidQuery("a ranked query is ordered by its score and has no cursor or projection; use fetch() for those")
        }
        guard query.vectorLegs.count <= 1 else {
            throw TroveError.invalidQuery("a search collection has one vector column, embedding")
        }
        let schema = DocumentSchema.preset(configuration)
        if let leg = query.vectorLegs.first, leg.field != "embedding" {
            throw TroveError.notVectorField(field: leg.field, type: schema.field(leg.field)?.type.description ?? "unknown")
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
            // Through the document view where there is one (so link filters work here too).
            let condition = try state.documents?.condition(query.filter, on: connection)
                ?? FilterCompiler(resolver: FieldResolver(schema: schema)).compile(query.filter)
            filter = SearchFilter(sql: condition.sql, bindings: condition.bindings)
        }
        let topK = (query.limit ?? 10) + query.offset
        let results: [SearchResult]
        switch (query.vectorLegs.first, query.textLeg) {
        case (let vector?, let text?):
            let fusion = Fusion(k: k, vectorWeight: vector.weight, textWeight: text.weight, mmrLambda: query.mmrLambda)
            results = try searchHybrid(text: text.query, vector: vector.vector, topK: topK, filter: filter, fusion: fusion, snippet: nil)
        case (let vector?, nil):
            guard query.mmrLambda == nil else { throw TroveError.invalidQuery("MMR needs a vector and a text leg on a search collection") }
            results = try searchVector(vector.vector, topK: topK, filter: filter)
        case (nil, let text?):
            guard query.mmrLambda == nil else { throw TroveError.invalidQuery("MMR needs a vector leg") }
            results = try searchText(text.query, topK: topK, filter: filter, snippet: nil)
        case (nil, nil):
            results = []
        }
        return Array(results.dropFirst(query.offset))
    }
}
