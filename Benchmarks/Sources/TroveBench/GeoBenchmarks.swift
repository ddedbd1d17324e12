// trove-bench geo: radius, bounding box and nearest-k over seeded random points, Trove's query
// value against a hand-written R*Tree query on the same file (through TroveSQLite) and an exact
// brute-force scan (which also gives the recall).
import Foundation
@_spi(Benchmarks) import Trove

/// Latencies in milliseconds with p50/p99 (shared by the geo and graph benchmarks).
struct LatencySamples {
    var samples: [Double] = []
    mutating func add(_ ms: Double) { samples.append(ms) }
    func percentile(_ p: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
    var p50: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }
    var json: [String: Any] { ["p50_ms": p50, "p99_ms": p99, "queries": samples.count] }
}

func timedMilliseconds<T>(_ body: () async throws -> T) async rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let result = try await body()
    let d = ContinuousClock.now - start
    return (result, Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
}

private let earthRadius = 6371.0088

private func haversine(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    let r = Double.pi / 180
    let h = pow(sin((lat2 - lat1) * r / 2), 2) + cos(lat1 * r) * cos(lat2 * r) * pow(sin((lon2 - lon1) * r / 2), 2)
    return 2 * earthRadius * asin(min(1, sqrt(h)))
}

/// A row of the hand-written queries, decoded as a caller would use it.
private struct HandRow {
    var id: Int64
    var version: Int64
    var kind: Int64?
    var kilometres: Double?
}

/// The 1°×1° box around a centre, clamped to the map.
private func boxAround(_ lat: Double, _ lon: Double) -> GeoBox {
    GeoBox(south: max(-90, lat - 0.5), west: max(-180, lon - 0.5), north: min(90, lat + 0.5), east: min(180, lon + 0.5))
}

/// Half the points uniform on the sphere, half around 500 "cities" (about 30 km spread), so
/// small radii find something.
private func makePoints(_ n: Int, seed: UInt64) -> [(lat: Double, lon: Double)] {
    var rng = BenchRandom(state: seed)
    let cities = (0..<500).map { _ in (lat: asin(Double.random(in: -0.95...0.95, using: &rng)) * 180 / .pi, lon: Double.random(in: -180...180, using: &rng)) }
    return (0..<n).map { i in
        if i % 2 == 0 {
            return (asin(Double.random(in: -1...1, using: &rng)) * 180 / .pi, Double.random(in: -180...180, using: &rng))
        }
        let c = cities[Int.random(in: 0..<cities.count, using: &rng)]
        let lat = max(-90, min(90, c.lat + Double.random(in: -0.3...0.3, using: &rng)))
        var lon = c.lon + Double.random(in: -0.3...0.3, using: &rng) / max(0.05, cos(lat * .pi / 180))
        if lon > 180 { lon -= 360 }
        if lon < -180 { lon += 360 }
        return (lat, lon)
    }
}

