import Foundation
import TroveSQLite
import TroveText
import TroveVectors

extension DocumentStore {
    /// Where a ranked query's vector legs read vectors from.
    enum VectorSource {
        /// The shared in-memory indexes, caught up on this connection's snapshot first.
        case indexes
        /// An exact scan of the table on this connection: inside a write transaction, whose
        /// uncommitted rows the shared indexes must never see.
        case table
    }

    /// The legs' hits before fusion.
    struct LegHits {
        var vector: [[Neighbor]]
        var text: [(rid: Int64, bm25: Double)]?
        var geo: [(rid: Int64, kilometres: Double)]?
    }

    /// Runs a ranked query: filter → candidates → legs → fusion → MMR → offset/limit → rows.
    func search(_ query: Query, source: VectorSource, on connection: Connection) throws
        -> [Hit<Document>]
    {
        let selection = try selection(query.projection)
        return try connection.transaction(.deferred) {
            let hits = try rankedHits(query, source: source, on: connection)
            let rows = try documents(rids: hits.map(\.record), selection: selection, on: connection)
            return hits.compactMap { hit in rows[hit.record].map { row in hit.map { _ in row } } }
        }
    }

    /// One result of a ranked query before its row is read: its row id and how each leg saw it.
    typealias RankedHit = Hit<Int64>

    /// The ranked page with each hit's per-leg ranks and scores (and snippets when asked), without
    /// the rows; call inside the read transaction the query uses. Typed facades read the rows
    /// their own way (``SearchCollection`` keeps metadata as the text it was given).
    func rankedHits(_ query: Query, source: VectorSource, on connection: Connection) throws
        -> [RankedHit]
    {
        let (page, legs) = try ranked(query, source: source, on: connection)
        let snippets =
            try query.snippet.map {
                try self.snippets(
                    rids: page.map(\.id), leg: query.textLeg!, style: $0, on: connection)
            } ?? [:]
        // Each hit's ranks: the vector legs in order, then the text leg, then the geo leg.
        let textSlot = query.textLeg == nil ? nil : query.vectorLegs.count
        let geoSlot = query.geoLeg == nil ? nil : query.vectorLegs.count + (textSlot == nil ? 0 : 1)
        return page.map { hit in
            let ranks = Array(hit.ranks.prefix(query.vectorLegs.count))
            let textRank = textSlot.flatMap { hit.ranks[$0] }
            let geoRank = geoSlot.flatMap { hit.ranks[$0] }
            return RankedHit(
                record: hit.id, score: hit.score, vectorRanks: ranks,
                distances: ranks.enumerated().map { leg, rank in
                    rank.map { Double(legs.vector[leg][$0 - 1].distance) }
                },
                textRank: textRank, bm25: textRank.map { legs.text![$0 - 1].bm25 },
                geoRank: geoRank, kilometres: geoRank.map { legs.geo![$0 - 1].kilometres },
                snippet: snippets[hit.id])
        }
    }

