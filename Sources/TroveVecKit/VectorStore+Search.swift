import Trove

/// A search's row before it becomes a result: its columns and its distance (or BM25 score).
struct RankedRow: Sendable {
    var id: Int
    var content: String
    var source: String
    var metadata: String?
    var distance: Double
}

/// One ranked list of a search: the vector or the text one.
enum RankedLeg: Sendable {
    case vector([Float])
    case text(String)

    /// The engine's query for this list over the rows passing `filter`, `depth` rows deep.
    func query(_ filter: Filter, depth: Int) -> Query {
        let query = Query(filter).select(StoreSchema.resultFields).limit(depth)
        return switch self {
        case .vector(let vector): query.nearest(to: vector, in: StoreSchema.embedding)
        case .text(let text): query.matching(.fts5(text))
        }
    }

    func row(_ hit: Hit<Document>) -> RankedRow {
        let (id, content, source, metadata) = StoreSchema.row(hit.record)
        let distance: Double? =
            switch self {
            case .vector: hit.distances.first ?? nil
            case .text: hit.bm25
            }
        return RankedRow(
            id: id, content: content, source: source, metadata: metadata, distance: distance ?? 0)
    }

    /// The first `count` rows of this list that pass `fragment`.
    ///
    /// Without a fragment (or with one the engine applies as a filter) the engine's top `count`
    /// is the answer. With one that reads `distance`, the list is ranked
    /// deeper until `count` rows pass or the list ends: the engine's ranking is exact (a flat
    /// scan, ties by id), so a deeper list starts with the shallower one and only its new rows
    /// are checked.
    ///
    /// - Complexity: with a fragment, O(log₄(depth needed / count)) searches.
    func rows(
        count: Int, filter: Filter, fragment: WhereFragment?, documents: DocumentReader,
        transaction: ReadTransaction
    ) throws -> [RankedRow] {
        guard let fragment else {
            return try documents.search(query(filter, depth: count)).map(row)
        }
        var kept: [RankedRow] = []
        var checked = 0
        var depth = count
        while true {
            let rows = try documents.search(query(filter, depth: depth)).map(row)
            let fresh = rows[min(checked, rows.count)...]
            let passing = try fragment.passing(fresh, on: transaction)
            kept += fresh.filter { passing.contains($0.id) }
            checked = rows.count
            if kept.count >= count || rows.count < depth || depth == VectorStore.maxTopK {
                return Array(kept.prefix(count))
            }
            depth = min(VectorStore.maxTopK, depth * 4)
        }
    }
}

extension VectorStore {
    /// The rows nearest to `vector`, nearest first, `distance` ascending.
    ///
    /// ```swift
    /// let hits = try await store.search(vector: query, topK: 20,
    ///                                   where: "json_extract(metadata, '$.lang') = ?",
    ///                                   bindings: [.text("en")])
    /// ```
    ///
    /// - Parameters:
    ///   - vector: the query embedding, `dimension` long.
    ///   - topK: how many rows, 1 through ``maxTopK``.
    ///   - source: only rows with this source.
    ///   - sql: only rows passing this SQL condition over `id`, `content`, `source`, `metadata`
    ///     and `distance`; values go in `bindings`, as `?`.
    ///   - bindings: the values of the condition's `?` placeholders, in order.
    /// - Returns: up to `topK` rows; fewer only when fewer pass the filters (they apply before
    ///   ranking).
    /// - Throws: ``SQLiteError/dimensionMismatch(expected:got:)``, ``SQLiteError/invalidTopK(_:)``,
    ///   ``SQLiteError/prepareFailed(code:message:)`` for a condition that is not valid SQL,
    ///   ``SQLiteError/stepFailed(code:message:)`` for one that fails on a row.
    /// - Complexity: an exact scan of the rows passing `source`.
    public func search(
        vector: [Float], topK: Int = 5, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try check(vector)
        try check(topK: topK)
        return try await ranked(
            [.vector(vector)], count: topK, source: source, where: sql, bindings: bindings)[0]
            .map(SearchResult.init)
    }

    /// `[Double]` variant of ``search(vector:topK:source:where:bindings:)``.
    @_disfavoredOverload
    public func search(
        vector: [Double], topK: Int = 5, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await search(
            vector: vector.map(Float.init), topK: topK, source: source, where: sql,
            bindings: bindings)
    }

    /// The rows matching an FTS5 query (terms, `"phrases"`, `AND`/`OR`/`NOT`, `prefix*`), best
    /// first, with the BM25 score in `distance` (negative; lower is better).
    ///
    /// ```swift
    /// let hits = try await store.searchText("mitochondria", topK: 5)
    /// ```
    ///
    /// - Parameters: as ``search(vector:topK:source:where:bindings:)``, with `distance` in the
    ///   condition being the BM25 score.
    /// - Throws: ``SQLiteError/lexicalSearchDisabled``, ``SQLiteError/invalidTopK(_:)``,
    ///   ``SQLiteError/invalidTextQuery(_:detail:)``, and the condition's errors.
    public func searchText(
        _ query: String, topK: Int = 5, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        guard lexicalSearch else { throw SQLiteError.lexicalSearchDisabled }
        try check(topK: topK)
        return try await ranked(
            [.text(query)], count: topK, source: source, where: sql, bindings: bindings)[0]
            .map(SearchResult.init)
    }

