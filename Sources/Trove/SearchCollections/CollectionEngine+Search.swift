import Foundation
import TroveSQLite
import TroveVectors

/// One row as stored, without its vector.
struct StoredRow {
    var content: String
    var source: String
    var metadata: String?
}

extension CollectionEngine {
    func check(topK: Int) throws {
        guard (1...Self.maxTopK).contains(topK) else { throw TroveError.invalidTopK(topK, maximum: Self.maxTopK) }
    }

    /// Ids of rows passing the filter, or nil when every row passes; computed once per search
    /// (``SearchScope``), however many legs ask.
    func candidates(_ filter: SearchFilter) throws -> [Int64]? {
        if let known = searchScope?.candidates[filter] { return known.ids }
        let ids = try evaluateCandidates(filter)
        searchScope?.candidates[filter] = SearchScope.CandidateIDs(ids: ids)
        return ids
    }

    private func evaluateCandidates(_ filter: SearchFilter) throws -> [Int64]? {
        guard let (sql, bindings) = filter.candidateQuery(table: schema.table)
        else { return nil }
        let statement: Statement
        do {
            statement = try connection.prepare(sql)
        } catch let error as SQLiteError {
            throw TroveError.invalidFilter(sql: filter.sql ?? "", reason: error.message)
        }
        guard statement.isReadOnly else {
            throw TroveError.invalidFilter(sql: filter.sql ?? "", reason: "a filter must not write")
        }
        var ids: [Int64] = []
        do {
            try statement.forEachRow(bindings) { ids.append($0.int64(at: 0)) }
        } catch let error as SQLiteError where error.code == .error || error.code == .range {
            throw TroveError.invalidFilter(sql: filter.sql ?? "", reason: error.message)
        }
        return ids
    }

    /// Exact k nearest rows passing the filter, nearest first.
    func vectorNeighbors(_ query: [Float], k: Int, filter: SearchFilter) throws -> [Neighbor] {
        if configuration.index.isApproximate { return try plannedNeighbors(query, k: k, filter: filter, exact: false).neighbors }
        try validate(vector: query)
        let index = try catchUp()
        if let ids = try candidates(filter) {
            return index.search(query, k: k, among: ids)
        }
        return index.search(query, k: k)
    }

    /// Up to k (id, bm25) pairs of rows matching the text and passing the filter, best first.
    func textHits(_ query: TextQuery, k: Int, filter: SearchFilter) throws -> [(id: Int64, bm25: Double)] {
        guard configuration.lexicalSearch else { throw TroveError.lexicalSearchDisabled(collection: name) }
        // Typed queries: the in-memory BM25 index (CollectionEngine+TextIndex.swift).
        if let fast = try fastTextHits(query, k: k, filter: filter) { return fast.map { (id: $0.id, bm25: $0.bm25) } }
        guard let expression = matchExpression(for: query) else { return [] }
        var sql = "SELECT rowid, rank FROM \(schema.fts) WHERE \(schema.fts) MATCH ?"
        var bindings: [SQLValue] = [.text(expression)]
        if let (candidateSQL, candidateBindings) = filter.candidateQuery(table: schema.table) {
            // The filter is checked on its own first, so that an error from the combined
            // statement below can only be the text query's (no guessing from SQLite's message).
            try validate(filter: filter, sql: candidateSQL, bindings: candidateBindings)
            sql += " AND rowid IN (\(candidateSQL))"
            bindings += candidateBindings
        }
        sql += " ORDER BY rank LIMIT ?"
        bindings.append(.integer(Int64(k)))
        let statement: Statement
        do {
            statement = filter.isEmpty ? try connection.cachedStatement(sql) : try connection.prepare(sql)
        } catch let error as SQLiteError {
            throw TroveError.invalidFilter(sql: filter.sql ?? "", reason: error.message)
        }
        var hits: [(id: Int64, bm25: Double)] = []
        do {
            try statement.forEachRow(bindings) { s in hits.append((s.int64(at: 0), s.double(at: 1))) }
        } catch let error as SQLiteError where error.code == .error || error.code == .range {
            throw TroveError.invalidTextQuery(query: query.text, reason: error.message)
        }
        return hits
    }

    /// Prepares and binds a filter's candidate query alone: a SQL error there is the filter's.
    func validate(filter: SearchFilter, sql: String, bindings: [SQLValue]) throws {
        do {
            let statement = try connection.prepare(sql)
            guard statement.isReadOnly else {
                throw TroveError.invalidFilter(sql: filter.sql ?? "", reason: "a filter must not write")
            }
            try statement.bind(bindings)
        } catch let error as SQLiteError {
            throw TroveError.invalidFilter(sql: filter.sql ?? "", reason: error.message)
        }
    }

    /// The stored rows for these ids.
    func rows(for ids: [Int64]) throws -> [Int64: StoredRow] {
        guard !ids.isEmpty else { return [:] }
        let statement = try connection.cachedStatement(
            "SELECT id, content, source, metadata FROM \(schema.table) WHERE id IN (SELECT value FROM json_each(?))")
        var rows: [Int64: StoredRow] = [:]
        rows.reserveCapacity(ids.count)
        try statement.forEachRow([.text(Self.jsonArray(ids))]) { s in
            rows[s.int64(at: 0)] = StoredRow(content: s.string(at: 1) ?? "", source: s.string(at: 2) ?? "", metadata: s.string(at: 3))
        }
        return rows
    }

