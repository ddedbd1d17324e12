import Foundation

/// What `trove backup --json` prints.
struct BackupResult: Codable, Equatable, Sendable {
    var database: String
    var backup: String
    var bytes: Int
}

/// What `trove dump --json` prints: the records written per collection, by name.
struct DumpResult: Codable, Equatable, Sendable {
    var database: String
    var dump: String
    var bytes: Int
    var records: NamedValues<Int>
}

/// What `trove load --json` prints: the records loaded per collection, and what was wrong.
struct LoadResult: Codable, Equatable, Sendable {
    var database: String
    var dump: String
    var records: NamedValues<Int>
    var problems: [String]
}

/// What `trove show --json` prints: one record.
struct RecordResult: Codable, Equatable, Sendable {
    /// A number or text (a UUID).
    var id: JSONValue
    var source: String
    var metadata: JSONValue?
    var content: String
    /// The vector's length.
    var dimension: Int
}

/// What `trove rm --json` prints.
struct RemovedRecords: Codable, Equatable, Sendable {
    var removed: Int
}

/// One built-in model as `trove model list --json` lists it (and `model install`/`remove
/// --json` print it).
struct ModelEntry: Codable, Equatable, Sendable {
    var name: String
    var installed: Bool
    var path: String
    /// Its size on disk when installed.
    var bytes: Int64?
    /// The checksum recorded at install time.
    var sha256: String?
    var expectedSHA256: String
    /// `package==version`.
    var package: String
    var summary: String

    enum CodingKeys: String, CodingKey {
        case name, installed, path, bytes, sha256
        case expectedSHA256 = "expected_sha256"
        case package, summary
    }
}

/// What `trove model list --json` prints.
struct ModelListResult: Codable, Equatable, Sendable {
    var models: [ModelEntry]
}