    /// The ranked page (row ids, fused scores, per-leg ranks) and the legs' hits, without the
    /// rows; call inside the read transaction the query uses.
    func ranked(_ query: Query, source: VectorSource, on connection: Connection) throws
        -> (page: [RankFusion.FusedHit], legs: LegHits)
    {
        guard query.isRanked else {
            throw TroveError.invalidQuery("search() needs a vector or text leg; use fetch()")
        }
        guard query.order.isEmpty, query.cursor == nil else {
            throw TroveError.invalidQuery(
                "a ranked query is ordered by its score and pages with offset, not order or cursor")
        }
        let k = query.limit ?? 10
        guard (1...Query.maximumLimit).contains(k) else {
            throw TroveError.invalidLimit(k, maximum: Query.maximumLimit)
        }
        guard query.offset >= 0 else {
            throw TroveError.invalidQuery("offset must be >= 0, got \(query.offset)")
        }
        let wanted = k + query.offset
        let legCount =
            query.vectorLegs.count + (query.textLeg == nil ? 0 : 1) + (query.geoLeg == nil ? 0 : 1)
        // One leg: its own top `wanted`. Several: deeper, so that agreement between legs can
        // lift a document that no single leg ranks near the top.
        let depth = legCount == 1 ? wanted : min(Query.maximumLimit, max(50, 4 * wanted))
        try validateLegs(query)
        let allowed = try candidates(query.filter, on: connection)
        var legs = LegHits(vector: [], text: nil, geo: nil)
        if source == .indexes {
            // Every in-memory index the legs use, caught up together: one read of the log.
            var needed: [any DerivedIndex] = query.vectorLegs.map { indexes.vectors[$0.field]! }
            if let leg = query.textLeg, let memory = indexes.text, memory.answers(leg) {
                needed.append(memory)
            }
            if !needed.isEmpty { try indexes.catchUp(connection, loading: needed) }
        }
        if !query.vectorLegs.isEmpty {
            let options = VectorSearchOptions(exact: query.exact, efSearch: query.efSearch)
            for leg in query.vectorLegs {
                legs.vector.append(
                    try vectorHits(
                        leg, k: leg.k ?? depth, options: options, candidates: allowed,
                        source: source, on: connection))
            }
        }
        if let leg = query.textLeg {
            // In fused queries a typed text hit votes only when it covers enough of the query's words.
            let coverage = legCount > 1 ? (leg.minimumCoverage ?? Self.defaultMinimumCoverage) : 0
            legs.text = try textHits(
                leg, k: leg.k ?? depth, minimumCoverage: coverage, filter: query.filter,
                candidates: allowed,
                source: source,
                on: connection)
        }
        if let leg = query.geoLeg {
            legs.geo = try geoHits(leg, k: depth, filter: query.filter, on: connection)
        }
        var fused = fuse(legs, query: query)
        if let minimum = query.minimumScore {
            fused = try threshold(fused, query: query, minimum: minimum, on: connection)
        }
        if let lambda = query.mmrLambda {
            fused = try diversify(
                fused, query: query, lambda: lambda, count: wanted, source: source, on: connection)
        }
        return (Array(fused.dropFirst(query.offset).prefix(k)), legs)
    }

    /// A leg's depth, when the query sets one, is within 1...``Query/maximumLimit``.
    static func check(depth: Int?) throws {
        if let depth, !(1...Query.maximumLimit).contains(depth) {
            throw TroveError.invalidQuery(
                "a leg's k must be in 1...\(Query.maximumLimit), got \(depth)")
        }
    }

    /// A typed text hit's least share of the query's words for it to vote in fusion
    /// (Documentation/PARAMETERS.md, "Fusion").
    static let defaultMinimumCoverage = 2.0 / 3.0

    /// The fused hits whose similarity to the first vector leg's query is at least `minimum`
    /// ("no good match"); a hit without a vector in that field is dropped.
    func threshold(
        _ fused: [RankFusion.FusedHit], query: Query, minimum: Double, on connection: Connection
    ) throws
        -> [RankFusion.FusedHit]
    {
        let leg = query.vectorLegs[0]
        let index = indexes.vectors[leg.field]!
        let table = TableVectors(
            connection: connection, layout: layout, field: leg.field, dimension: index.dimension,
            metric: index.metric)
        let metric = index.metric
        return try fused.filter { hit in
            guard let vector = try table.vector(rid: hit.id) else { return false }
            return Double(metric.score(distance: metric.distance(leg.vector, vector))) >= minimum
        }
    }

