import TroveSQLite

// The search overloads that had a second spelling of something the kept forms already say: the
// filter as `source:where:bindings:` instead of one ``SearchFilter``, a text query as a `String`
// in FTS5 syntax instead of a ``TextQuery``, a `[Double]` vector, `search(...exact:)` next to
// ``Collection/searchExplained(vector:topK:filter:exact:efSearch:)``. They stay so existing apps
// keep compiling, each forwarding to the kept form with the same arguments (so the same results;
// DeprecatedSearchTests checks each one). They are `@_disfavoredOverload` so a call both a kept
// and a deprecated overload can take (`search(vector: q, topK: 5)`) picks the kept one. Among
// themselves, the `[Double]` and FTS5-string ones are generic (`some Sequence<Double>`,
// `some StringProtocol`), which ranks them below the `[Float]` / `TextQuery` ones: with all of
// them disfavored, `search(vector: [1, 0], source: "a")` would otherwise be ambiguous.
//
// ``VectorStore`` keeps its own `source:where:bindings:` / FTS5-string / `[Double]` methods:
// they mirror SQLiteVecKit one for one, which is that type's reason to exist.

extension Collection {
    /// Deprecated: `[Double]` variant of ``insert(content:source:metadata:vector:)``.
    @available(*, deprecated, renamed: "insert(content:source:metadata:vector:)",
               message: "pass the vector as [Float] (vector.map(Float.init))")
    @_disfavoredOverload @discardableResult
    public func insert(content: String, source: String = "", metadata: String? = nil, vector: [Double]) async throws -> Int64 {
        try await insert(content: content, source: source, metadata: metadata, vector: vector.map(Float.init))
    }

