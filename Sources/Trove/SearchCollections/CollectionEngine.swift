import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveText
import TroveVectors

/// The working state of one open collection on one connection: its schema, that connection's
/// statements, and the collection's in-memory indexes (shared, see ``PresetIndexState``).
///
/// The writer's engine lives on its ``Database`` actor; a search or read on a reader connection
/// makes a short-lived engine of its own over the same shared state. Not Sendable: each engine is
/// used by one task at a time.
final class CollectionEngine {
    let connection: Connection
    let schema: CollectionSchema
    var configuration: CollectionConfiguration { schema.configuration }
    var name: String { schema.name }
    /// The in-memory indexes, shared by every engine of this collection in this `Database`
    /// (see ``PresetIndexState``; CollectionEngine+Indexes.swift).
    let state: PresetIndexState
    /// Merges this collection's FTS5 segments after writes (nil for in-memory or read-only files,
    /// and on reader connections).
    var merger: BackgroundMerger?
    /// The search in progress, if any (CollectionEngine+SearchScope.swift).
    var searchScope: SearchScope?

    /// See ``ChangeLog/limit``.
    static let logLimit = ChangeLog.limit
    static let logKeep = ChangeLog.keep
    /// The largest topK accepted by searches.
    static let maxTopK = 100_000

    init(connection: Connection, schema: CollectionSchema, state: PresetIndexState? = nil) {
        self.connection = connection
        self.schema = schema
        self.state = state ?? PresetIndexState(schema: schema)
    }

    // MARK: Opening

    /// Opens the collection, creating it when `requested` is given and it does not exist.
    ///
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` or
    ///   ``TroveError/embeddingMismatch(collection:stored:requested:)`` when the stored
    ///   configuration differs (nothing is changed), ``TroveError/collectionNotFound(_:)``.
    /// - Parameters:
    ///   - graph, clock: the database's, for the collection's document view
    ///   (``PresetIndexState/documents``).
    static func open(
        connection: Connection, name: String, requested: CollectionConfiguration?,
        graph: GraphStore = GraphStore(), clock: any ExpiryClock = SystemClock()
    ) throws -> CollectionEngine {
        try CollectionSchema.validate(name: name)
        try requested?.validate()
        let configuration: CollectionConfiguration = try connection.transaction(
            connection.isReadOnly ? .deferred : .immediate
        ) {
            let key = CollectionSchema(name: name, configuration: CollectionConfiguration(dimension: 1)).configKey
            let storedJSON = try connection.scalar(
                "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(key)])?.stringValue
            if let storedJSON {
                let stored: CollectionConfiguration
                do {
                    stored = try JSONDecoder().decode(CollectionConfiguration.self, from: Data(storedJSON.utf8))
                } catch {
                    throw TroveError.schemaMismatch(
                        collection: name, details: "stored configuration is unreadable: \(error)")
                }
                if let requested {
                    if let a = stored.embedding, let b = requested.embedding, a != b {
                        throw TroveError.embeddingMismatch(collection: name, stored: a, requested: b)
                    }
                    let differences = stored.differences(from: requested)
                    if !differences.isEmpty {
                        throw TroveError.schemaMismatch(collection: name, details: differences.joined(separator: "; "))
                    }
                }
                // Collections created before the FTS5 settings get them once, when writable
                // (they are rows in the FTS5 config table; only speed depends on them).
                let schema = CollectionSchema(name: name, configuration: stored)
                if stored.lexicalSearch, !connection.isReadOnly,
                    try connection.scalar("SELECT 1 FROM \"\(schema.ftsName)_config\" WHERE k = 'hashsize'") == nil
                {
                    for statement in schema.ftsSettings { try connection.execute(script: statement) }
                }
                return stored
            }
            guard let requested else { throw TroveError.collectionNotFound(name) }
            let schema = CollectionSchema(name: name, configuration: requested)
            // Checked before creating anything, never by matching SQLite's message text.
            for object in schema.objectNames {
                if try connection.scalar("SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(object)]) != nil {
                    throw TroveError.invalidName(name, reason: "the file already has a table or index that this collection needs (\(object))")
                }
            }
            if try connection.scalar("SELECT 1 FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(DocumentLayout.metaKeyPrefix + name)]) != nil {
                throw TroveError.invalidName(name, reason: "a document collection of that name exists")
            }
            for statement in schema.createStatements { try connection.execute(script: statement) }
            try connection.execute(
                "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?)",
                [.text(key), .text(requested.encodedJSON())])
            return requested
        }
        let schema = CollectionSchema(name: name, configuration: configuration)
        let hasVersions = try CollectionSchema.hasVersionColumn(name, on: connection)
        let state = PresetIndexState(schema: schema, graph: graph, clock: clock, hasVersions: hasVersions)
        return CollectionEngine(connection: connection, schema: schema, state: state)
    }

    // MARK: The change log

    /// The collection's change log.
    var changeLog: ChangeLog { ChangeLog(table: schema.log, floorKey: schema.logFloorKey) }

    /// The log's newest seq and the highest seq ever pruned from it.
    func logState() throws -> (maxSeq: Int64, floor: Int64) { try changeLog.state(connection) }

    /// Reads a stored embedding; nil when NULL, the wrong length, or not finite (raw SQL can
    /// store such blobs; they are treated as "no vector" rather than poisoning the index).
    func decodeVector(_ statement: Statement, column: Int) -> [Float]? {
        statement.withBlob(at: column) { bytes in bytes.flatMap { VectorBlob.vector($0, dimension: configuration.dimension) } }
    }
}