func runGeoBenchmarks(_ arguments: [String]) async throws {
    let options = BenchOptions(arguments)
    if options.has("help") {
        print("""
            trove-bench geo [--points N] [--queries Q] [--fresh] [--json FILE]
              N seeded random points (default 1,000,000: half uniform on the sphere, half around 500
              cities) in a document collection with a point field. Radius 10 km and 100 km, a
              1°×1° bounding box and nearest-10, Q queries each (default 200) around seeded
              centres near the points: Trove's query value (fetch / search through the reader pool)
              alternating with a hand-written R*Tree query on the same file through TroveSQLite
              (SQLite's math functions for the haversine; both sides return the id, the version
              and the `kind` column decoded to Swift values), and an exact brute-force scan of the
              points in memory, which also gives the recall. p50/p99 in ms. --diagnose: only time the
              10 km query's SQL shapes (join or IN subquery, SQL math or the Swift distance function).
              The loaded file is kept in the bench cache (TROVE_BENCH_CACHE/geo/geo-N.trove) and
              reused; --fresh loads a new one (and times the load). --profile KIND [--repeat R]:
              only Trove's calls of one kind (radius10, radius100, box, nearest), R rounds, for perf.
            """)
        return
    }
    let n = options.int("points", 1_000_000)
    let queryCount = options.int("queries", 200)
    print("geo: \(n) points, \(queryCount) queries per kind, \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(Connection.sqliteVersion)")
    // The loaded file is kept in the bench cache (loading runs at about 7,300 points/s), keyed by
    // the point count; a marker written after the load and checkpoint says it is complete.
    // --fresh loads into a new file (removed afterwards) instead.
    let fresh = options.has("fresh")
    let dir = fresh ? FileManager.default.temporaryDirectory.appendingPathComponent("trove-geo-\(getpid())")
        : URL(fileURLWithPath: benchCache).appendingPathComponent("geo")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { if fresh { try? FileManager.default.removeItem(at: dir) } }
    let path = dir.appendingPathComponent("geo-\(n).trove").path
    let marker = path + ".complete"
    let cached = !fresh && FileManager.default.fileExists(atPath: marker) && FileManager.default.fileExists(atPath: path)
    if !cached {
        for suffix in ["", "-wal", "-shm", ".complete"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    let points = makePoints(n, seed: 2026)
    let db = try Database(path: path)
    let places = try await db.documents("places", schema: DocumentSchema(fields: [.integer("kind"), .point("location")]))
    var loadMs = 0.0
    if cached {
        print("load: the cached file \(path) (--fresh to load again)")
    } else {
        (_, loadMs) = try await timedMilliseconds {
            var batch: [Document] = []
            batch.reserveCapacity(50_000)
            for (i, p) in points.enumerated() {
                batch.append(Document(id: .int(Int64(i + 1)), ["kind": .int(Int64(i % 10)), "location": .point(latitude: p.lat, longitude: p.lon)]))
                if batch.count == 50_000 || i == points.count - 1 {
                    try await places.insert(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
        }
        print(String(format: "load: %.1f s (%.0f points/s, R*Tree kept by triggers)", loadMs / 1000, Double(n) / (loadMs / 1000)))
    }
    try await db.checkpoint()
    if !cached && !fresh { FileManager.default.createFile(atPath: marker, contents: Data()) }

    // The peer: a read-only connection with the reader pool's settings.
    let hand = try Connection(.file(path), options: Connection.Options(readOnly: true, walMode: false, foreignKeys: false))
    try hand.execute(script: "PRAGMA cache_size = -16384; PRAGMA mmap_size = \(1 << 30)")
    let haversineSQL = "2 * 6371.0088 * asin(min(1, sqrt(pow(sin(radians(g.lat - ?1) / 2), 2) + cos(radians(?1)) * cos(radians(g.lat)) * pow(sin(radians(g.lon - ?2) / 2), 2))))"
    // A hand-written radius query: the usual box (lat ± r, lon ± r / cos lat), clamped, whole
    // longitude range near a pole or across the antimeridian (the simple, correct choice).
    func handBox(_ lat: Double, _ lon: Double, _ km: Double) -> (Double, Double, Double, Double) {
        let dLat = km / earthRadius * 180 / .pi
        let cosLat = cos(lat * .pi / 180)
        let dLon = cosLat > 0.01 ? dLat / cosLat : 360
        if lat + dLat >= 90 || lat - dLat <= -90 || lon - dLon < -180 || lon + dLon > 180 {
            return (max(-90, lat - dLat), min(90, lat + dLat), -180, 180)
        }
        return (lat - dLat, lat + dLat, lon - dLon, lon + dLon)
    }
    let radiusSQL = """
        SELECT p.id, p._version, p.kind FROM places_geo_location AS g JOIN places AS p ON p.id = g.id
        WHERE g.maxLat >= ?3 AND g.minLat <= ?4 AND g.maxLon >= ?5 AND g.minLon <= ?6 AND \(haversineSQL) <= ?7
        """
    let boxSQL = """
        SELECT p.id, p._version, p.kind FROM places_geo_location AS g JOIN places AS p ON p.id = g.id
        WHERE g.maxLat >= ?1 AND g.minLat <= ?2 AND g.maxLon >= ?3 AND g.minLon <= ?4
          AND g.lat BETWEEN ?1 AND ?2 AND g.lon BETWEEN ?3 AND ?4
        """
    let nearestSQL = """
        SELECT p.id, p._version, p.kind, \(haversineSQL) AS d FROM places_geo_location AS g JOIN places AS p ON p.id = g.id
        WHERE g.maxLat >= ?3 AND g.minLat <= ?4 AND g.maxLon >= ?5 AND g.minLon <= ?6 AND d <= ?7 ORDER BY d LIMIT 10
        """

    // The hand queries return what Trove's `select(["kind"])` hands the caller (the id, the
    // version and the declared column, nearest-10 also the distance), decoded to Swift values.
    func handRow(_ row: Statement, distance: Bool = false) -> HandRow {
        HandRow(id: row.int64(at: 0), version: row.int64(at: 1), kind: row.isNull(at: 2) ? nil : row.int64(at: 2),
                kilometres: distance ? row.double(at: 3) : nil)
    }
    func handRadius(_ lat: Double, _ lon: Double, _ km: Double) throws -> [HandRow] {
        let (s, nn, w, e) = handBox(lat, lon, km)
        var rows: [HandRow] = []
        try hand.cachedStatement(radiusSQL).forEachRow([.real(lat), .real(lon), .real(s), .real(nn), .real(w), .real(e), .real(km)]) { rows.append(handRow($0)) }
        return rows
    }
    func handInside(_ box: GeoBox) throws -> [HandRow] {
        var rows: [HandRow] = []
        try hand.cachedStatement(boxSQL).forEachRow([.real(box.south), .real(box.north), .real(box.west), .real(box.east)]) { rows.append(handRow($0)) }
        return rows
    }
    func handNearest(_ lat: Double, _ lon: Double) throws -> [HandRow] {
        var km = 50.0
        while true {
            let (s, nn, w, e) = handBox(lat, lon, km)
            var rows: [HandRow] = []
            try hand.cachedStatement(nearestSQL).forEachRow([.real(lat), .real(lon), .real(s), .real(nn), .real(w), .real(e), .real(km)]) { rows.append(handRow($0, distance: true)) }
            if rows.count == 10 || km > 20_100 { return rows }
            km *= 2
        }
    }
    func bruteRadius(_ lat: Double, _ lon: Double, _ km: Double) -> Set<Int64> {
        var out: Set<Int64> = []
        for (i, p) in points.enumerated() where haversine(lat, lon, p.lat, p.lon) <= km { out.insert(Int64(i + 1)) }
        return out
    }
    func bruteNearest(_ lat: Double, _ lon: Double) -> [Int64] {
        var best: [(Double, Int64)] = []
        for (i, p) in points.enumerated() {
            let d = haversine(lat, lon, p.lat, p.lon)
            if best.count < 10 || d < best[best.count - 1].0 {
                best.append((d, Int64(i + 1)))
                best.sort { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
                if best.count > 10 { best.removeLast() }
            }
        }
        return best.map(\.1)
    }

    if options.has("diagnose") {
        // Where the time goes in a 10 km radius query: SQL shape and distance function apart.
        try hand.registerFunction(named: "swift_km", argumentCount: 4) { a in haversine(a[0], a[1], a[2], a[3]) }
        var r = BenchRandom(state: 3)
        let probes = (0..<300).map { _ in points[Int.random(in: 0..<points.count, using: &r)] }
        let shapes: [(String, String)] = [
            ("join, SQL math", radiusSQL),
            ("join, Swift function", radiusSQL.replacingOccurrences(of: haversineSQL, with: "swift_km(g.lat, g.lon, ?1, ?2)")),
            ("IN subquery, Swift function", "SELECT p.id, p._version, p.kind FROM places AS p WHERE p.id IN (SELECT id FROM places_geo_location AS g WHERE g.maxLat >= ?3 AND g.minLat <= ?4 AND g.maxLon >= ?5 AND g.minLon <= ?6 AND swift_km(g.lat, g.lon, ?1, ?2) <= ?7) ORDER BY p.id"),
        ]
        for (name, sql) in shapes {
            var samples = LatencySamples()
            for p in probes {
                let (s, nn, w, e) = handBox(p.lat, p.lon, 10)
                samples.add(try timedSync { try hand.cachedStatement(sql).rows([.real(p.lat), .real(p.lon), .real(s), .real(nn), .real(w), .real(e), .real(10)]).count }.1)
            }
            print(String(format: "diagnose %@: p50 %.3f ms", name, samples.p50))
        }
        return
    }
    var rng = BenchRandom(state: 7)
    let centers = (0..<queryCount).map { _ -> (Double, Double) in
        let p = points[Int.random(in: 0..<points.count, using: &rng)]
        return (max(-90, min(90, p.lat + Double.random(in: -0.05...0.05, using: &rng))), p.lon)
    }
    if let kind = options.values["profile"] {
        // Only Trove's top-level calls of one kind, over and over (for `perf record`): radius10,
        // radius100, box or nearest; --repeat R rounds over the centres (default 50).
        let rounds = options.int("repeat", 50)
        var total = 0
        let (_, ms) = try await timedMilliseconds {
            for _ in 0..<rounds {
                for (lat, lon) in centers {
                    let center = GeoPoint(latitude: lat, longitude: lon)
                    switch kind {
                    case "radius10": total += try await places.fetch(Query(Field("location").within(kilometres: 10, of: center)).select(["kind"])).count
                    case "radius100": total += try await places.fetch(Query(Field("location").within(kilometres: 100, of: center)).select(["kind"])).count
                    case "box": total += try await places.fetch(Query(Field("location").within(boxAround(lat, lon))).select(["kind"])).count
                    default: total += try await places.search(Query().near(center, in: "location").limit(10).select(["kind"])).count
                    }
                }
            }
        }
        print(String(format: "profile %@: %d calls, %.3f ms per call, %d hits", kind, rounds * centers.count, ms / Double(rounds * centers.count), total))
        return
    }
    // The brute force is slow (a full scan per query): it runs on every 10th query only.
    let bruteEvery = 10
    var report: [String: Any] = ["points": n, "queries": queryCount, "load_s": cached ? "cached" : loadMs / 1000]
    print("\n| query | Trove p50 | Trove p99 | hand R*Tree SQL p50 | p99 | Trove / hand (p50) | Trove in one read { } p50 | / hand | same rows by id list p50 | brute force p50 | recall | mean hits |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind in ["radius 10 km", "radius 100 km", "box 1°×1°", "nearest 10"] {
        var trove = LatencySamples(), peer = LatencySamples(), brute = LatencySamples()
        var found = 0, expected = 0, hits = 0
        // Warm-up (not timed): every reader connection opened, statements prepared, pages cached.
        for (lat, lon) in centers.prefix(20) {
            let center = GeoPoint(latitude: lat, longitude: lon)
            _ = try await places.fetch(Query(Field("location").within(kilometres: 100, of: center)).select(["kind"]))
            _ = try await places.search(Query().near(center, in: "location").limit(10).select(["kind"]))
            _ = try handRadius(lat, lon, 100)
            _ = try handNearest(lat, lon)
        }
        // The same queries inside one `read { }`: the query value's own cost, without the hop to
        // a reader connection that every top-level call makes.
        // The floor: fetching the same documents by an id list (what any document query pays
        // to decode its rows), for the filters; the hand query's ids, found untimed.
        let handIDs: [[Int64]] = try centers.map { lat, lon in
            switch kind {
            case "radius 10 km": return try handRadius(lat, lon, 10).map(\.id)
            case "radius 100 km": return try handRadius(lat, lon, 100).map(\.id)
            case "box 1°×1°": return try handInside(boxAround(lat, lon)).map(\.id)
            default: return try handNearest(lat, lon).map(\.id)
            }
        }
        let floor: [Double] = try await db.read { r in
            let p = try r.documents("places")
            return try handIDs.map { ids in try timedSync { try p.fetch(Query(Field.id.isIn(ids.map { .int($0) })).select(["kind"])) }.1 }
        }
        let floorSamples = LatencySamples(samples: floor)
        let inRead: [Double] = try await db.read { r in
            let p = try r.documents("places")
            return try centers.map { lat, lon in
                let center = GeoPoint(latitude: lat, longitude: lon)
                switch kind {
                case "radius 10 km", "radius 100 km":
                    let km = kind == "radius 10 km" ? 10.0 : 100.0
                    return try timedSync { try p.fetch(Query(Field("location").within(kilometres: km, of: center)).select(["kind"])) }.1
                case "box 1°×1°":
                    let box = boxAround(lat, lon)
                    return try timedSync { try p.fetch(Query(Field("location").within(box)).select(["kind"])) }.1
                default:
                    return try timedSync { try p.search(Query().near(center, in: "location").limit(10).select(["kind"])) }.1
                }
            }
        }
        let readSamples = LatencySamples(samples: inRead)
        for (q, (lat, lon)) in centers.enumerated() {
            // Which side runs first alternates: the second runs on the CPU caches the first
            // warmed for the same centre (pages of the R*Tree and the table).
            let troveFirst = q % 2 == 0
            func pair<A, B>(_ trove: () async throws -> A, _ peer: () throws -> B) async throws -> (A, Double, B, Double) {
                var peerResult: (B, Double)?
                if !troveFirst { peerResult = try timedSync(peer) }
                let (a, ta) = try await timedMilliseconds(trove)
                let (b, tb) = try peerResult ?? timedSync(peer)
                return (a, ta, b, tb)
            }
            let troveIDs: [Int64]
            let peerIDs: [Int64]
            switch kind {
            case "radius 10 km", "radius 100 km":
                let km = kind == "radius 10 km" ? 10.0 : 100.0
                let query = Query(Field("location").within(kilometres: km, of: GeoPoint(latitude: lat, longitude: lon))).select(["kind"])
                let (a, ta, b, tb) = try await pair({ try await places.fetch(query) }, { try handRadius(lat, lon, km) })
                (troveIDs, peerIDs) = (a.map { $0.id.value.intValue! }, b.map(\.id))
                trove.add(ta); peer.add(tb)
                if q % bruteEvery == 0 {
                    let (truth, tc) = await timedMilliseconds { bruteRadius(lat, lon, km) }
                    brute.add(tc)
                    expected += truth.count
                    found += Set(troveIDs).intersection(truth).count
                }
            case "box 1°×1°":
                let box = boxAround(lat, lon)
                let query = Query(Field("location").within(box)).select(["kind"])
                let (a, ta, b, tb) = try await pair({ try await places.fetch(query) }, { try handInside(box) })
                (troveIDs, peerIDs) = (a.map { $0.id.value.intValue! }, b.map(\.id))
                trove.add(ta); peer.add(tb)
                if q % bruteEvery == 0 {
                    let (truth, tc) = timedSyncPlain {
                        Set(points.enumerated().filter { $0.element.lat >= box.south && $0.element.lat <= box.north && $0.element.lon >= box.west && $0.element.lon <= box.east }.map { Int64($0.offset + 1) })
                    }
                    brute.add(tc)
                    expected += truth.count
                    found += Set(troveIDs).intersection(truth).count
                }
            default:
                let query = Query().near(GeoPoint(latitude: lat, longitude: lon), in: "location").limit(10).select(["kind"])
                let (a, ta, b, tb) = try await pair({ try await places.search(query) }, { try handNearest(lat, lon) })
                (troveIDs, peerIDs) = (a.map { $0.record.id.value.intValue! }, b.map(\.id))
                trove.add(ta); peer.add(tb)
                if q % bruteEvery == 0 {
                    let (truth, tc) = timedSyncPlain { bruteNearest(lat, lon) }
                    brute.add(tc)
                    expected += truth.count
                    found += Set(troveIDs).intersection(truth).count
                }
            }
            hits += troveIDs.count
            if Set(troveIDs) != Set(peerIDs), kind != "nearest 10" || troveIDs.count != peerIDs.count {
                // The hand query's box is a superset too, so both must agree (nearest: same count;
                // ties at the 10th place may pick different ids).
                print("  note: \(kind) at (\(lat), \(lon)): Trove \(troveIDs.count) hits, hand SQL \(peerIDs.count)")
            }
        }
        let recall = expected == 0 ? 1 : Double(found) / Double(expected)
        print(String(format: "| %@ | %.3f | %.3f | %.3f | %.3f | %.2fx | %.3f | %.2fx | %.3f | %.1f | %.4f | %.1f |", kind, trove.p50, trove.p99, peer.p50, peer.p99,
                     trove.p50 / peer.p50, readSamples.p50, readSamples.p50 / peer.p50, floorSamples.p50, brute.p50, recall, Double(hits) / Double(centers.count)))
        report[kind] = ["trove": trove.json, "hand_sql": peer.json, "brute_force": brute.json, "recall": recall,
                        "trove_in_read": readSamples.json, "same_rows_by_id_list": floorSamples.json,
                        "ratio_p50": trove.p50 / peer.p50, "mean_hits": Double(hits) / Double(centers.count)]
    }
    if let file = options.values["json"] {
        try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys, .prettyPrinted]).write(to: URL(fileURLWithPath: file))
        print("wrote \(file)")
    }
}

func timedSync<T>(_ body: () throws -> T) rethrows -> (T, Double) {
    let start = ContinuousClock.now
    let result = try body()
    let d = ContinuousClock.now - start
    return (result, Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15)
}

func timedSyncPlain<T>(_ body: () -> T) -> (T, Double) { timedSync(body) }
