import Foundation
import Testing
import Trove

/// Segments in a collection's FTS5 index, from its structure record (id 10 of the `_data`
/// table): a 4-byte cookie, then varints for the number of levels and of segments.
func ftsSegmentCount(_ db: Database, _ name: String) async throws -> Int {
    let rows = try await db.query("SELECT block FROM \(name)_fts_data WHERE id = 10")
    let bytes = try #require(rows.first?.blob(at: 0))
    var i = 4
    func varint() -> Int {
        var value = 0
        while i < bytes.count {
            let byte = bytes[i]
            i += 1
            value = (value << 7) | Int(byte & 0x7F)
            if byte & 0x80 == 0 { break }
        }
        return value
    }
    _ = varint()  // levels
    return varint()
}
