import Foundation
import Testing
import Trove
import TroveSQLite
import TroveTestSupport

@Suite("Places: point fields, R*Tree, geo filters and the geo leg")
struct PlacesTests {
    static let schema = DocumentSchema(
        fields: [.text("name"), .text("kind", indexed: true), .point("location", optional: true)],
        fullText: FullTextDefinition(fields: ["name"]))

    static let words = ["quiet", "cafe", "wifi", "bakery", "loud", "bar", "garden", "books"]

    /// Points spread over the sphere, with crowds at both poles (the poles themselves included)
    /// and on both sides of the antimeridian (±180 included), and some documents without one.
    static func randomPoints(_ count: Int, seed: UInt64) -> [(id: Int64, point: GeoPoint?)] {
        var rng = SeededGenerator(seed: seed)
        return (1...Int64(count)).map { id in
            let point: GeoPoint?
            switch id % 10 {
            case 0: point = nil
            case 1:
                point = GeoPoint(
                    latitude: Double.random(in: 88...90, using: &rng),
                    longitude: Double.random(in: -180...180, using: &rng))
            case 2:
                point = GeoPoint(
                    latitude: Double.random(in: -90 ... -88, using: &rng),
                    longitude: Double.random(in: -180...180, using: &rng))
            case 3:
                point = GeoPoint(
                    latitude: Double.random(in: -30...30, using: &rng),
                    longitude: Double.random(in: 178...180, using: &rng))
            case 4:
                point = GeoPoint(
                    latitude: Double.random(in: -30...30, using: &rng),
                    longitude: Double.random(in: -180 ... -178, using: &rng))
            case 5 where id % 7 == 0:
                point = GeoPoint(latitude: id % 2 == 0 ? 90 : -90, longitude: 0)
            case 5 where id % 7 == 1:
                point = GeoPoint(latitude: 0, longitude: id % 2 == 0 ? 180 : -180)
            default:
                // Uniform on the sphere: latitude from asin of a uniform number.
                let z = Double.random(in: -1...1, using: &rng)
                point = GeoPoint(
                    latitude: asin(z) * 180 / .pi,
                    longitude: Double.random(in: -180...180, using: &rng))
            }
            return (id, point)
        }
    }

    static func seeded(_ count: Int, seed: UInt64, at path: String) async throws -> (
        Database, DocumentCollection, [Document]
    ) {
        let db = try Database(path: path)
        let places = try await db.documents("places", schema: schema)
        var rng = SeededGenerator(seed: seed &+ 1)
        let documents = randomPoints(count, seed: seed).map { id, point in
            Document(
                id: .int(id),
                [
                    "name": .string(
                        (0..<3).map { _ in words.randomElement(using: &rng)! }.joined(
                            separator: " ")),
                    "kind": .string(["a", "b", "c"].randomElement(using: &rng)!),
                    "location": point.map(Value.point) ?? .null,
                ])
        }
        try await places.insert(documents)
        return (db, places, documents)
    }

    static let centers: [GeoPoint] = [
        GeoPoint(latitude: 90, longitude: 0), GeoPoint(latitude: -90, longitude: 123),
        GeoPoint(latitude: 89.5, longitude: -179.9),
        GeoPoint(latitude: 0, longitude: 180), GeoPoint(latitude: 10, longitude: -179.5),
        GeoPoint(latitude: -5, longitude: 179.8),
        GeoPoint(latitude: 52.5, longitude: 13.4), GeoPoint(latitude: -33.9, longitude: 151.2),
        GeoPoint(latitude: 0, longitude: 0),
    ]

