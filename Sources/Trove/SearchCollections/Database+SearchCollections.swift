import Foundation
import TroveEmbeddings
import TroveSQLite
import TroveVectors

extension SearchCollection {
    /// Opens the search collection `name` in `database`, creating it with `configuration` when it
    /// does not exist.
    ///
    /// A search collection is opened by its own initializers, as SQLiteVecKit's `VectorStore` is,
    /// rather than by a `Database` method: `database.documents(...)` and `database.models(...)`
    /// name what they open, and a bare `collection(...)` would not say which kind.
    ///
    /// ```swift
    /// let notes = try await SearchCollection("notes", in: database, configuration: .init(dimension: 384))
    /// ```
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` when it exists with another
    ///   configuration (nothing is changed), ``TroveError/invalidName(_:reason:)``,
    ///   ``TroveError/invalidDimension(_:)``, ``TroveError/invalidConfiguration(_:)``.
    public init(_ name: String, in database: Database, configuration: CollectionConfiguration)
        async throws
    {
        self = try await database.openSearchCollection(
            name, requested: configuration, embedder: nil)
    }

    /// Opens or creates a search collection from its settings; see ``CollectionConfiguration``.
    public init(
        _ name: String, in database: Database, dimension: Int, metric: DistanceMetric = .cosine,
        lexicalSearch: Bool = true,
        metadataByteLimit: Int = CollectionConfiguration.defaultMetadataByteLimit,
        tokenizer: String = CollectionConfiguration.defaultTokenizer, index: IndexKind = .flat,
        ids: IDKind = .int64
    ) async throws {
        try await self.init(
            name, in: database,
            configuration: CollectionConfiguration(
                dimension: dimension, metric: metric, lexicalSearch: lexicalSearch,
                metadataByteLimit: metadataByteLimit, tokenizer: tokenizer, index: index, ids: ids))
    }

    /// Opens or creates a search collection whose vectors come from `embedder`. The embedder's
    /// manifest is frozen with the collection; opening it later with another model throws
    /// ``TroveError/embeddingMismatch(collection:stored:requested:)``.
    ///
    /// With `additionalEmbedders`, each row also keeps a vector from each of them, in a field of
    /// its own (``CollectionConfiguration/vectorFields``), and a text search has a leg per model.
    ///
    /// ```swift
    /// let notes = try await SearchCollection("notes", in: database, embedder: embedder)
    /// try await notes.insert(VectorEntry(content: "Dentist on Tuesday at 10", source: "calendar"))
    /// let hits = try await notes.search("when is the dentist?")
    /// ```
    public init(
        _ name: String, in database: Database, embedder: any Embedder,
        additionalEmbedders: [any Embedder] = [],
        metric: DistanceMetric = .cosine, lexicalSearch: Bool = true,
        metadataByteLimit: Int = CollectionConfiguration.defaultMetadataByteLimit,
        tokenizer: String = CollectionConfiguration.englishTokenizer, index: IndexKind = .flat,
        ids: IDKind = .int64
    ) async throws {
        let manifest = embedder.manifest
        let configuration = CollectionConfiguration(
            dimension: manifest.dimension, metric: metric, lexicalSearch: lexicalSearch,
            metadataByteLimit: metadataByteLimit, tokenizer: tokenizer, index: index,
            embedding: manifest, additionalEmbeddings: additionalEmbedders.map(\.manifest), ids: ids
        )
        self = try await database.openSearchCollection(
            name, requested: configuration, embedder: embedder,
            additionalEmbedders: additionalEmbedders)
    }

    /// Opens an existing search collection with its stored configuration.
    ///
    /// - Parameters:
    ///   - name: the collection's name.
    ///   - database: the database holding it.
    ///   - embedder: attach an embedder for the text-in API; it must match the manifest the
    ///     collection was created with.
    ///   - additionalEmbedders: attach the further models' embedders, in the order the
    ///     collection was created with (all of them, or none).
    /// - Throws: ``TroveError/collectionNotFound(_:)``,
    ///   ``TroveError/embeddingMismatch(collection:stored:requested:)``.
    public init(
        named name: String, in database: Database, embedder: (any Embedder)? = nil,
        additionalEmbedders: [any Embedder] = []
    ) async throws {
        let collection = try await database.openSearchCollection(
            name, requested: nil, embedder: nil)
        guard let embedder else {
            guard additionalEmbedders.isEmpty else {
                throw TroveError.invalidConfiguration(
                    "attach the first model's embedder with the further models'")
            }
            self = collection
            return
        }
        let configuration = collection.configuration
        let stored = [configuration.embedding] + configuration.additionalEmbeddings.map { $0 }
        let requested = [embedder] + additionalEmbedders
        for (index, embedder) in requested.enumerated() {
            guard let model = index < stored.count ? stored[index] : nil else {
                throw TroveError.schemaMismatch(
                    collection: name,
                    details:
                        "embedding: stored \(stored.compactMap { $0?.modelID }), requested \(requested.map(\.manifest.modelID))"
                )
            }
            guard model == embedder.manifest else {
                throw TroveError.embeddingMismatch(
                    collection: name, stored: model, requested: embedder.manifest)
            }
        }
        guard additionalEmbedders.isEmpty || requested.count == stored.count else {
            throw TroveError.schemaMismatch(
                collection: name,
                details:
                    "embedding: stored \(stored.compactMap { $0?.modelID }), requested \(requested.map(\.manifest.modelID))"
            )
        }
        self.init(
            documents: collection.documents, configuration: configuration,
            embedder: embedder, additionalEmbedders: additionalEmbedders)
    }
}