    func validateLegs(_ query: Query) throws {
        for leg in query.vectorLegs {
            guard let definition = schema.field(leg.field) else {
                throw TroveError.unknownField(field: leg.field, known: schema.fields.map(\.name))
            }
            guard case .vector(let dimension, _) = definition.type else {
                throw TroveError.notVectorField(field: leg.field, type: definition.type.description)
            }
            guard leg.vector.count == dimension else {
                throw TroveError.dimensionMismatch(expected: dimension, actual: leg.vector.count)
            }
            guard leg.vector.allSatisfy(\.isFinite) else {
                throw TroveError.invalidVector(
                    reason: "the query vector has a NaN or infinite component")
            }
            if case .vector(_, .cosine) = definition.type, leg.vector.allSatisfy({ $0 == 0 }) {
                throw TroveError.invalidVector(
                    reason:
                        "the query vector is zero; it has no direction, so cosine similarity is undefined"
                )
            }
            guard leg.weight >= 0, leg.weight.isFinite else {
                throw TroveError.invalidQuery("leg weights must be finite and >= 0")
            }
            try Self.check(depth: leg.k)
        }
        if let leg = query.textLeg {
            guard let fullText = schema.fullText else {
                throw TroveError.lexicalSearchDisabled(collection: name)
            }
            for field in leg.fields ?? [] where !fullText.fields.contains(field) {
                throw TroveError.notTextField(field: field, fullTextFields: fullText.fields)
            }
            try Self.check(depth: leg.k)
            if let coverage = leg.minimumCoverage, !(0...1).contains(coverage) {
                throw TroveError.invalidQuery(
                    "a text leg's minimum coverage must be in 0...1, got \(coverage)")
            }
            guard leg.weight >= 0, leg.weight.isFinite else {
                throw TroveError.invalidQuery("leg weights must be finite and >= 0")
            }
        }
        if let leg = query.geoLeg {
            guard let definition = schema.field(leg.field) else {
                throw TroveError.unknownField(field: leg.field, known: schema.fields.map(\.name))
            }
            guard definition.type == .point else {
                throw TroveError.typeMismatch(
                    field: leg.field, expected: "a point field", value: "\(definition.type) field")
            }
            _ = try leg.point.validated(field: leg.field)
            if let limit = leg.maximumKilometres, !(limit >= 0 && limit.isFinite) {
                throw TroveError.invalidQuery(
                    "a geo leg's distance limit must be finite and >= 0 km, got \(limit)")
            }
            guard leg.weight >= 0, leg.weight.isFinite else {
                throw TroveError.invalidQuery("leg weights must be finite and >= 0")
            }
        }
        if case .reciprocalRank(let k) = query.fusion, !(k > 0 && k.isFinite) {
            throw TroveError.invalidQuery("RRF k must be > 0, got \(k)")
        }
        if let efSearch = query.efSearch, !(1...100_000).contains(efSearch) {
            throw TroveError.invalidQuery("efSearch must be in 1...100000, got \(efSearch)")
        }
        if let minimum = query.minimumScore {
            guard minimum.isFinite else {
                throw TroveError.invalidQuery("the minimum score must be finite")
            }
            guard !query.vectorLegs.isEmpty else {
                throw TroveError.invalidQuery("a minimum score needs a vector leg")
            }
        }
        if query.snippet != nil, query.textLeg == nil {
            throw TroveError.invalidQuery("snippets need a text leg")
        }
        if let lambda = query.mmrLambda {
            guard (0...1).contains(lambda) else {
                throw TroveError.invalidQuery("MMR λ must be in 0...1, got \(lambda)")
            }
            guard !query.vectorLegs.isEmpty else {
                throw TroveError.invalidQuery("MMR needs a vector leg")
            }
        }
    }

    func vectorHits(
        _ leg: VectorLeg, k: Int, options: VectorSearchOptions, candidates: Candidates,
        source: VectorSource,
        on connection: Connection
    ) throws -> [Neighbor] {
        let index = indexes.vectors[leg.field]!
        let table = TableVectors(
            connection: connection, layout: layout, field: leg.field, dimension: index.dimension,
            metric: index.metric)
        switch source {
        case .indexes:
            guard !candidates.excluded.isEmpty else {
                return try indexes.lock.read {
                    indexes.searchHook?()
                    return try index.search(
                        leg.vector, k: k, among: candidates.rids, options: options, table: table)
                }
            }
            // k more than the rows left out: the best k of the rest are among them.
            let hits = try indexes.lock.read {
                indexes.searchHook?()
                return try index.search(
                    leg.vector, k: k + candidates.excluded.count, among: candidates.rids,
                    options: options, table: table
                )
            }
            return Array(hits.lazy.filter { candidates.allows($0.id) }.prefix(k))
        case .table:
            return try table.exactSearch(
                leg.vector, k: k, among: candidates.rids, allows: candidates.allows)
        }
    }