    /// Ids the oracle puts within `km`, leaving out points within a micrometre of the edge
    /// (two correct haversine codes may round those either way).
    static func expectSameWithin(
        _ got: [DocumentID], _ documents: [Document], center: GeoPoint, km: Double,
        extra: (Document) -> Bool = { _ in true }
    ) {
        let gotSet = Set(got)
        for d in documents {
            guard let p = d["location"]?.pointValue, extra(d) else {
                #expect(!gotSet.contains(d.id), "\(d.id) has no point or fails the filter")
                continue
            }
            let distance = GeoOracle.kilometres(p, center)
            if abs(distance - km) < 1e-6 { continue }
            #expect(
                gotSet.contains(d.id) == (distance <= km),
                "\(d.id) at \(p) is \(distance) km from \(center), radius \(km)")
        }
    }

    @Test(
        "radius filters equal a brute-force haversine scan, at the poles and across the antimeridian"
    )
    func radius() async throws {
        let dir = try TemporaryDirectory()
        let (_, places, documents) = try await Self.seeded(3000, seed: 1, at: dir.path("g.trove"))
        for center in Self.centers {
            for km in [0.0, 10, 100, 500, 2000, 10000, 20100] {
                let got = try await places.fetch(
                    Query(Field("location").within(kilometres: km, of: center)).select(["id"]))
                Self.expectSameWithin(got.map(\.id), documents, center: center, km: km)
            }
        }
        var rng = SeededGenerator(seed: 5)
        for _ in 0..<30 {
            let center = GeoPoint(
                latitude: Double.random(in: -90...90, using: &rng),
                longitude: Double.random(in: -180...180, using: &rng))
            let km = Double.random(in: 1...3000, using: &rng)
            let filter =
                Field("location").within(kilometres: km, of: center) && Field("kind") != "b"
            let got = try await places.fetch(Query(filter))
            Self.expectSameWithin(got.map(\.id), documents, center: center, km: km) {
                $0["kind"] != "b"
            }
            #expect(try await places.count(where: filter) == got.count)
            // NOT of a geo filter is unknown for documents without a point, as in SQL.
            let outside = try await places.fetch(
                Query(!Field("location").within(kilometres: km, of: center)))
            let expected = documents.filter {
                FilterOracle.evaluate(!Field("location").within(kilometres: km, of: center), $0)
                    == true
            }
            #expect(
                Set(outside.map(\.id)).symmetricDifference(expected.map(\.id)).allSatisfy { id in
                    let p = documents.first { $0.id == id }!["location"]!.pointValue!
                    return abs(GeoOracle.kilometres(p, center) - km) < 1e-6
                })
        }
    }

    @Test("bounding boxes equal a brute-force scan, across the antimeridian and up to the poles")
    func boxes() async throws {
        let dir = try TemporaryDirectory()
        let (_, places, documents) = try await Self.seeded(3000, seed: 2, at: dir.path("g.trove"))
        var boxes = [
            GeoBox(south: -20, west: 170, north: 20, east: -170),
            GeoBox(south: 80, west: -180, north: 90, east: 180),
            GeoBox(south: -90, west: 100, north: -85, east: -100),
            GeoBox(south: -1, west: 179, north: 1, east: 180),
            GeoBox(south: 0, west: -180, north: 0, east: 180),
        ]
        var rng = SeededGenerator(seed: 6)
        for _ in 0..<30 {
            let a = Double.random(in: -90...90, using: &rng)
            let b = Double.random(in: -90...90, using: &rng)
            boxes.append(
                GeoBox(
                    south: min(a, b), west: Double.random(in: -180...180, using: &rng),
                    north: max(a, b), east: Double.random(in: -180...180, using: &rng)))
        }
        for box in boxes {
            let filter = Field("location").within(box)
            let got = try await places.fetch(Query(filter))
            let expected = documents.filter {
                $0["location"]?.pointValue.map { GeoOracle.inside($0, box) } ?? false
            }
            #expect(got.map(\.id) == expected.map(\.id), "box \(box)")
            let either = Field("location").within(box) || Field("kind") == "c"
            #expect(
                try await places.count(where: either)
                    == documents.filter { FilterOracle.evaluate(either, $0) == true }.count)
        }
    }

    /// The point `kilometres` from `center` in direction `bearing` (degrees from north).
    static func destination(_ center: GeoPoint, kilometres: Double, bearing: Double) -> GeoPoint {
        let r = Double.pi / 180
        let delta = kilometres / GeoOracle.radius
        let theta = bearing * r
        let phi = center.latitude * r
        let lat = asin(sin(phi) * cos(delta) + cos(phi) * sin(delta) * cos(theta))
        var lon =
            center.longitude * r
            + atan2(sin(theta) * sin(delta) * cos(phi), cos(delta) - sin(phi) * sin(lat))
        if lon > .pi { lon -= 2 * .pi }
        if lon < -.pi { lon += 2 * .pi }
        return GeoPoint(
            latitude: max(-90, min(90, lat / r)), longitude: max(-180, min(180, lon / r)))
    }

    @Test(
        "points metres from a radius or box edge are judged exactly, though the R*Tree box decides most others"
    )
    func edges() async throws {
        // The filters decide an entry from its float32 box when that is clear by more than the
        // rounding, and read the exact coordinates otherwise: points placed 1 cm to 50 m either
        // side of the edge (poles and antimeridian included) must come out as the oracle says.
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("e.trove"))
        let places = try await db.documents("places", schema: Self.schema)
        let centers =
            Self.centers + [
                GeoPoint(latitude: 71.3, longitude: 179.99),
                GeoPoint(latitude: -60, longitude: -0.001),
            ]
        let radii = [0.005, 0.02, 1.0, 10, 250]
        let offsets = [
            -0.05, -0.011, -0.009, -0.003, -0.001, -0.00001, 0.00001, 0.001, 0.003, 0.009, 0.011,
            0.05,
        ]
        var points: [GeoPoint] = []
        for center in centers {
            for km in radii {
                for offset in offsets where km + offset >= 0 {
                    for bearing in stride(from: 0.0, to: 360, by: 45) {
                        points.append(
                            Self.destination(center, kilometres: km + offset, bearing: bearing + 7))
                    }
                }
            }
        }
        let boxes = [
            GeoBox(south: 10, west: 20, north: 10.5, east: 21),
            GeoBox(south: -20, west: 170, north: 20, east: -170),
            GeoBox(south: 89.9, west: -180, north: 90, east: 180),
            GeoBox(south: -45.123456789, west: -0.000001, north: -45, east: 0.000001),
        ]
        // Degrees either side of each edge: from about 1 mm to 100 m on the ground.
        let nudges = [
            -1e-3, -1e-4, -1e-5, -1e-6, -1e-7, -1e-8, 0, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
        ]
        for box in boxes {
            let midLat = (box.south + box.north) / 2
            let midLon = box.west <= box.east ? (box.west + box.east) / 2 : 180
            for nudge in nudges {
                points += [
                    GeoPoint(latitude: box.south + nudge, longitude: midLon),
                    GeoPoint(latitude: box.north + nudge, longitude: midLon),
                    GeoPoint(latitude: midLat, longitude: box.west + nudge),
                    GeoPoint(latitude: midLat, longitude: box.east + nudge),
                ]
            }
        }
        points = points.filter(\.isValid)
        let documents = points.enumerated().map { i, p in
            Document(id: .int(Int64(i + 1)), ["name": "edge", "kind": "a", "location": .point(p)])
        }
        try await places.insert(documents)
        for center in centers {
            for km in radii {
                let got = try await places.fetch(
                    Query(Field("location").within(kilometres: km, of: center)).select(["id"]))
                Self.expectSameWithin(got.map(\.id), documents, center: center, km: km)
                let limited = try await places.search(
                    Query().near(center, in: "location", within: km).limit(1000))
                let expected = GeoOracle.nearest(
                    documents.map {
                        (id: $0.id.value.intValue!, point: $0["location"]!.pointValue!)
                    },
                    to: center, k: 1000, within: km)
                #expect(
                    Set(limited.map { $0.record.id.value.intValue! }).symmetricDifference(
                        expected.map(\.id)
                    )
                    .allSatisfy { id in
                        abs(
                            GeoOracle.kilometres(
                                documents[Int(id) - 1]["location"]!.pointValue!, center) - km)
                            < 1e-6
                    }, "nearest within \(km) km of \(center)")
            }
        }
        for box in boxes {
            let got = try await places.fetch(Query(Field("location").within(box)).select(["id"]))
            let expected = documents.filter { GeoOracle.inside($0["location"]!.pointValue!, box) }
            #expect(got.map(\.id) == expected.map(\.id), "box \(box)")
            #expect(expected.count > 0 && expected.count < documents.count)
        }
    }

    @Test("nearest k is exact, with distances, with and without a filter and a distance limit")
    func nearest() async throws {
        let dir = try TemporaryDirectory()
        let (_, places, documents) = try await Self.seeded(3000, seed: 3, at: dir.path("g.trove"))
        let points = documents.compactMap { d in
            d["location"]?.pointValue.map { (id: d.id.value.intValue!, point: $0) }
        }
        let kindA = Set(documents.filter { $0["kind"] == "a" }.map { $0.id.value.intValue! })
        var centers = Self.centers
        var rng = SeededGenerator(seed: 7)
        for _ in 0..<20 {
            centers.append(
                GeoPoint(
                    latitude: Double.random(in: -90...90, using: &rng),
                    longitude: Double.random(in: -180...180, using: &rng)))
        }
        for center in centers {
            for k in [1, 10, 57] {
                let hits = try await places.search(Query().near(center, in: "location").limit(k))
                let expected = GeoOracle.nearest(points, to: center, k: k)
                #expect(
                    hits.map { $0.record.id.value.intValue! } == expected.map(\.id),
                    "nearest \(k) to \(center)")
                for (hit, truth) in zip(hits, expected) {
                    #expect(abs(hit.kilometres! - truth.km) < 1e-9)
                    #expect(hit.geoRank != nil)
                }
            }
            let filtered = try await places.search(
                Query(Field("kind") == "a").near(center, in: "location").limit(10))
            let expected = GeoOracle.nearest(
                points.filter { kindA.contains($0.id) }, to: center, k: 10)
            #expect(filtered.map { $0.record.id.value.intValue! } == expected.map(\.id))
            let limited = try await places.search(
                Query().near(center, in: "location", within: 300).limit(50))
            #expect(
                limited.map { $0.record.id.value.intValue! }
                    == GeoOracle.nearest(points, to: center, k: 50, within: 300).map(\.id))
        }
    }

    @Test(
        "points are validated: out-of-range or malformed values are typed errors and nothing is written"
    )
    func validation() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("v.trove"))
        let places = try await db.documents("places", schema: Self.schema)
        let good = Document(
            id: 1, ["name": "ok", "kind": "a", "location": .point(latitude: 1, longitude: 2)])
        for bad: Value in [
            .point(latitude: 90.5, longitude: 0), .point(latitude: 0, longitude: -180.01),
            .point(latitude: .nan, longitude: 0), .point(latitude: 0, longitude: .infinity),
        ] {
            await #expect(throws: TroveError.self) {
                try await places.insert([
                    good, Document(id: 2, ["name": "x", "kind": "a", "location": bad]),
                ])
            }
            do {
                try await places.insert([
                    good, Document(id: 2, ["name": "x", "kind": "a", "location": bad]),
                ])
            } catch let error as TroveError {
                guard case .invalidPoint(let field, _, _) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(field == "location")
            }
        }
        await #expect(throws: TroveError.self) {
            try await places.insert(
                Document(id: 3, ["name": "x", "kind": "a", "location": "Berlin"]))
        }
        #expect(try await places.count() == 0)
        // Raw SQL cannot store a bad point either (the column's CHECK), and a good one is indexed.
        await #expect(throws: SQLiteError.self) {
            try await db.write { tx in
                try tx.execute(
                    "INSERT INTO places(id, name, kind, location) VALUES (9, 'x', 'a', '[91, 0]')")
            }
        }
        _ = try await db.write { tx in
            try tx.execute(
                "INSERT INTO places(id, name, kind, location) VALUES (9, 'raw', 'a', '[52.5, 13.4]')"
            )
        }
        let near = try await places.fetch(
            Query(
                Field("location").within(
                    kilometres: 1, of: GeoPoint(latitude: 52.5, longitude: 13.4))))
        #expect(near.map(\.id) == [9])
        #expect(near.first?["location"]?.pointValue == GeoPoint(latitude: 52.5, longitude: 13.4))
        _ = try await db.write { tx in
            try tx.execute("UPDATE places SET location = '[-33.9, 151.2]' WHERE id = 9")
        }
        #expect(
            try await places.count(
                where: Field("location").within(
                    kilometres: 1, of: GeoPoint(latitude: 52.5, longitude: 13.4))) == 0)
        #expect(
            try await places.count(
                where: Field("location").within(
                    kilometres: 1, of: GeoPoint(latitude: -33.9, longitude: 151.2))) == 1)
        // Bad queries.
        await #expect(throws: TroveError.self) {
            try await places.fetch(
                Query(
                    Field("location").within(
                        kilometres: 5, of: GeoPoint(latitude: 100, longitude: 0))))
        }
        await #expect(throws: TroveError.self) {
            try await places.fetch(
                Query(
                    Field("location").within(
                        kilometres: -1, of: GeoPoint(latitude: 0, longitude: 0))))
        }
        await #expect(throws: TroveError.self) {
            try await places.fetch(
                Query(Field("name").within(kilometres: 5, of: GeoPoint(latitude: 0, longitude: 0))))
        }
        await #expect(throws: TroveError.self) {
            try await places.fetch(
                Query(Field("location").within(GeoBox(south: 10, west: 0, north: -10, east: 5))))
        }
        await #expect(throws: TroveError.self) {
            try await places.search(Query().near(GeoPoint(latitude: 0, longitude: 0), in: "name"))
        }
        await #expect(throws: TroveError.self) {
            try await db.documents(
                "bad", schema: DocumentSchema(fields: [FieldDefinition("p", .point, indexed: true)])
            )
        }
    }

    @Test("the geo leg fuses with the text leg by reciprocal rank, and explain shows the plan")
    func fusion() async throws {
        let dir = try TemporaryDirectory()
        let (_, places, documents) = try await Self.seeded(800, seed: 4, at: dir.path("g.trove"))
        let here = GeoPoint(latitude: 45, longitude: 7)
        let query = Query(Field("kind") != "c").matching(.typed("quiet cafe wifi")).near(
            here, in: "location"
        ).limit(10)
        let hits = try await places.search(query)
        #expect(hits.count == 10)
        // Each leg on its own, then RRF (k = 60) over both, computed here.
        let depth = 50
        let text = try await places.search(
            Query(Field("kind") != "c").matching(.typed("quiet cafe wifi")).limit(depth))
        let geo = try await places.search(
            Query(Field("kind") != "c").near(here, in: "location").limit(depth))
        let points = documents.filter { $0["kind"] != "c" }.compactMap { d in
            d["location"]?.pointValue.map { (id: d.id.value.intValue!, point: $0) }
        }
        #expect(
            geo.map { $0.record.id.value.intValue! }
                == GeoOracle.nearest(points, to: here, k: depth).map(\.id))
        var score: [DocumentID: Double] = [:]
        for (rank, hit) in text.enumerated() {
            score[hit.record.id, default: 0] += 1 / (60 + Double(rank + 1))
        }
        for (rank, hit) in geo.enumerated() {
            score[hit.record.id, default: 0] += 1 / (60 + Double(rank + 1))
        }
        let expected = score.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(10).map(
                \.key)
        #expect(hits.map(\.record.id) == Array(expected))
        for hit in hits {
            if let rank = hit.geoRank {
                #expect(geo[rank - 1].record.id == hit.record.id && hit.kilometres != nil)
            }
            if let rank = hit.textRank { #expect(text[rank - 1].record.id == hit.record.id) }
            #expect(hit.geoRank != nil || hit.textRank != nil)
        }
        let plan = try await places.explain(
            query.filter(Field("location").within(kilometres: 500, of: here)))
        #expect(plan.contains { $0.hasPrefix("geo leg location: nearest to") })
        #expect(plan.contains { $0.contains("geo filter location: within 500.0 km") })
        #expect(plan.contains { $0.hasPrefix("fusion: reciprocal rank") })
        #expect(plan.contains { $0.contains("VIRTUAL TABLE") })
    }

    @Test("verify finds a damaged R*Tree and repair rebuilds it")
    func verifyRepair() async throws {
        let dir = try TemporaryDirectory()
        let (db, places, documents) = try await Self.seeded(300, seed: 8, at: dir.path("g.trove"))
        #expect(try await places.verify().isEmpty)
        let victim = documents.first { $0["location"]?.pointValue != nil }!
        try await db.write { tx in
            try tx.execute(
                "DELETE FROM places_geo_location WHERE id = ?",
                [.integer(victim.id.value.intValue!)])
            try tx.execute(
                "UPDATE places_geo_location SET lat = 0 WHERE id = (SELECT max(id) FROM places_geo_location)"
            )
        }
        let problems = try await places.verify()
        #expect(problems.contains { $0.hasPrefix("r*tree(location)") })
        let center = victim["location"]!.pointValue!
        #expect(
            try await places.fetch(Query(Field("location").within(kilometres: 0.001, of: center)))
                .isEmpty)
        try await places.repair()
        #expect(try await places.verify().isEmpty)
        #expect(
            try await places.fetch(Query(Field("location").within(kilometres: 0.001, of: center)))
                .map(\.id).contains(
                    victim.id))
    }

    @Test("the Links and Places articles quote their examples whole; the README links each")
    func docsQuoteExamples() throws {
        let readme = try DocumentationQuotes.text("README.md")
        for (folder, article) in [("Links", "LinksBetweenRecords"), ("Places", "Places")] {
            let source = try DocumentationQuotes.text("Examples/\(folder)/main.swift")
            let body = String(source[source.range(of: "let database")!.lowerBound...])
            let articleText = try DocumentationQuotes.text(
                "\(DocumentationQuotes.catalog)/\(article).md")
            #expect(
                DocumentationQuotes.codeBlocks(in: articleText).contains(
                    body.trimmingCharacters(in: .newlines)),
                "\(article).md differs from Examples/\(folder)/main.swift")
            #expect(
                readme.contains("](\(DocumentationQuotes.catalog)/\(article).md)")
                    && readme.contains("`Examples/\(folder)`"),
                "README does not lead to \(article).md and Examples/\(folder)")
        }
    }

    @Test("the geo leg fuses with a vector leg, and a filter restricts both")
    func fusionWithVectors() async throws {
        let dir = try TemporaryDirectory()
        let db = try Database(path: dir.path("v.trove"))
        let spots = try await db.documents(
            "spots",
            schema: DocumentSchema(
                fields: [.integer("kind"), .point("location"), .vector("embedding", dimension: 4)]))
        var rng = SeededGenerator(seed: 21)
        var documents: [Document] = []
        for i in 1...400 {
            documents.append(
                Document(
                    id: .int(Int64(i)),
                    [
                        "kind": .int(Int64(i % 3)),
                        "location": .point(
                            latitude: Double.random(in: 40...50, using: &rng),
                            longitude: Double.random(in: 0...10, using: &rng)),
                        "embedding": .vector(rng.unitVector(dimension: 4)),
                    ]))
        }
        try await spots.insert(documents)
        let here = GeoPoint(latitude: 45, longitude: 5)
        let q = rng.unitVector(dimension: 4)
        let filter = Field("kind") != 0
        let fused = try await spots.search(
            Query(filter).nearest(to: q, in: "embedding").near(here, in: "location").limit(10))
        let vector = try await spots.search(Query(filter).nearest(to: q, in: "embedding").limit(50))
        let geo = try await spots.search(Query(filter).near(here, in: "location").limit(50))
        var score: [DocumentID: Double] = [:]
        for (rank, hit) in vector.enumerated() {
            score[hit.record.id, default: 0] += 1 / (60 + Double(rank + 1))
        }
        for (rank, hit) in geo.enumerated() {
            score[hit.record.id, default: 0] += 1 / (60 + Double(rank + 1))
        }
        let expected = score.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(10).map(
                \.key)
        #expect(fused.map(\.record.id) == Array(expected))
        #expect(fused.allSatisfy { $0.record["kind"] != 0 })
        for hit in fused {
            #expect(hit.vectorRanks.count == 1)
            if let rank = hit.geoRank { #expect(geo[rank - 1].record.id == hit.record.id) }
            if let rank = hit.vectorRanks[0] {
                #expect(vector[rank - 1].record.id == hit.record.id)
            }
        }
    }

    @Test(
        "a point field cannot be ordered or grouped by, and dropping the collection drops its R*Tree"
    )
    func orderAndDrop() async throws {
        let dir = try TemporaryDirectory()
        let (db, places, _) = try await Self.seeded(50, seed: 9, at: dir.path("d.trove"))
        await #expect(throws: TroveError.self) {
            try await places.fetch(Query().sorted(by: .ascending("location")))
        }
        await #expect(throws: TroveError.self) {
            try await places.aggregate([.count()], groupBy: [Field("location")])
        }
        #expect(try await db.dropCollection("places"))
        let again = try await db.documents("places", schema: Self.schema)
        try await again.insert(
            Document(
                id: 1, ["name": "x", "kind": "a", "location": .point(latitude: 1, longitude: 1)]))
        #expect(
            try await again.count(
                where: Field("location").within(
                    kilometres: 1, of: GeoPoint(latitude: 1, longitude: 1)))
                == 1
        )
        #expect(try await again.verify().isEmpty)
    }
}
