import Foundation
import Trove
import TroveSync
import TroveTestSupport

/// The notes schema every sync test uses: text, an optional body, a rank, JSON tags, a vector
/// made by the test embedder, full text over title and body, expiry allowed.
enum Notes {
    static let embedder = HashingEmbedder(dimension: 16)

    static func schema(
        extraFields: [FieldDefinition] = [], embedder: HashingEmbedder = Notes.embedder
    )
        -> DocumentSchema
    {
        DocumentSchema(
            id: .string,
            fields: [
                .text("title"), .text("body", optional: true), .integer("rank", optional: true),
                .json("tags", optional: true),
                .vector("embedding", dimension: embedder.manifest.dimension, optional: true),
            ] + extraFields,
            fullText: FullTextDefinition(fields: ["title", "body"]),
            embeddingSources: [
                "embedding": EmbeddingSource(textField: "body", manifest: embedder.manifest)
            ],
            allowsExpiry: true)
    }

    static func note(_ id: String, title: String, body: String? = nil, rank: Int64? = nil)
        -> Document
    {
        var fields: [String: Value] = ["title": .string(title)]
        if let body {
            fields["body"] = .string(body)
            fields["embedding"] = .vector(embedder.vector(body))
        }
        if let rank { fields["rank"] = .int(rank) }
        return Document(id: .string(id), fields)
    }
}

/// One device: its own database file and sync space.
struct Device {
    let name: String
    let database: Database
    let sync: SyncSpace
    var notes: DocumentCollection {
        get async throws { try await database.documents(named: "notes") }
    }

    static func make(
        _ name: String, in directory: TemporaryDirectory, transport: any SyncTransport,
        key: SyncKey,
        space: String = "space", schema: DocumentSchema = Notes.schema()
    ) async throws -> Device {
        try await make(
            name, database: Database(path: directory.path("\(name).trove")), transport: transport,
            key: key,
            space: space, schema: schema)
    }

    static func make(
        _ name: String, database: Database, transport: any SyncTransport, key: SyncKey,
        space: String = "space",
        schema: DocumentSchema = Notes.schema()
    ) async throws -> Device {
        _ = try await database.documents("notes", schema: schema)
        let sync = try await SyncSpace(
            database: database, space: space, key: key, transport: transport, collections: ["notes"]
        )
        return Device(name: name, database: database, sync: sync)
    }

    /// ``canonicalDump(of:)`` of the device's database.
    func canonicalDump() async throws -> [String] {
        try await TroveSyncTests.canonicalDump(of: database)
    }
}

/// The database's dump with what is local to a device taken out: each record's `_version`
/// (how many times this file updated it), the links' internal row ids and when this file ran
/// each migration, rows then sorted. Everything else (ids, fields, expiry times, links, schemas)
/// must be identical on every device of a space.
func canonicalDump(of database: Database) async throws -> [String] {
    let collected = Collected()
    _ = try await database.dump { data in collected.append(data) }
    let lines = String(decoding: collected.data, as: UTF8.self).split(separator: "\n").map(
        String.init)
    guard let headerLine = lines.first,
        let header = try JSONSerialization.jsonObject(with: Data(headerLine.utf8))
            as? [String: Any],
        let sections = header["sections"] as? [[String: Any]]
    else { return lines }
    var dropped: [String: Set<Int>] = [:]
    var headerSections: [String] = []
    for section in sections {
        let name = section["name"] as? String ?? ""
        let columns = section["columns"] as? [String] ?? []
        var drop = Set<Int>()
        for (i, column) in columns.enumerated()
        where column == "_version" || (name == "_trove_edges" && column == "id")
            || (name == "trove_migrations" && column == "applied_at")
        {
            drop.insert(i)
        }
        dropped[name] = drop
        headerSections.append(
            "\(section["kind"] ?? "") \(name) \(columns) \(section["records"] ?? "")")
    }
    var records: [String] = []
    for line in lines.dropFirst() {
        guard
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let section = object["c"] as? String, let values = object["v"] as? [Any]
        else { continue }  // the trailer: its checksum covers the local columns too
        let kept = values.enumerated().filter { !(dropped[section] ?? []).contains($0.offset) }.map(
            \.element)
        let text = try JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys])
        records.append(section + " " + String(decoding: text, as: UTF8.self))
    }
    return headerSections + records.sorted()
}

final class Collected: @unchecked Sendable {
    // Appended to by the dump's writer, one call at a time; read after the dump returns.
    private let lock = NSLock()
    private var buffer = Data()
    func append(_ data: Data) { lock.withLock { buffer.append(data) } }
    var data: Data { lock.withLock { buffer } }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
}