    /// The vector and the text results fused with reciprocal rank fusion (k = 60): each list is
    /// `4 × topK` rows deep, and a row near the top of both ranks first.
    ///
    /// ```swift
    /// for hit in try await store.searchHybrid(text: question, vector: query, topK: 5) {
    ///     print(hit.content, hit.score, hit.vectorRank ?? "-", hit.textRank ?? "-")
    /// }
    /// ```
    ///
    /// - Parameters: as ``search(vector:topK:source:where:bindings:)``; the condition filters each
    ///   list with that list's `distance` (vector distance, BM25 score).
    /// - Throws: as ``search(vector:topK:source:where:bindings:)`` and
    ///   ``searchText(_:topK:source:where:bindings:)``.
    public func searchHybrid(
        text: String, vector: [Float], topK: Int = 5, source: String? = nil,
        where sql: String? = nil,
        bindings: [SQLValue] = []
    ) async throws -> [HybridSearchResult] {
        guard lexicalSearch else { throw SQLiteError.lexicalSearchDisabled }
        try check(topK: topK)
        try check(vector)
        let depth = min(4 * topK, Self.maxTopK)
        let lists = try await ranked(
            [.vector(vector), .text(text)], count: depth, source: source, where: sql,
            bindings: bindings)
        return Self.fused(vector: lists[0], text: lists[1], count: topK)
    }

    /// `[Double]` variant of ``searchHybrid(text:vector:topK:source:where:bindings:)``.
    @_disfavoredOverload
    public func searchHybrid(
        text: String, vector: [Double], topK: Int = 5, source: String? = nil,
        where sql: String? = nil,
        bindings: [SQLValue] = []
    ) async throws -> [HybridSearchResult] {
        try await searchHybrid(
            text: text, vector: vector.map(Float.init), topK: topK, source: source, where: sql,
            bindings: bindings)
    }

    // MARK: Shared

    /// Ranks each list on one snapshot (a reader connection).
    private func ranked(
        _ legs: [RankedLeg], count: Int, source: String?, where sql: String?, bindings: [SQLValue]
    ) async throws -> [[RankedRow]] {
        let name = tableName
        let filter = StoreSchema.filter(source: source)
        let fragment = sql.map {
            WhereFragment(condition: $0, bindings: bindings.map(\.trove), table: name)
        }
        return try await translatingErrors {
            try await database.read { transaction in
                let documents = try transaction.documents(name)
                var filter = filter
                var rowFragment = fragment
                if let fragment, fragment.readsTableOnly(on: transaction) {
                    // One engine search per list, the condition applied before ranking.
                    filter = filter && fragment.filter
                    rowFragment = nil
                } else {
                    try fragment?.checkCompiles(on: transaction)
                }
                return try legs.map { leg in
                    try leg.rows(
                        count: count, filter: filter, fragment: rowFragment, documents: documents,
                        transaction: transaction)
                }
            }
        }
    }

    /// Reciprocal rank fusion of the two lists: Σ 1 / (60 + rank), ties by id.
    ///
    /// The engine fuses its own legs too, but one `Query` has one filter for all of them, while a
    /// `where:` condition that reads `distance` filters each list differently; fusing here keeps
    /// SQLiteVecKit's per-list meaning with or without a condition.
    private static func fused(vector: [RankedRow], text: [RankedRow], count: Int)
        -> [HybridSearchResult]
    {
        let k = 60.0
        var rows: [Int: (row: RankedRow, score: Double, vectorRank: Int?, textRank: Int?)] = [:]
        for (offset, row) in vector.enumerated() {
            rows[row.id] = (row, 1 / (k + Double(offset + 1)), offset + 1, nil)
        }
        for (offset, row) in text.enumerated() {
            let contribution = 1 / (k + Double(offset + 1))
            if var fused = rows[row.id] {
                fused.score += contribution
                fused.textRank = offset + 1
                rows[row.id] = fused
            } else {
                rows[row.id] = (row, contribution, nil, offset + 1)
            }
        }
        return rows.values
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.row.id < $1.row.id }
            .prefix(count)
            .map {
                HybridSearchResult(
                    id: $0.row.id, content: $0.row.content, source: $0.row.source,
                    metadata: $0.row.metadata,
                    score: $0.score, vectorRank: $0.vectorRank, textRank: $0.textRank)
            }
    }

    private func check(_ vector: [Float]) throws(SQLiteError) {
        guard vector.count == dimension else {
            throw .dimensionMismatch(expected: dimension, got: vector.count)
        }
    }

    private func check(topK: Int) throws(SQLiteError) {
        guard (1...Self.maxTopK).contains(topK) else { throw .invalidTopK(topK) }
    }
}

extension SearchResult {
    init(_ row: RankedRow) {
        self.init(
            id: row.id, content: row.content, source: row.source, metadata: row.metadata,
            distance: row.distance)
    }
}