extension Database {
    /// Opens (or, with `requested`, creates) the search collection `name` on the writer.
    func openSearchCollection(
        _ name: String, requested: CollectionConfiguration?, embedder: (any Embedder)?,
        additionalEmbedders: [any Embedder] = []
    ) throws
        -> SearchCollection
    {
        let store = try searchStore(name, requested: requested)
        return SearchCollection(
            documents: DocumentCollection(database: self, store: store),
            configuration: store.preset, embedder: embedder,
            additionalEmbedders: additionalEmbedders)
    }

    /// The preset store of the search collection `name`, opened (or created) on the writer.
    func searchStore(_ name: String, requested: CollectionConfiguration?) throws -> DocumentStore {
        if let store = documentStores[name] {
            guard let stored = store.layout.preset else {
                throw TroveError.invalidName(
                    name,
                    reason: requested == nil
                        ? "it is a document collection: open it with documents(named:)"
                        : "a document collection of that name exists; search collections need their own name"
                )
            }
            if let requested {
                try requested.validate()
                if let a = stored.embedding, let b = requested.embedding, a != b {
                    throw TroveError.embeddingMismatch(collection: name, stored: a, requested: b)
                }
                let differences = stored.differences(from: requested)
                guard differences.isEmpty else {
                    throw TroveError.schemaMismatch(
                        collection: name, details: differences.joined(separator: "; "))
                }
            }
            return store
        }
        let store = try SearchCollectionTable.open(
            connection: connection, name: name, requested: requested, graph: documentStores.graph,
            clock: clock)
        documentStores[name] = store
        return store
    }

    /// The names of every collection in the file (search and document collections), sorted.
    public func collectionNames() throws -> [String] {
        try Self.collectionNames(on: connection)
    }

    static func collectionNames(on connection: Connection) throws -> [String] {
        try connection.query(
            """
            SELECT substr(key, 12) AS name FROM \(CollectionSchema.metaTable) WHERE key LIKE 'collection.%'
            UNION ALL
            SELECT substr(key, ?) FROM \(CollectionSchema.metaTable) WHERE key LIKE 'documents.%'
            ORDER BY name
            """, [.integer(Int64(DocumentLayout.metaKeyPrefix.count + 1))]
        ).compactMap { $0.string(at: 0) }
    }

    /// The stored configuration of a search collection, or nil when there is none of that name.
    public func configuration(of name: String) throws -> CollectionConfiguration? {
        guard try SearchCollectionTable.exists(name, on: connection) else { return nil }
        return try searchStore(name, requested: nil).preset
    }

    /// Deletes a collection of any kind: its rows, indexes, change log, snapshots and schema.
    ///
    /// - Returns: whether it existed.
    /// - Throws: ``TroveError/collectionReferenced(collection:by:)`` when another collection's
    ///   references point at it.
    @discardableResult
    public func dropCollection(_ name: String) throws -> Bool {
        if let configuration = try configuration(of: name) {
            let layout = DocumentLayout(preset: name, configuration: configuration)
            try connection.transaction(.immediate) { try layout.drop(on: connection) }
        } else {
            guard
                let schema = try DocumentStore.storedSchema(
                    connection, key: DocumentLayout.metaKeyPrefix + name, name: name)
            else {
                return false
            }
            let layout = DocumentLayout(name: name, schema: schema)
            try connection.transaction(.immediate) { try layout.drop(on: connection) }
        }
        connection.clearStatementCache()
        documentStores[name] = nil
        return true
    }
}

/// A search collection's table as stored: made by ``DocumentLayout`` from the preset schema (as
/// every collection's table is), its configuration under `collection.<name>` in `trove_meta`,
/// and opened as a ``DocumentStore`` over the preset layout.
enum SearchCollectionTable {
    /// Whether the file has a search collection `name`.
    static func exists(_ name: String, on connection: Connection) throws -> Bool {
        try connection.scalar(
            "SELECT 1 FROM \(CollectionSchema.metaTable) WHERE key = ?",
            [.text("collection.\(name)")]) != nil
    }