    /// BM25 hits of the text leg among the filter's rows, best first: from the in-memory leg
    /// when it answers this query (``TextFieldIndex``), else from FTS5.
    ///
    /// `minimumCoverage`: hits of typed text matching a smaller share of the query's clauses
    /// (words and quoted phrases) are left out, on both paths: the in-memory leg knows each
    /// hit's coverage, and FTS5's hits are checked clause by clause (``clauseMatches(_:leg:rids:on:)``),
    /// so weighted fields, a subset of the fields and reads inside a write transaction vote as
    /// the in-memory leg would. Ties in BM25 go to the smaller row id on both paths.
    func textHits(
        _ leg: TextLeg, k: Int, minimumCoverage: Double = 0, filter: Filter, candidates: Candidates,
        source: VectorSource,
        on connection: Connection
    ) throws -> [(rid: Int64, bm25: Double)] {
        // ranked(_:source:on:) caught the in-memory leg up with the others.
        if source == .indexes, let memory = indexes.text, memory.answers(leg) {
            return indexes.lock.read {
                indexes.searchHook?()
                return memory.search(leg.query.text, k: k, candidates: candidates)
                    .filter { $0.coverage + 1e-9 >= minimumCoverage }.map {
                        (rid: $0.rid, bm25: $0.bm25)
                    }
            }
        }
        let fullText = schema.fullText!
        guard let expression = matchExpression(leg) else { return [] }
        let weights = fullText.weights.map { String($0) }.joined(separator: ", ")
        var sql = SQLFragment(
            sql:
                "SELECT rowid, bm25(\(layout.fts), \(weights)) AS score FROM \(layout.fts) WHERE \(layout.fts) MATCH "
        )
        sql.bind(.text(expression))
        if case .all = filter, !schema.allowsExpiry {
        } else {
            sql.append(" AND rowid IN (SELECT \(layout.rid) FROM \(layout.table) WHERE ")
            sql.append(try condition(filter, on: connection))
            sql.append(")")
        }
        sql.append(" ORDER BY score, rowid LIMIT ")
        sql.bind(.integer(Int64(k)))
        var hits: [(rid: Int64, bm25: Double)] = []
        do {
            try connection.cachedStatement(sql.sql).forEachRow(sql.bindings) {
                hits.append(($0.int64(at: 0), $0.double(at: 1)))
            }
        } catch let error as SQLiteError where error.code == .error {
            // The filter part is compiled by Trove and always valid, so an error here is the
            // text query's (raw FTS5 syntax), whatever SQLite's message says.
            throw TroveError.invalidTextQuery(query: leg.query.text, reason: error.message)
        }
        // The in-memory leg's gate, on FTS5's best k (the in-memory leg gates its best k too).
        guard minimumCoverage > 0, !hits.isEmpty, let typed = typedQuery(leg) else { return hits }
        let matched = try clauseMatches(typed, leg: leg, rids: hits.map(\.rid), on: connection)
        let clauses = Double(typed.clauses.count)
        return hits.filter { Double(matched[$0.rid] ?? 0) / clauses + 1e-9 >= minimumCoverage }
    }

    /// The typed query of a typed text leg, parsed with the collection's tokenizer as the
    /// in-memory leg parses it; nil for raw FTS5 syntax, a tokenizer TroveText does not
    /// reproduce, or a query left empty.
    func typedQuery(_ leg: TextLeg) -> TypedQuery? {
        guard leg.query.kind == .typed,
            let configuration = TokenizerConfiguration(
                fts5TokenizeArgument: schema.fullText!.tokenizer)
        else { return nil }
        let typed = TypedQuery(leg.query.text, tokenizer: Tokenizer(configuration))
        return typed.isEmpty ? nil : typed
    }

    /// How many of `typed`'s clauses each of `rids` matches in the leg's fields, as FTS5 matches
    /// them (a phrase in order inside one field): one MATCH per clause, over those rows only.
    /// - Complexity: one FTS5 query per clause, each reading the clause's doclist.
    func clauseMatches(_ typed: TypedQuery, leg: TextLeg, rids: [Int64], on connection: Connection)
        throws -> [Int64:
        Int]
    {
        let statement = try connection.cachedStatement(
            "SELECT rowid FROM \(layout.fts) WHERE \(layout.fts) MATCH ? AND rowid IN (SELECT value FROM json_each(?))"
        )
        let list = "[" + rids.map(String.init).joined(separator: ",") + "]"
        var matched: [Int64: Int] = [:]
        for clause in typed.clauses {
            var expression = "\"" + clause.words.joined(separator: " ") + "\""
            if let fields = leg.fields, !fields.isEmpty {
                expression = "{\(fields.joined(separator: " "))} : (\(expression))"
            }
            try statement.forEachRow([.text(expression), .text(list)]) {
                matched[$0.int64(at: 0), default: 0] += 1
            }
        }
        return matched
    }

