import Foundation
import TroveSQLite

/// The R*Tree of one point field, `<collection>_geo_<field>`, kept by triggers inside the
/// writing transaction (so raw SQL writes are indexed too):
///
/// ```
/// c_geo_f USING rtree(id, minLat, maxLat, minLon, maxLon, +lat, +lon)
///     -- id: the row id; the box is the point itself (R*Tree stores it as float32, rounded
///     -- outwards); +lat/+lon: the exact float64 coordinates, read by the exact checks
/// triggers c_geo_f_ai, c_geo_f_ad, c_geo_f_au (AFTER UPDATE OF rid, f)
/// ```
///
/// Queries prefilter with the box (one or two boxes across the antimeridian, the full longitude
/// range around a pole) and then test exactly, without touching the table. The exact test reads
/// `+lat`/`+lon` (a lookup in the R*Tree's `_rowid` table per entry) only for entries whose
/// float32 box cannot decide: one well inside the query's box or circle, or well outside the
/// circle, is decided from the box alone (see ``GeoSQL``).
final class GeoIndex: DerivedIndex {
    let field: String
    let table: String
    let layout: DocumentLayout
    /// A row count for the nearest-k search's first radius; a guess that is refreshed now and
    /// then, never needed for correctness.
    private let countLock = NSLock()
    private var cachedCount: (value: Int64, uses: Int)?

    init(field: String, layout: DocumentLayout) {
        self.field = field
        self.layout = layout
        self.table = layout.geoTable(field)
    }

    var name: String { "r*tree(\(field))" }
    var columns: [String] { [] }
    var isLoaded: Bool { true }
    func reset() {}
    func apply(rid: Int64, statement: Statement?, firstColumn: Int) {}

    func verify(_ connection: Connection, layout: DocumentLayout) throws -> [String] {
        var problems: [String] = []
        let check =
            try connection.scalar("SELECT rtreecheck(?)", [.text(layout.geoTableName(field))])?
            .stringValue ?? "ok"
        if check != "ok" { problems.append("\(name): \(check)") }
        let column = "\"\(field)\""
        let row = try connection.query(
            """
            SELECT (SELECT count(*) FROM \(layout.table) WHERE \(column) IS NOT NULL),
                   (SELECT count(*) FROM \(table)),
                   (SELECT count(*) FROM \(layout.table) AS t JOIN \(table) AS g ON g.id = t.\(layout.rid)
                    WHERE g.lat = json_extract(t.\(column), '$[0]') AND g.lon = json_extract(t.\(column), '$[1]'))
            """)[0]
        let (points, entries, matching) = (
            row.int64(at: 0) ?? 0, row.int64(at: 1) ?? 0, row.int64(at: 2) ?? 0
        )
        if points != entries || points != matching {
            problems.append(
                "\(name): \(points) points in the table, \(entries) in the R*Tree, \(matching) agreeing"
            )
        }
        return problems
    }

    func rebuildInSQLite(_ connection: Connection, layout: DocumentLayout) throws {
        try connection.execute("DELETE FROM \(table)")
        try connection.execute(
            layout.geoInsert(
                field,
                from: "SELECT \(layout.rid) AS rid, \"\(field)\" AS point FROM \(layout.table)"))
    }

    /// How many points the index holds, roughly (exact when read, cached for 1,000 uses).
    func approximateCount(_ connection: Connection) throws -> Int64 {
        if let cached = countLock.withLock({ () -> Int64? in
            guard var entry = cachedCount, entry.uses < 1000 else { return nil }
            entry.uses += 1
            cachedCount = entry
            return entry.value
        }) {
            return cached
        }
        let count =
            try connection.scalar(
                "SELECT count(*) FROM \(layout.geoTable(field, shadow: "rowid"))")?.int64Value ?? 0
        countLock.withLock { cachedCount = (count, 0) }
        return count
    }
}

/// SQL over a point field's R*Tree, shared by the filters and the ranking leg.
///
/// An entry's box holds its point's coordinates rounded outwards to float32 (within a few
/// metres of the point), read straight from the R*Tree node; the exact float64 coordinates
/// `+lat`/`+lon` cost a lookup in the `_rowid` table per entry. So each test first asks the
/// box: inside a query box, or nearer or farther than the radius by more than the rounding,
/// decides at once; only the entries within metres of an edge read the exact coordinates.
enum GeoSQL {
    /// The name of the registered exact-distance function (see `registerTroveFunctions`).
    static let distanceFunction = "trove_geo_km"
    /// The registered function that decides a radius test from an entry's box corner:
    /// `trove_geo_within(minLat, minLon, lat, lon, km)` is 1 (within `km` of the centre), 0
    /// (farther), or NULL when the rounding could change the answer.
    static let boxWithinFunction = "trove_geo_within"
    /// How far a box corner may be from its point, with room to spare: R*Tree rounds each
    /// coordinate outwards to float32 (one step of 2^-23 relative, then to the nearest float),
    /// under 3e-5° at 180°, so the corner is under 5 m from the point on the ground.
    static let cornerSlackKilometres = 0.01

