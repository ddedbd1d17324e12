import Foundation
import Trove

/// Brute-force geography for tests, written apart from Trove's own code: haversine distance and
/// box containment over plain arrays.
enum GeoOracle {
    static let radius = 6371.0088

    static func kilometres(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let r = Double.pi / 180
        let h =
            pow(sin((b.latitude - a.latitude) * r / 2), 2)
            + cos(a.latitude * r) * cos(b.latitude * r)
            * pow(sin((b.longitude - a.longitude) * r / 2), 2)
        return 2 * radius * asin(min(1, sqrt(h)))
    }

    static func inside(_ p: GeoPoint, _ box: GeoBox) -> Bool {
        guard p.latitude >= box.south && p.latitude <= box.north else { return false }
        if box.west <= box.east { return p.longitude >= box.west && p.longitude <= box.east }
        return p.longitude >= box.west || p.longitude <= box.east
    }

    /// The k nearest (id, km), ties by id.
    static func nearest(
        _ points: [(id: Int64, point: GeoPoint)], to center: GeoPoint, k: Int,
        within limit: Double = .infinity
    ) -> [(id: Int64, km: Double)] {
        var all: [(id: Int64, km: Double)] = []
        for p in points {
            let d = kilometres(p.point, center)
            if d <= limit { all.append((p.id, d)) }
        }
        all.sort { a, b in a.km != b.km ? a.km < b.km : a.id < b.id }
        return Array(all.prefix(k))
    }
}