    /// FTS5 snippets of these rows for the query.
    func snippets(for ids: [Int64], query: TextQuery, style: SnippetStyle) throws -> [Int64: String] {
        guard !ids.isEmpty, configuration.lexicalSearch, let expression = matchExpression(for: query) else { return [:] }
        // One statement per row with `rowid = ?`: FTS5 seeks each term's doclist to that rowid,
        // where `rowid IN (…)` made it walk every doclist of an OR query to the end.
        let statement = try connection.cachedStatement(
            """
            SELECT snippet(\(schema.fts), 0, ?, ?, ?, ?) FROM \(schema.fts)
            WHERE \(schema.fts) MATCH ? AND rowid = ?
            """)
        var out: [Int64: String] = [:]
        for id in Set(ids) {
            try statement.forEachRow([
                .text(style.open), .text(style.close), .text(style.ellipsis), .integer(Int64(style.words)),
                .text(expression), .integer(id),
            ]) { s in out[id] = s.string(at: 0) }
        }
        return out
    }

    static func jsonArray(_ ids: [Int64]) -> String {
        var text = "["
        text.reserveCapacity(ids.count * 8 + 2)
        for (offset, id) in ids.enumerated() {
            if offset > 0 { text += "," }
            text += String(id)
        }
        return text + "]"
    }

    // MARK: The three searches (each in one read snapshot)

    /// The in-memory index a text query uses: the BM25 index for typed queries it can answer.
    func textIndexes(for query: TextQuery) -> [any DerivedIndex] {
        guard query.kind == .typed, let text = state.text else { return [] }
        return [text]
    }

    func searchVector(_ query: [Float], topK: Int, filter: SearchFilter) throws -> [SearchResult] {
        try check(topK: topK)
        return try inSearchScope(loading: [state.vectors]) {
            let neighbors = try vectorNeighbors(query, k: topK, filter: filter)
            let stored = try self.rows(for: neighbors.map(\.id))
            return neighbors.enumerated().compactMap { offset, neighbor in
                guard let row = stored[neighbor.id] else { return nil }
                return SearchResult(
                    id: neighbor.id, content: row.content, source: row.source, metadata: row.metadata,
                    score: Double(configuration.metric.score(distance: neighbor.distance)),
                    distance: Double(neighbor.distance), vectorRank: offset + 1)
            }
        }
    }

    func searchText(_ query: TextQuery, topK: Int, filter: SearchFilter, snippet: SnippetStyle?) throws -> [SearchResult] {
        try check(topK: topK)
        return try inSearchScope(loading: textIndexes(for: query)) {
            let hits = try textHits(query, k: topK, filter: filter)
            let ids = hits.map(\.id)
            let stored = try self.rows(for: ids)
            let snippetByID = try snippet.map { try self.snippets(for: ids, query: query, style: $0) } ?? [:]
            return hits.enumerated().compactMap { offset, hit in
                guard let row = stored[hit.id] else { return nil }
                return SearchResult(
                    id: hit.id, content: row.content, source: row.source, metadata: row.metadata,
                    score: -hit.bm25, bm25: hit.bm25, textRank: offset + 1, snippet: snippetByID[hit.id])
            }
        }
    }

    func searchHybrid(
        text: TextQuery, vector: [Float], topK: Int, filter: SearchFilter, fusion: Fusion, snippet: SnippetStyle?
    ) throws -> [SearchResult] {
        try check(topK: topK)
        try fusion.validate()
        guard configuration.lexicalSearch else { throw TroveError.lexicalSearchDisabled(collection: name) }
        try validate(vector: vector)
        let depth = fusion.depth(topK: topK, maximum: Self.maxTopK)
        // Every index the legs and the rerank use, caught up together.
        var needed = [state.vectors] + textIndexes(for: text)
        if fusion.minimumVectorScore != nil || fusion.mmrLambda != nil, !configuration.index.readsVectorsFromTable {
            needed.append(state.flat)
        }
        return try inSearchScope(loading: needed) {
            let neighbors = try vectorNeighbors(vector, k: depth, filter: filter)
            let hits = try votingTextHits(text, k: depth, filter: filter, fusion: fusion)
            let fused = try rerank(fusion.fuse(vector: neighbors.map(\.id), text: hits.map(\.id)), query: vector,
                                   fusion: fusion, topK: topK)
            let ids = fused.map(\.id)
            let stored = try self.rows(for: ids)
            let snippetByID = try snippet.map { try self.snippets(for: ids, query: text, style: $0) } ?? [:]
            return fused.compactMap { f in
                guard let row = stored[f.id] else { return nil }
                return SearchResult(
                    id: f.id, content: row.content, source: row.source, metadata: row.metadata, score: f.score,
                    distance: f.vectorRank.map { Double(neighbors[$0 - 1].distance) },
                    bm25: f.textRank.map { hits[$0 - 1].bm25 },
                    vectorRank: f.vectorRank, textRank: f.textRank, snippet: snippetByID[f.id])
            }
        }
    }
}