    /// 1 when the corner of an entry's box is nearer than `kilometres - slack` (so the point is
    /// within `kilometres`), 0 when farther than `kilometres + slack`, nil otherwise.
    static func boxWithin(
        _ minLat: Double, _ minLon: Double, _ lat: Double, _ lon: Double, _ kilometres: Double
    )
        -> Double?
    {
        let d = GeoMath.kilometres(minLat, minLon, lat, lon)
        if d < kilometres - cornerSlackKilometres { return 1 }
        if d > kilometres + cornerSlackKilometres { return 0 }
        return nil
    }

    /// `CASE trove_geo_within(minLat, minLon, c) WHEN 1 THEN 1 WHEN 0 THEN 0 ELSE <exact> END`:
    /// the exact test on `+lat`/`+lon` only where the box corner cannot decide.
    static func radiusTest(
        center: GeoPoint, kilometres: Double, exact: String, into out: inout SQLFragment
    ) {
        out.append("CASE \(boxWithinFunction)(minLat, minLon, ")
        out.bind(.real(center.latitude))
        out.append(", ")
        out.bind(.real(center.longitude))
        out.append(", ")
        out.bind(.real(kilometres))
        out.append(") WHEN 1 THEN 1 WHEN 0 THEN 0 ELSE \(exact) END")
    }

    /// `(maxLat >= s AND minLat <= n AND maxLon >= w AND minLon <= e) OR ...` over the R*Tree's
    /// box columns: entries overlapping any of the boxes.
    static func overlaps(_ boxes: [GeoBox], into out: inout SQLFragment) {
        out.append("(")
        for (i, box) in boxes.enumerated() {
            if i > 0 { out.append(" OR ") }
            out.append("(maxLat >= ")
            out.bind(.real(box.south))
            out.append(" AND minLat <= ")
            out.bind(.real(box.north))
            out.append(" AND maxLon >= ")
            out.bind(.real(box.west))
            out.append(" AND minLon <= ")
            out.bind(.real(box.east))
            out.append(")")
        }
        out.append(")")
    }

    /// The R*Tree ids within `kilometres` of `center` (exact great-circle distance).
    static func withinRadius(table: String, center: GeoPoint, kilometres: Double) -> SQLFragment {
        var out = SQLFragment(sql: "SELECT id FROM \(table) WHERE ")
        overlaps(GeoMath.boundingBoxes(around: center, kilometres: kilometres), into: &out)
        out.append(" AND ")
        var exact = SQLFragment(sql: "\(distanceFunction)(lat, lon, ")
        exact.bind(.real(center.latitude))
        exact.append(", ")
        exact.bind(.real(center.longitude))
        exact.append(") <= ")
        exact.bind(.real(kilometres))
        radiusTest(center: center, kilometres: kilometres, exact: exact.sql, into: &out)
        out.bindings += exact.bindings
        return out
    }

    /// The R*Tree ids inside `box` (edges included; exact on the float64 coordinates). An entry
    /// whose float32 box lies inside `box` is inside without reading them.
    static func inside(table: String, box: GeoBox) -> SQLFragment {
        let ranges = box.longitudeRanges
        var out = SQLFragment(sql: "SELECT id FROM \(table) WHERE ")
        overlaps(
            ranges.map {
                GeoBox(south: box.south, west: $0.lowerBound, north: box.north, east: $0.upperBound)
            },
            into: &out)
        out.append(" AND CASE WHEN minLat >= ")
        out.bind(.real(box.south))
        out.append(" AND maxLat <= ")
        out.bind(.real(box.north))
        out.append(" AND (")
        for (i, range) in ranges.enumerated() {
            if i > 0 { out.append(" OR ") }
            out.append("(minLon >= ")
            out.bind(.real(range.lowerBound))
            out.append(" AND maxLon <= ")
            out.bind(.real(range.upperBound))
            out.append(")")
        }
        out.append(") THEN 1 ELSE lat BETWEEN ")
        out.bind(.real(box.south))
        out.append(" AND ")
        out.bind(.real(box.north))
        out.append(" AND (")
        for (i, range) in ranges.enumerated() {
            if i > 0 { out.append(" OR ") }
            out.append("lon BETWEEN ")
            out.bind(.real(range.lowerBound))
            out.append(" AND ")
            out.bind(.real(range.upperBound))
        }
        out.append(") END")
        return out
    }
}

