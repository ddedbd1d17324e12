import Foundation

/// What `trove index` did; printed as one line, or as JSON with `--json`:
///
/// ```
/// indexed 62 files: 62 added, 0 updated, 0 removed, 0 unchanged (77 chunks) in 9.7 s
/// {"added":62,"updated":0,"removed":0,"unchanged":0,"failed":0,"skipped":0,"chunks":77,...}
/// ```
///
/// (`--json` prints it inside ``IndexResult``; `--watch --json` inside ``WatchBatchResult``.)
struct IndexSummary: Codable, Sendable, Equatable {
    var added = 0
    var updated = 0
    var removed = 0
    var unchanged = 0
    var failed = 0
    /// Binary files passed over (not notes).
    var skipped = 0
    /// Chunks written (added and updated files).
    var chunks = 0
    var seconds = 0.0
    /// Files looked at and bytes read, for the progress bar.
    var processed = 0
    var bytesRead = 0

    /// The counts and the time, to the millisecond, as `--json` prints them.
    enum CodingKeys: String, CodingKey {
        case added, updated, removed, unchanged, failed, skipped, chunks, seconds
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        for (key, count) in [
            (CodingKeys.added, added), (.updated, updated), (.removed, removed),
            (.unchanged, unchanged), (.failed, failed), (.skipped, skipped), (.chunks, chunks),
        ] {
            try container.encode(count, forKey: key)
        }
        try container.encode((seconds * 1000).rounded() / 1000, forKey: .seconds)
    }

    var line: String {
        var text =
            "\(added) added, \(updated) updated, \(removed) removed, \(unchanged) unchanged"
        if failed > 0 { text += ", \(failed) failed" }
        if skipped > 0 { text += ", \(skipped) binary skipped" }
        return text + " (\(chunks) chunks) in " + String(format: "%.1f", seconds) + " s"
    }
}

/// What `trove index --json` prints and the MCP index tool returns: the counts of
/// ``IndexSummary``, then the collections refreshed and the database.
struct IndexResult: Codable, Equatable, Sendable {
    var summary: IndexSummary
    var collections: [String]
    var database: String

    private enum CodingKeys: String, CodingKey { case collections, database }

    init(summary: IndexSummary, collections: [String], database: String) {
        (self.summary, self.collections, self.database) = (summary, collections, database)
    }

    init(from decoder: any Decoder) throws {
        summary = try IndexSummary(from: decoder)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        collections = try container.decode([String].self, forKey: .collections)
        database = try container.decode(String.self, forKey: .database)
    }

    /// The summary's members first, then these, in one object.
    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(collections, forKey: .collections)
        try container.encode(database, forKey: .database)
    }
}

/// One line of `trove index --watch --json`: a batch's ``IndexSummary`` and how long it took
/// from the first file event to the commit.
struct WatchBatchResult: Codable, Equatable, Sendable {
    var summary: IndexSummary
    var latencyMilliseconds: Int

    private enum CodingKeys: String, CodingKey { case latencyMilliseconds }

    init(summary: IndexSummary, latencyMilliseconds: Int) {
        (self.summary, self.latencyMilliseconds) = (summary, latencyMilliseconds)
    }

    init(from decoder: any Decoder) throws {
        summary = try IndexSummary(from: decoder)
        latencyMilliseconds = try decoder.container(keyedBy: CodingKeys.self)
            .decode(Int.self, forKey: .latencyMilliseconds)
    }

    func encode(to encoder: any Encoder) throws {
        try summary.encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
    }
}