    /// Opens the search collection, creating it when `requested` is given and it does not exist.
    ///
    /// - Throws: ``TroveError/schemaMismatch(collection:details:)`` or
    ///   ``TroveError/embeddingMismatch(collection:stored:requested:)`` when the stored
    ///   configuration differs (nothing is changed), ``TroveError/collectionNotFound(_:)``,
    ///   ``TroveError/invalidName(_:reason:)`` when a document collection or another object has the name.
    static func open(
        connection: Connection, name: String, requested: CollectionConfiguration?,
        graph: GraphStore,
        clock: any ExpiryClock = SystemClock()
    ) throws -> DocumentStore {
        try CollectionSchema.validate(name: name)
        try requested?.validate()
        let configuration: CollectionConfiguration = try connection.transaction(
            connection.isReadOnly ? .deferred : .immediate
        ) {
            let key = "collection.\(name)"
            let storedJSON = try connection.scalar(
                "SELECT value FROM \(CollectionSchema.metaTable) WHERE key = ?", [.text(key)])?
                .stringValue
            if let storedJSON {
                let stored: CollectionConfiguration
                do {
                    stored = try JSONDecoder().decode(
                        CollectionConfiguration.self, from: Data(storedJSON.utf8))
                } catch {
                    throw TroveError.schemaMismatch(
                        collection: name, details: "stored configuration is unreadable: \(error)")
                }
                if let requested {
                    if let a = stored.embedding, let b = requested.embedding, a != b {
                        throw TroveError.embeddingMismatch(
                            collection: name, stored: a, requested: b)
                    }
                    let differences = stored.differences(from: requested)
                    if !differences.isEmpty {
                        throw TroveError.schemaMismatch(
                            collection: name, details: differences.joined(separator: "; "))
                    }
                }
                // Collections created before the FTS5 settings get them once, when writable
                // (they are rows in the FTS5 config table; only speed depends on them).
                let layout = DocumentLayout(preset: name, configuration: stored)
                if stored.lexicalSearch, !connection.isReadOnly,
                    try connection.scalar(
                        "SELECT 1 FROM \"\(layout.ftsName)_config\" WHERE k = 'hashsize'") == nil
                {
                    for statement in layout.ftsSettings {
                        try connection.execute(script: statement)
                    }
                }
                return stored
            }
            if try connection.scalar(
                "SELECT 1 FROM \(CollectionSchema.metaTable) WHERE key = ?",
                [.text(DocumentLayout.metaKeyPrefix + name)]) != nil
            {
                throw TroveError.invalidName(
                    name,
                    reason: requested == nil
                        ? "it is a document collection: open it with documents(named:)"
                        : "a document collection of that name exists; search collections need their own name"
                )
            }
            guard let requested else { throw TroveError.collectionNotFound(name) }
            let layout = DocumentLayout(preset: name, configuration: requested)
            // Checked before creating anything, never by matching SQLite's message text.
            for object in layout.objectNames {
                if try connection.scalar(
                    "SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE", [.text(object)])
                    != nil
                {
                    throw TroveError.invalidName(
                        name,
                        reason:
                            "the file already has a table or index that this collection needs (\(object))"
                    )
                }
            }
            for statement in try layout.createStatements() {
                try connection.execute(script: statement)
            }
            if requested.lexicalSearch {
                for statement in layout.ftsSettings { try connection.execute(script: statement) }
            }
            try connection.execute(
                "INSERT INTO \(CollectionSchema.metaTable)(key, value) VALUES (?, ?)",
                [.text(key), .text(requested.encodedJSON())])
            return requested
        }
        var layout = DocumentLayout(preset: name, configuration: configuration)
        // Read-only opens of files older than format 4 (writable opens upgrade them first):
        // before format 3 the rows have no versions (they read as 1); an Int64 collection's
        // log names its rows `id`.
        layout.hasVersions = try CollectionSchema.hasVersionColumn(name, on: connection)
        if try connection.scalar(
            "SELECT 1 FROM pragma_table_info(?) WHERE name = 'id'", [.text("\(name)_log")]) != nil
        {
            layout.logRid = "id"
        }
        if connection.isReadOnly,
            try connection.scalar(
                "SELECT 1 FROM sqlite_master WHERE name = ?", [.text(layout.snapshotTableName)])
                != nil
        {
            layout.legacySnapshotKeys =
                try connection.scalar(
                    "SELECT 1 FROM \"\(layout.snapshotTableName)\" WHERE name IN ('hnsw', 'flat') LIMIT 1"
                ) != nil
        }
        return DocumentStore(layout: layout, graph: graph, clock: clock)
    }
}