extension DocumentLayout {
    /// The quoted R*Tree table of a point field (or one of its shadow tables).
    func geoTable(_ field: String, shadow: String? = nil) -> String {
        "\"\(geoTableName(field))\(shadow.map { "_\($0)" } ?? "")\""
    }

    func geoTableName(_ field: String) -> String { "\(name)_geo_\(field)" }

    /// The point fields, in declaration order.
    var pointFields: [String] { schema.fields.filter { $0.type == .point }.map(\.name) }

    /// Names the geo objects take (checked for collisions before creating anything).
    var geoObjectNames: [String] {
        pointFields.flatMap { f in
            let base = geoTableName(f)
            return [
                base, "\(base)_node", "\(base)_parent", "\(base)_rowid", "\(base)_ai", "\(base)_ad",
                "\(base)_au",
            ]
        }
    }

    /// `INSERT INTO <rtree> SELECT ...` of the non-null points of `source`, a SELECT giving
    /// columns `rid` and `point` (the stored JSON `[lat, lon]`).
    func geoInsert(_ field: String, from source: String) -> String {
        """
        INSERT INTO \(geoTable(field))(id, minLat, maxLat, minLon, maxLon, lat, lon)
        SELECT rid, la, la, lo, lo, la, lo FROM (
            SELECT rid, json_extract(point, '$[0]') AS la, json_extract(point, '$[1]') AS lo
            FROM (\(source)) WHERE point IS NOT NULL)
        """
    }

    /// The R*Tree of each point field and the triggers that keep it (they use only SQLite's
    /// own functions, so raw SQL from any connection keeps the index right).
    var geoCreateStatements: [String] {
        pointFields.flatMap { f -> [String] in
            let g = geoTable(f)
            let base = geoTableName(f)
            let column = "\"\(f)\""
            func insert(_ row: String) -> String {
                "INSERT INTO \(g)(id, minLat, maxLat, minLon, maxLon, lat, lon) "
                    + "SELECT \(row).\(rid), json_extract(\(row).\(column), '$[0]'), json_extract(\(row).\(column), '$[0]'), "
                    + "json_extract(\(row).\(column), '$[1]'), json_extract(\(row).\(column), '$[1]'), "
                    + "json_extract(\(row).\(column), '$[0]'), json_extract(\(row).\(column), '$[1]') "
                    + "WHERE \(row).\(column) IS NOT NULL;"
            }
            return [
                "CREATE VIRTUAL TABLE \(g) USING rtree(id, minLat, maxLat, minLon, maxLon, +lat, +lon)",
                "CREATE TRIGGER \"\(base)_ai\" AFTER INSERT ON \(table) BEGIN \(insert("new")) END",
                "CREATE TRIGGER \"\(base)_ad\" AFTER DELETE ON \(table) BEGIN DELETE FROM \(g) WHERE id = old.\(rid); END",
                """
                CREATE TRIGGER "\(base)_au" AFTER UPDATE OF \(rid), \(column) ON \(table) BEGIN
                    DELETE FROM \(g) WHERE id = old.\(rid);
                    \(insert("new"))
                END
                """,
            ]
        }
    }

    /// The CHECK of a point column: JSON `[latitude, longitude]`, both numbers in range.
    static func pointCheck(_ column: String) -> String {
        "json_valid(\(column)) AND json_type(\(column)) = 'array' AND json_array_length(\(column)) = 2 "
            + "AND json_type(\(column), '$[0]') IN ('real', 'integer') AND json_type(\(column), '$[1]') IN ('real', 'integer') "
            + "AND json_extract(\(column), '$[0]') BETWEEN -90 AND 90 AND json_extract(\(column), '$[1]') BETWEEN -180 AND 180"
    }
}

extension Connection {
    /// Registers the SQL functions Trove's queries call (the exact great-circle distance). Only
    /// queries use them, never triggers or constraints, so other connections can still write.
    func registerTroveFunctions() throws {
        try registerFunction(named: GeoSQL.distanceFunction, argumentCount: 4) { a in
            GeoMath.kilometres(a[0], a[1], a[2], a[3])
        }
        try registerFunction(named: GeoSQL.boxWithinFunction, argumentCount: 5) { a in
            GeoSQL.boxWithin(a[0], a[1], a[2], a[3], a[4])
        }
    }
}
