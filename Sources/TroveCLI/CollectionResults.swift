import Foundation

/// What `trove collection list --json` prints and the MCP list_collections tool returns.
struct CollectionListResult: Codable, Equatable, Sendable {
    var collections: [Item]

    /// One collection: its folders, file mask, context, and what it holds.
    struct Item: Codable, Equatable, Sendable {
        var name: String
        var paths: [String]
        var mask: String
        /// What the collection's notes are.
        var context: String?
        var files: Int
        var records: Int
    }
}

/// What `trove collection remove --json` prints.
struct CollectionRemoved: Codable, Equatable, Sendable {
    /// The collection's name.
    var removed: String
    /// Records removed with it.
    var records: Int
}

/// What `trove collection rename --json` prints.
struct CollectionRenamed: Codable, Equatable, Sendable {
    /// The old name.
    var renamed: String
    /// The new name.
    var to: String
}
