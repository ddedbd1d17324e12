import Foundation
import TroveSQLite
import TroveText
import TroveVectors

/// `explain`: the plan a query would run, in words, without running it.
extension DocumentStore {
    /// How a query runs: which parts go to SQLite (with SQLite's own plan) and which to the
    /// in-memory indexes.
    func explain(_ query: Query, on connection: Connection) throws -> [String] {
        var lines: [String] = []
        if !query.isRanked {
            let compiled = try compileFetch(query, on: connection)
            lines.append("fetch in SQLite: filter, order, limit pushed down")
            lines += try describePlacesAndLinks(query.filter, on: connection)
            lines += try sqlitePlan(compiled.sql, on: connection).map { "  sqlite: \($0)" }
            return lines
        }
        try validateLegs(query)
        if case .all = query.filter, !schema.allowsExpiry {
            lines.append("candidates: every document")
        } else if case .all = query.filter {
            lines.append(
                "candidates: every document except the expired (partial index on _expires)")
        } else {
            var sql = SQLFragment(sql: "SELECT \(layout.rid) FROM \(layout.table) WHERE ")
            sql.append(try condition(query.filter, on: connection))
            lines.append(
                "candidates: filter in SQLite, before ranking\(schema.allowsExpiry ? "; expired documents left out" : "")"
            )
            lines += try describePlacesAndLinks(query.filter, on: connection)
            lines += try sqlitePlan(sql, on: connection).map { "  sqlite: \($0)" }
        }
        if !query.vectorLegs.isEmpty {
            // The plan depends on how many rows pass the filter and how many vectors are indexed.
            try indexes.catchUp(
                connection, loading: query.vectorLegs.map { indexes.vectors[$0.field]! })
            let matching = try candidates(query.filter, on: connection).rids?.count
            let options = VectorSearchOptions(exact: query.exact, efSearch: query.efSearch)
            let k = (query.limit ?? 10) + query.offset
            for leg in query.vectorLegs {
                let index = indexes.vectors[leg.field]!
                let plan = indexes.lock.read {
                    index.plan(k: leg.k ?? k, matching: matching, options: options)
                }
                lines.append("vector leg \(leg.field): in memory, \(plan)")
            }
        }
        if let leg = query.geoLeg {
            lines.append(
                "geo leg \(leg.field): nearest to \(leg.point) by great-circle distance\(leg.maximumKilometres.map { " within \($0) km" } ?? ""); R*Tree \(layout.geoTableName(leg.field)) box around a growing radius, exact distance on its float64 coordinates, among the candidates"
            )
        }
        if let leg = query.textLeg {
            if let memory = indexes.text, memory.answers(leg) {
                lines.append(
                    "text leg: in-memory BM25 over \(schema.fullText!.fields.joined(separator: ", ")), ranked as FTS5's bm25"
                )
            } else {
                lines.append(
                    "text leg: FTS5 MATCH over \((leg.fields ?? schema.fullText!.fields).joined(separator: ", ")), bm25 weights \(schema.fullText!.weights)"
                )
            }
        }
        if query.vectorLegs.count + (query.textLeg == nil ? 0 : 1) + (query.geoLeg == nil ? 0 : 1)
            > 1
        {
            switch query.fusion {
            case .reciprocalRank(let k): lines.append("fusion: reciprocal rank, k = \(k)")
            case .normalizedScores: lines.append("fusion: sum of z-normalised scores")
            }
        }
        if let minimum = query.minimumScore {
            lines.append("threshold: similarity to the first vector leg >= \(minimum)")
        }
        if let lambda = query.mmrLambda { lines.append("rerank: MMR, λ = \(lambda)") }
        lines.append("rows: fetched by id from SQLite for the top \(query.limit ?? 10)")
        return lines
    }

    /// One line per geo or graph part of a filter: how it runs.
    func describePlacesAndLinks(_ filter: Filter, on connection: Connection) throws -> [String] {
        try filter.placesAndLinks.map { part in
            switch part {
            case .withinDistance(let field, let center, let kilometres):
                return
                    "  geo filter \(field): within \(kilometres) km of \(center); R*Tree \(layout.geoTableName(field.name)) box prefilter (\(GeoMath.boundingBoxes(around: center, kilometres: kilometres).count) box(es)), exact great-circle check"
            case .withinBox(let field, let box):
                return
                    "  geo filter \(field): inside south \(box.south) west \(box.west) north \(box.north) east \(box.east); R*Tree \(layout.geoTableName(field.name)) (\(box.longitudeRanges.count) box(es)), exact check"
            case .linked(let scope):
                let source: VectorSource = connection.isInWriteTransaction ? .table : .indexes
                let reached = try graph.reachable(scope, source: source, on: connection)
                let here = reached.filter { $0.node.collection == name }.count
                let labels =
                    scope.labels.map { " along \($0.sorted().joined(separator: ", "))" } ?? ""
                let how =
                    source == .table
                    ? "the edge table (inside a write transaction)"
                    : "the in-memory adjacency index"
                return
                    "  graph filter: within \(scope.maxHops) hop(s) \(scope.direction) of \(scope.origin)\(labels), breadth-first on \(how): \(reached.count) node(s), \(here) in \(name), bound as an id list"
            default:
                return ""
            }
        }
    }
}
