import Foundation

/// A place on Earth: latitude -90...90 and longitude -180...180, in degrees (WGS 84 as GPS
/// reports it; distances treat the Earth as a sphere of mean radius 6,371.0088 km).
///
/// A `.point` field holds one; as a document value it is ``Value/point(latitude:longitude:)``.
///
/// ```swift
/// let here = GeoPoint(latitude: 52.52, longitude: 13.405)
/// try await cafes.insert(Document(id: 1, ["name": "Kaffee", "location": .point(here)]))
/// let near = Query(Field("location").within(kilometres: 2, of: here))
/// ```
public struct GeoPoint: Hashable, Sendable, Codable, CustomStringConvertible {
    public var latitude: Double
    public var longitude: Double

    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both coordinates are finite and in range.
    public var isValid: Bool {
        latitude.isFinite && longitude.isFinite && (-90...90).contains(latitude)
            && (-180...180).contains(longitude)
    }

    /// The great-circle (haversine) distance to `other`, in kilometres.
    public func distance(to other: GeoPoint) -> Double {
        GeoMath.kilometres(latitude, longitude, other.latitude, other.longitude)
    }

    public var description: String { "(\(latitude), \(longitude))" }

    func validated(field: String) throws -> GeoPoint {
        guard isValid else {
            throw TroveError.invalidPoint(field: field, latitude: latitude, longitude: longitude)
        }
        return self
    }
}

/// A latitude/longitude rectangle. `west > east` means the box crosses the antimeridian
/// (from 170° E eastwards to 170° W is `west: 170, east: -170`).
///
/// ```swift
/// let pacific = GeoBox(south: -20, west: 170, north: 10, east: -170)
/// let inside = Query(Field("location").within(pacific))
/// ```
public struct GeoBox: Hashable, Sendable, Codable {
    public var south: Double
    public var west: Double
    public var north: Double
    public var east: Double

    public init(south: Double, west: Double, north: Double, east: Double) {
        self.south = south
        self.west = west
        self.north = north
        self.east = east
    }

    /// Whether `point` is inside (edges included).
    public func contains(_ point: GeoPoint) -> Bool {
        guard point.latitude >= south, point.latitude <= north else { return false }
        return west <= east
            ? point.longitude >= west && point.longitude <= east
            : point.longitude >= west || point.longitude <= east
    }

    func validate(field: String) throws {
        for corner in [
            GeoPoint(latitude: south, longitude: west), GeoPoint(latitude: north, longitude: east),
        ] {
            _ = try corner.validated(field: field)
        }
        guard south <= north else {
            throw TroveError.invalidQuery(
                "a box's south (\(south)) must not be north of its north (\(north))")
        }
    }

    /// The longitude ranges (one, or two across the antimeridian).
    var longitudeRanges: [ClosedRange<Double>] {
        west <= east ? [west...east] : [west...180, -180...east]
    }
}

extension Value {
    /// A point field's value.
    public static func point(latitude: Double, longitude: Double) -> Value {
        .object(["latitude": .double(latitude), "longitude": .double(longitude)])
    }

    /// A point field's value.
    public static func point(_ point: GeoPoint) -> Value {
        .point(latitude: point.latitude, longitude: point.longitude)
    }

    /// The point, when this is an object with numeric `latitude` and `longitude` (what a point
    /// field reads back as) or an array `[latitude, longitude]`.
    public var pointValue: GeoPoint? {
        switch self {
        case .object(let members) where members.count == 2:
            guard let lat = members["latitude"]?.doubleValue,
                let lon = members["longitude"]?.doubleValue
            else {
                return nil
            }
            return GeoPoint(latitude: lat, longitude: lon)
        case .array(let items) where items.count == 2:
            guard let lat = items[0].doubleValue, let lon = items[1].doubleValue else { return nil }
            return GeoPoint(latitude: lat, longitude: lon)
        default:
            return nil
        }
    }
}

/// Great-circle arithmetic on a sphere.
enum GeoMath {
    /// The mean Earth radius (IUGG), in kilometres.
    static let earthRadius = 6371.0088
    /// Half the circumference: no two points are farther apart.
    static let maximumDistance = Double.pi * earthRadius

    /// The haversine distance in kilometres between two points given in degrees.
    @inline(__always)
    static func kilometres(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double
    {
        let radians = Double.pi / 180
        let dLat = (lat2 - lat1) * radians
        let dLon = (lon2 - lon1) * radians
        let a =
            sin(dLat / 2) * sin(dLat / 2) + cos(lat1 * radians) * cos(lat2 * radians)
            * sin(dLon / 2) * sin(dLon / 2)
        return 2 * earthRadius * asin(min(1, a.squareRoot()))
    }

    /// Latitude/longitude boxes that together contain every point within `kilometres` of
    /// `center` (the spherical cap's bounding box, split at the antimeridian; the whole
    /// longitude range when the cap holds a pole). Boxes are widened by a hair so rounding never
    /// drops a point that is exactly at the radius.
    static func boundingBoxes(around center: GeoPoint, kilometres: Double) -> [GeoBox] {
        let radians = Double.pi / 180
        let margin = 1e-9
        let delta = kilometres / earthRadius  // angular radius
        let lat = center.latitude * radians
        let south = (lat - delta) / radians - margin
        let north = (lat + delta) / radians + margin
        if delta >= Double.pi || north >= 90 || south <= -90 {
            return [GeoBox(south: max(-90, south), west: -180, north: min(90, north), east: 180)]
        }
        let ratio = sin(delta) / cos(lat)
        if ratio >= 1 { return [GeoBox(south: south, west: -180, north: north, east: 180)] }
        let dLon = asin(ratio) / radians + margin
        let west = center.longitude - dLon
        let east = center.longitude + dLon
        if west < -180 {
            return [
                GeoBox(south: south, west: west + 360, north: north, east: 180),
                GeoBox(south: south, west: -180, north: north, east: east),
            ]
        }
        if east > 180 {
            return [
                GeoBox(south: south, west: west, north: north, east: 180),
                GeoBox(south: south, west: -180, north: north, east: east - 360),
            ]
        }
        return [GeoBox(south: south, west: west, north: north, east: east)]
    }
}