    /// FTS5 snippets of these rows for the text leg (the best-matching full-text field of each).
    func snippets(rids: [Int64], leg: TextLeg, style: SnippetStyle, on connection: Connection)
        throws -> [Int64: String]
    {
        guard !rids.isEmpty, let expression = matchExpression(leg) else { return [:] }
        // One statement per row with `rowid = ?`: FTS5 seeks each term's doclist to that rowid,
        // where `rowid IN (…)` made it walk every doclist of an OR query to the end.
        let statement = try connection.cachedStatement(
            "SELECT snippet(\(layout.fts), -1, ?, ?, ?, ?) FROM \(layout.fts) WHERE \(layout.fts) MATCH ? AND rowid = ?"
        )
        var out: [Int64: String] = [:]
        for rid in Set(rids) {
            try statement.forEachRow([
                .text(style.open), .text(style.close), .text(style.ellipsis),
                .integer(Int64(style.words)),
                .text(expression), .integer(rid),
            ]) { out[rid] = $0.string(at: 0) }
        }
        return out
    }

    /// The FTS5 MATCH expression: typed text rendered safely (stop words dropped) or raw syntax,
    /// restricted to the leg's fields with a column filter.
    func matchExpression(_ leg: TextLeg) -> String? {
        let tokenizer = TokenizerConfiguration(fts5TokenizeArgument: schema.fullText!.tokenizer).map
        { Tokenizer($0) }
        let base: String?
        if leg.query.kind == .typed, let tokenizer {
            base = TypedQuery(leg.query.text, tokenizer: tokenizer).fts5Expression
        } else {
            base = leg.query.matchExpression
        }
        guard let base else { return nil }
        guard let fields = leg.fields, !fields.isEmpty else { return base }
        return "{\(fields.joined(separator: " "))} : (\(base))"
    }

