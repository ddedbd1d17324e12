import Foundation
import Trove
import TroveSQLite

/// What one sealed payload holds: a device's changes since its previous change set, by
/// collection and record, each field with its stamp. The sending device and its sequence number
/// are not inside: they travel beside the payload and are bound to it as associated data.
struct ChangeSet: Sendable, Hashable {
    /// The sender's schema version (migrations applied) when it sealed the set.
    var schemaVersion: Int
    var collections: [Collection]

    struct Collection: Sendable, Hashable {
        var name: String
        /// The embedding model of each vector field on the sender ("" when its schema names none).
        var manifests: [String: String]
        var records: [Record]
    }

    struct Record: Sendable, Hashable {
        var id: SQLValue
        /// The record's causal length: odd alive, even deleted.
        var cl: Int64
        var fields: [FieldChange]
    }

    struct FieldChange: Sendable, Hashable {
        var name: String
        /// The life the value belongs to.
        var cl: Int64
        var hlc: Int64
        var value: SQLValue
        /// The stamp the sender's edit overwrote (nil: none, or a new life).
        var baseHLC: Int64?
        var baseDevice: String?
    }

    /// The largest clock value in the set (a receiver's clock moves past it).
    var maxHLC: Int64 {
        collections.lazy.flatMap(\.records).flatMap(\.fields).map(\.hlc).max() ?? 0
    }

    var recordCount: Int { collections.reduce(0) { $0 + $1.records.count } }
}

/// A string naming an embedding model precisely enough to compare (two vectors are comparable
/// only when every part matches).
func manifestKey(_ manifest: EmbeddingManifest?) -> String {
    guard let m = manifest else { return "" }
    return [
        m.modelID, m.checksum, String(m.dimension), m.pooling, String(m.normalized),
        m.inputPrefix ?? "",
    ]
    .joined(separator: "|")
}