    /// Deprecated: the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "search(vector:topK:filter:)",
               message: "pass filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func search(
        vector: [Float], topK: Int = 10, source: String? = nil, where sql: String? = nil, bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await search(vector: vector, topK: topK, filter: SearchFilter(source: source, sql: sql, bindings: bindings))
    }

    /// Deprecated: a `[Double]` vector and the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "search(vector:topK:filter:)",
               message: "pass the vector as [Float] and filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func search(
        vector: some Sequence<Double>, topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await search(vector: vector.map(Float.init), topK: topK,
                         filter: SearchFilter(source: source, sql: sql, bindings: bindings))
    }

    /// Deprecated: the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "searchText(_:topK:filter:snippet:)",
               message: "pass filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func searchText(
        _ query: TextQuery, topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await searchText(query, topK: topK, filter: SearchFilter(source: source, sql: sql, bindings: bindings),
                             snippet: snippet)
    }

    /// Deprecated: the query as a `String` in FTS5 syntax.
    @available(*, deprecated, renamed: "searchText(_:topK:filter:snippet:)",
               message: "pass a TextQuery (.fts5(query) or .typed(text)) and filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func searchText(
        _ fts5Query: some StringProtocol, topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await searchText(.fts5(String(fts5Query)), topK: topK,
                             filter: SearchFilter(source: source, sql: sql, bindings: bindings), snippet: snippet)
    }

    /// Deprecated: the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "searchHybrid(text:vector:topK:filter:fusion:snippet:)",
               message: "pass filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func searchHybrid(
        text: TextQuery, vector: [Float], topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], fusion: Fusion = Fusion(), snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await searchHybrid(text: text, vector: vector, topK: topK,
                               filter: SearchFilter(source: source, sql: sql, bindings: bindings),
                               fusion: fusion, snippet: snippet)
    }

    /// Deprecated: the text as a `String` in FTS5 syntax.
    @available(*, deprecated, renamed: "searchHybrid(text:vector:topK:filter:fusion:snippet:)",
               message: "pass a TextQuery (.fts5(text) or .typed(text)) and filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func searchHybrid(
        text: some StringProtocol, vector: [Float], topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], fusion: Fusion = Fusion(), snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await searchHybrid(text: .fts5(String(text)), vector: vector, topK: topK,
                               filter: SearchFilter(source: source, sql: sql, bindings: bindings),
                               fusion: fusion, snippet: snippet)
    }

    /// Deprecated: a `[Double]` vector.
    @available(*, deprecated, renamed: "searchHybrid(text:vector:topK:filter:fusion:snippet:)",
               message: "pass the vector as [Float] and filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func searchHybrid(
        text: TextQuery, vector: some Sequence<Double>, topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], fusion: Fusion = Fusion(), snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await searchHybrid(text: text, vector: vector.map(Float.init), topK: topK,
                               filter: SearchFilter(source: source, sql: sql, bindings: bindings),
                               fusion: fusion, snippet: snippet)
    }

    /// Deprecated: text-in search with the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "search(_:topK:mode:filter:snippet:)",
               message: "pass filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func search(
        _ text: String, topK: Int = 10, mode: SearchMode = .hybrid, source: String? = nil,
        where sql: String? = nil, bindings: [SQLValue] = [], snippet: SnippetStyle? = nil
    ) async throws -> [SearchResult] {
        try await search(text, topK: topK, mode: mode, filter: SearchFilter(source: source, sql: sql, bindings: bindings),
                         snippet: snippet)
    }

    /// Deprecated: `search(...exact:)` is ``searchExplained(vector:topK:filter:exact:efSearch:)``'s results.
    @available(*, deprecated, renamed: "searchExplained(vector:topK:filter:exact:efSearch:)",
               message: "use searchExplained(vector:topK:filter:exact:).results")
    @_disfavoredOverload
    public func search(
        vector: [Float], topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], exact: Bool
    ) async throws -> [SearchResult] {
        try await searchExplained(vector: vector, topK: topK,
                                  filter: SearchFilter(source: source, sql: sql, bindings: bindings), exact: exact).results
    }

    /// Deprecated: `search(...exact:)` is ``searchExplained(vector:topK:filter:exact:efSearch:)``'s results.
    @available(*, deprecated, renamed: "searchExplained(vector:topK:filter:exact:efSearch:)",
               message: "use searchExplained(vector:topK:filter:exact:).results")
    @_disfavoredOverload
    public func search(vector: [Float], topK: Int = 10, filter: SearchFilter, exact: Bool) async throws -> [SearchResult] {
        try await searchExplained(vector: vector, topK: topK, filter: filter, exact: exact).results
    }

    /// Deprecated: the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "searchExplained(vector:topK:filter:exact:efSearch:)",
               message: "pass filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func searchExplained(
        vector: [Float], topK: Int = 10, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], exact: Bool = false, efSearch: Int? = nil
    ) async throws -> ExplainedSearch {
        try await searchExplained(vector: vector, topK: topK,
                                  filter: SearchFilter(source: source, sql: sql, bindings: bindings),
                                  exact: exact, efSearch: efSearch)
    }

    /// Deprecated: the filter as `source:where:bindings:`.
    @available(*, deprecated, renamed: "explain(topK:filter:exact:)",
               message: "pass filter: SearchFilter(source:sql:bindings:)")
    @_disfavoredOverload
    public func explain(
        topK: Int = 10, source: String? = nil, where sql: String? = nil, bindings: [SQLValue] = [],
        exact: Bool = false
    ) async throws -> SearchPlan {
        try await explain(topK: topK, filter: SearchFilter(source: source, sql: sql, bindings: bindings), exact: exact)
    }
}

extension VectorStore {
    /// Deprecated: SQLiteVecKit has no ``TextQuery``; its FTS5-string form stays here, and the
    /// Trove form is on the store's collection.
    @available(*, deprecated, message: "use collection.searchText(_:topK:filter:snippet:), or searchText with an FTS5 string")
    public func searchText(
        _ query: TextQuery, topK: Int = 5, source: String? = nil, where sql: String? = nil, bindings: [SQLValue] = []
    ) async throws -> [SearchResult] {
        try await collection.searchText(query, topK: topK, filter: SearchFilter(source: source, sql: sql, bindings: bindings))
    }

    /// Deprecated: SQLiteVecKit has no ``TextQuery``; its FTS5-string form stays here, and the
    /// Trove form is on the store's collection.
    @available(*, deprecated,
               message: "use collection.searchHybrid(text:vector:topK:filter:fusion:snippet:), or searchHybrid with an FTS5 string")
    public func searchHybrid(
        text: TextQuery, vector: [Float], topK: Int = 5, source: String? = nil, where sql: String? = nil,
        bindings: [SQLValue] = [], fusion: Fusion = Fusion()
    ) async throws -> [SearchResult] {
        try await collection.searchHybrid(text: text, vector: vector, topK: topK,
                                          filter: SearchFilter(source: source, sql: sql, bindings: bindings), fusion: fusion)
    }
}