    /// Fuses the legs: one leg keeps its own order and score; several fuse by RRF or by the sum
    /// of z-normalised scores.
    func fuse(_ legs: LegHits, query: Query) -> [RankFusion.FusedHit] {
        var lists: [RankFusion.RankedList] = legs.vector.enumerated().map { i, hits in
            RankFusion.RankedList(ids: hits.map(\.id), weight: query.vectorLegs[i].weight)
        }
        var scores: [[Double]] = zip(legs.vector, query.vectorLegs).map { hits, leg in
            let metric = indexes.vectors[leg.field]!.metric
            return hits.map { Double(metric.score(distance: $0.distance)) }
        }
        if let text = legs.text {
            lists.append(RankFusion.RankedList(ids: text.map(\.rid), weight: query.textLeg!.weight))
            scores.append(text.map { -$0.bm25 })
        }
        if let geo = legs.geo {
            lists.append(RankFusion.RankedList(ids: geo.map(\.rid), weight: query.geoLeg!.weight))
            scores.append(geo.map { -$0.kilometres })
        }
        if lists.count == 1 {
            return zip(lists[0].ids, scores[0]).enumerated().map { offset, pair in
                RankFusion.FusedHit(id: pair.0, score: pair.1, ranks: [offset + 1])
            }
        }
        switch query.fusion {
        case .reciprocalRank(let k):
            return RankFusion.reciprocalRank(lists, k: k)
        case .normalizedScores:
            var total: [Int64: Double] = [:]
            var ranks: [Int64: [Int?]] = [:]
            for (leg, list) in lists.enumerated() {
                let values = scores[leg]
                guard !values.isEmpty else { continue }
                let mean = values.reduce(0, +) / Double(values.count)
                let deviation =
                    (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count))
                    .squareRoot()
                let z = values.map { deviation > 0 ? ($0 - mean) / deviation : 0 }
                let floor = z.min() ?? 0
                for (offset, id) in list.ids.enumerated() where ranks[id]?[leg] == nil {
                    ranks[id, default: Array(repeating: nil, count: lists.count)][leg] = offset + 1
                    total[id, default: 0] += list.weight * (z[offset] - floor)
                }
            }
            return total.map {
                RankFusion.FusedHit(id: $0.key, score: $0.value, ranks: ranks[$0.key]!)
            }
            .sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
        }
    }

    /// MMR over the fused list with the first vector leg's field.
    func diversify(
        _ fused: [RankFusion.FusedHit], query: Query, lambda: Double, count: Int,
        source: VectorSource,
        on connection: Connection
    ) throws -> [RankFusion.FusedHit] {
        let leg = query.vectorLegs[0]
        let index = indexes.vectors[leg.field]!
        let pool = Array(fused.prefix(max(2 * count, 20)))
        var vectors: [Int64: [Float]] = [:]
        let statement = try connection.cachedStatement(
            "SELECT \"\(leg.field)\" FROM \(layout.table) WHERE \(layout.rid) = ?")
        for hit in pool {
            try statement.forEachRow([.integer(hit.id)]) { row in
                vectors[hit.id] = row.withBlob(at: 0) {
                    $0.flatMap { VectorBlob.vector($0, dimension: index.dimension) }
                }
            }
        }
        let metric = index.metric
        func similarity(_ a: [Float]?, _ b: [Float]?) -> Double {
            guard let a, let b else { return 0 }
            return Double(metric.score(distance: metric.distance(a, b)))
        }
        let relevance = pool.map { (id: $0.id, relevance: similarity(leg.vector, vectors[$0.id])) }
        let picked = RankFusion.maximalMarginalRelevance(relevance, count: count, lambda: lambda) {
            similarity(vectors[$0], vectors[$1])
        }
        let byID = Dictionary(uniqueKeysWithValues: pool.map { ($0.id, $0) })
        return picked.compactMap { byID[$0] }
    }

    /// Documents by row id.
    func documents(rids: [Int64], selection: Selection, on connection: Connection) throws -> [Int64:
        Document]
    {
        guard !rids.isEmpty else { return [:] }
        let statement = try connection.cachedStatement(
            "SELECT \(layout.rid), \(selection.sql) FROM \(layout.table) WHERE \(layout.rid) IN (SELECT value FROM json_each(?))"
        )
        var out: [Int64: Document] = [:]
        try statement.forEachRow([.text(SQLFragment.jsonArray(rids))]) { row in
            out[row.int64(at: 0)] = document(row, selection, first: 1)
        }
        return out
    }

    /// The geo leg's hits among the filter's rows, nearest first (ties by row id).
    ///
    /// Exact: a radius search returns every point within the radius, so once it finds k the k
    /// nearest are among them. The first radius is the cap that would hold 2k points if they
    /// were spread evenly over the sphere; it doubles until k are found or it covers the limit.
    func geoHits(_ leg: GeoLeg, k: Int, filter: Filter, on connection: Connection) throws -> [(
        rid: Int64, kilometres: Double
    )] {
        let index = indexes.geo[leg.field]!
        let total = try index.approximateCount(connection)
        let limit = min(leg.maximumKilometres ?? GeoMath.maximumDistance, GeoMath.maximumDistance)
        let share = min(1, 2 * Double(k) / Double(max(1, total)))
        var radius = min(limit, max(0.001, GeoMath.earthRadius * acos(1 - 2 * share)))
        // Compiled even for `.all`, so the rules condition(_:on:) adds for which rows exist
        // (expiry) apply here too; a condition that is just "1" is left out.
        let compiled = try condition(filter, on: connection)
        let condition: SQLFragment? = compiled.sql == "1" ? nil : compiled
        while true {
            var sql = SQLFragment(sql: "SELECT id, \(GeoSQL.distanceFunction)(lat, lon, ")
            sql.bind(.real(leg.point.latitude))
            sql.append(", ")
            sql.bind(.real(leg.point.longitude))
            sql.append(") AS d FROM \(index.table) WHERE ")
            GeoSQL.overlaps(
                GeoMath.boundingBoxes(around: leg.point, kilometres: radius), into: &sql)
            sql.append(" AND d <= ")
            sql.bind(.real(radius))
            if let condition {
                sql.append(" AND id IN (SELECT \(layout.rid) FROM \(layout.table) WHERE ")
                sql.append(condition)
                sql.append(")")
            }
            sql.append(" ORDER BY d, id LIMIT ")
            sql.bind(.integer(Int64(k)))
            var hits: [(rid: Int64, kilometres: Double)] = []
            try connection.cachedStatement(sql.sql).forEachRow(sql.bindings) {
                hits.append(($0.int64(at: 0), $0.double(at: 1)))
            }
            if hits.count >= k || radius >= limit { return hits }
            radius = min(limit, radius * 2)
        }
    }
}
