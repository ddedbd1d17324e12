// Places: a point field indexed by an R*Tree; radius and box filters, nearest-k with distances, and a
// geo leg fused with a text leg ("quiet cafe with wifi" near here).
// Run: swift run example-places [folder]
import Foundation
import Trove

let folder = CommandLine.arguments.dropFirst().first ?? NSTemporaryDirectory()
let path = URL(fileURLWithPath: folder).appendingPathComponent("places-\(ProcessInfo.processInfo.processIdentifier).trove").path
defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }

let database = try Database(path: path)
let cafes = try await database.documents("cafes", schema: DocumentSchema(
    fields: [.text("name"), .text("notes"), .point("location")],
    fullText: FullTextDefinition(fields: ["notes"])))
try await cafes.insert([
    Document(id: 1, ["name": "Kaffeebar", "notes": "quiet, fast wifi", "location": .point(latitude: 52.5208, longitude: 13.4095)]),
    Document(id: 2, ["name": "Bohnen", "notes": "loud music, no wifi", "location": .point(latitude: 52.5163, longitude: 13.3777)]),
    Document(id: 3, ["name": "Stille", "notes": "quiet garden with wifi", "location": .point(latitude: 52.4900, longitude: 13.4200)]),
    Document(id: 4, ["name": "Hafen", "notes": "quiet cafe by the harbour, wifi", "location": .point(latitude: 53.5461, longitude: 9.9660)]),
    Document(id: 5, ["name": "Dateline", "notes": "wifi on both sides of 180°", "location": .point(latitude: -16.78, longitude: 179.99)]),
])

let here = GeoPoint(latitude: 52.5200, longitude: 13.4050)   // Berlin, Alexanderplatz
let nearby = try await cafes.fetch(Query(Field("location").within(kilometres: 5, of: here)))
print("within 5 km:", nearby.map { $0["name"]!.stringValue! })

let pacific = GeoBox(south: -20, west: 170, north: 0, east: -170)   // crosses the antimeridian
print("in the box:", try await cafes.fetch(Query(Field("location").within(pacific))).map { $0["name"]!.stringValue! })

for hit in try await cafes.search(Query().near(here, in: "location").limit(3)) {
    print("nearest:", hit.record["name"]!.stringValue!, String(format: "%.2f km", hit.kilometres!))
}

// "quiet cafe with wifi" near here: the text leg and the geo leg fused by reciprocal rank.
let query = Query().matching(.typed("quiet wifi")).near(here, in: "location", within: 500).limit(3)
for hit in try await cafes.search(query) {
    print("fused:", hit.record["name"]!.stringValue!, "| text rank", hit.textRank.map(String.init) ?? "-",
          "| geo rank", hit.geoRank.map(String.init) ?? "-")
}
print("plan:")
for line in try await cafes.explain(query) { print(" ", line) }

// Points are validated: a latitude beyond 90 is a typed error and nothing is written.
do {
    try await cafes.insert(Document(id: 6, ["name": "Nowhere", "notes": "", "location": .point(latitude: 91, longitude: 0)]))
} catch let error as TroveError {
    print("error:", error)
}
