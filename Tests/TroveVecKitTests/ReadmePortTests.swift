// SQLiteVecKit's README (and the Snippets/ it mirrors), ported with one change: its
// `import SQLiteVecStore` is `import TroveVecKit`. Each `readme…` function holds one section's
// code as the README prints it; the README's free names (embedding, queryEmbedding, question,
// documents, chunk, embed, v, fetchEmbedding) are its parameters or the helpers at the bottom.
// The tests run the sections on a real store and check what they return.
//
// This file imports nothing else from Trove, so every name in it resolves as it would for a
// SQLiteVecKit user.

import Foundation
import Testing
import TroveTestSupport
import TroveVecKit

// MARK: README, section by section

/// 1. Create a store (verbatim; compiled, not run: it writes to the documents folder).
/// `URL.documentsDirectory` is Apple's Foundation only; Linux spells that folder another way.
func readmeCreateAStore() throws -> VectorStore {
    #if canImport(Darwin)
        let url = URL.documentsDirectory.appendingPathComponent("vectors.db")
    #else
        let url = FileManager.default.urls(for: .documentDirectory, in: .userDomainMask)[0]
            .appendingPathComponent(
                "vectors.db")
    #endif
    let store = try VectorStore(
        dbPath: url.path,
        dimension: 512,  // MUST match your embedding model's output size
        distanceMetric: .cosine,  // default; use .l2 for Euclidean distance
        tableName: "chunks"  // default; [A-Za-z_][A-Za-z0-9_]* only
            // metadataByteLimit: VectorStore.defaultMetadataByteLimit  (16 KB)
            // lexicalSearch: true     // maintain the FTS5 index for searchText/searchHybrid
    )
    return store
}

/// 2. (Optional) Define a metadata type.
struct ChunkInfo: Codable {
    let page: Int
    let section: String
    let ingestedAt: Date
}

/// 3. Insert your chunks.
func readmeInsert(store: VectorStore, embedding: [Float], v: [Float], documents: [ReadmeDocument])
    async throws
    -> (entry: VectorEntry, raw: VectorEntry, plain: VectorEntry, newID: Int)
{
    // With Codable metadata (note the `encoding:` label — the value is JSON-encoded for you):
    let entry = try VectorEntry(
        id: 42,  // unique per row; you own id assignment
        content: "The mitochondria is the powerhouse of the cell.",
        source: "biology_notes.txt",  // filterable in searches
        encoding: ChunkInfo(page: 3, section: "Cells", ingestedAt: .now),
        vector: embedding  // [Float] (or [Double]), exactly `dimension` elements
    )

    // With a raw pre-built JSON string (stored verbatim), or no metadata at all:
    let raw = VectorEntry(id: 43, content: "…", source: "…", metadata: #"{"page":4}"#, vector: v)
    let plain = VectorEntry(id: 44, content: "…", source: "…", vector: v)

    try await store.insert(entry)

    // Labeled convenience, without building a VectorEntry:
    try await store.insert(id: 45, content: "…", source: "…", vector: v)

    // Or let SQLite assign the id (returned):
    let newID = try await store.insert(content: "…", source: "…", vector: v)

    let entries: [VectorEntry] = documents.flatMap { doc in
        chunk(doc).enumerated().map { index, text in
            VectorEntry(
                id: doc.baseID + index, content: text, source: doc.name,
                vector: embed(text))
        }
    }
    try await store.insertBatch(entries)
    return (entry, raw, plain, newID)
}

/// 4. Search.
func readmeSearch(store: VectorStore, queryEmbedding: [Float]) async throws -> (
    all: [SearchResult], scoped: [SearchResult], pages: [Int]
) {
    var pages: [Int] = []
    let results = try await store.search(vector: queryEmbedding, topK: 5)

    for result in results {
        print("[\(result.id)] [\(result.source)] d=\(result.distance)")
        print(result.content)
        if let info = try result.decodeMetadata(ChunkInfo.self) {
            print("page \(info.page), section \(info.section)")
            pages.append(info.page)
        }
    }

    let scoped = try await store.search(
        vector: queryEmbedding, topK: 5, source: "biology_notes.txt")
    return (results, scoped, pages)
}

/// 5. Update, upsert, delete, read back.
func readmeMaintain(store: VectorStore, entry: VectorEntry) async throws -> (
    entry: VectorEntry?, exists: Bool, total: Int, inDoc: Int
) {
    try await store.update(entry)  // throws .rowNotFound if the id does not exist
    try await store.upsert(entry)  // insert-or-replace (transactional DELETE + INSERT)
    try await store.delete(id: 42)  // no-op if the id does not exist
    try await store.delete(source: "doc")  // drop every chunk of one document (re-ingest unit)
    try await store.deleteAll()
    let entry = try await store.fetch(id: 42)  // full row incl. embedding, nil if missing
    let exists = try await store.contains(id: 42)
    let total = try await store.count()
    let inDoc = try await store.count(source: "doc")
    return (entry, exists, total, inDoc)
}

/// 6. Lexical & hybrid search.
func readmeLexicalAndHybrid(store: VectorStore, question: String, queryEmbedding: [Float])
    async throws
    -> (lexical: [SearchResult], hybrid: [HybridSearchResult])
{
    // Lexical, ranked by BM25 (SearchResult.distance carries the BM25 score;
    // negative, lower = better). FTS5 syntax: terms, "phrases", AND/OR/NOT, prefix*.
    let lexical = try await store.searchText("mitochondria", topK: 5)

    // Hybrid: vector + lexical fused with Reciprocal Rank Fusion — a row that
    // scores well in both lists ranks first. `score` is higher = better.
    let hybrid = try await store.searchHybrid(text: question, vector: queryEmbedding, topK: 5)
    for hit in hybrid {
        print(hit.content, hit.score, hit.vectorRank ?? "-", hit.textRank ?? "-")
    }
    return (lexical, hybrid)
}

/// 7. Filtering with SQL (both snippets).
func readmeFiltering(store: VectorStore, queryEmbedding: [Float]) async throws -> (
    results: [SearchResult], visible: [SearchResult]
) {
    let results = try await store.search(
        vector: queryEmbedding,
        topK: 20,
        where: "json_extract(metadata, '$.lang') = ? AND json_extract(metadata, '$.page') > ?",
        bindings: [.text("en"), .int(10)]
    )

    let candidates = try await store.search(
        vector: queryEmbedding,
        topK: 50,
        where: "json_extract(metadata, '$.section') = ?",
        bindings: [.text("Cells")]
    )
    let visible = Array(candidates.prefix(5))
    return (results, visible)
}

/// 8. Your own tables in the same database.
func readmeOwnTables(store: VectorStore) async throws -> String? {
    try await store.execute("CREATE TABLE IF NOT EXISTS docs(name TEXT PRIMARY KEY, author TEXT)")
    try await store.execute(
        "INSERT INTO docs VALUES (?, ?)", bindings: [.text("bio"), .text("Alice")])

    let rows = try await store.query(
        """
        SELECT c.content, d.author
        FROM chunks c JOIN docs d ON d.name = c.source
        WHERE c.id = ?
        """, bindings: [.int(1)])
    let author = rows.first?.text("author")  // typed accessors: int/double/text/blob
    return author
}

/// 9. Embedding-space manifest (the README's type).
struct EmbeddingSpaceManifest: Codable, Equatable {
    let modelID: String
    let modelRevision: String
    let dimension: Int
    let distanceMetric: String
    let languageStrategy: String
    let poolingStrategy: String
    let transformID: String?
    let transformVersion: String?
    let centroidHash: String?
}

/// Working with `[Double]` embeddings.
func readmeDoubles(store: VectorStore, query: String) async throws -> (
    entry: VectorEntry, results: [SearchResult]
) {
    let doubles: [Double] = try await fetchEmbedding(for: query)

    let entry = VectorEntry(id: 1, content: "…", source: "…", vector: doubles)
    try await store.insert(id: 2, content: "…", source: "…", vector: doubles)
    let results = try await store.search(vector: doubles, topK: 5)
    return (entry, results)
}

/// Error handling.
func readmeErrorHandling(store: VectorStore, entry: VectorEntry) async throws -> String? {
    var described: String?
    do {
        try await store.insert(entry)
    } catch let error as SQLiteError {
        print(error.localizedDescription)  // includes SQLite error code and detail message
        described = error.localizedDescription
    }
    return described
}

/// Diagnostics.
func readmeDiagnostics() -> String {
    VectorStore.bundledVecVersion  // "v0.1.9"
}

// MARK: Snippets/ (what the README's snippets mirror, beyond the README's own lines)

/// Snippets/CreatingAStore.swift.
func snippetCreatingAStore() async throws -> Int {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "vectors-\(UUID().uuidString).db")
    defer { try? FileManager.default.removeItem(at: url) }

    let store = try VectorStore(
        dbURL: url,  // or dbPath: String
        dimension: 512,  // MUST match your embedding model's output size
        distanceMetric: .cosine,  // default; .l2 for Euclidean distance
        tableName: "chunks",  // default; [A-Za-z_][A-Za-z0-9_]* only
        metadataByteLimit: VectorStore.defaultMetadataByteLimit,  // 16 KB per row
        lexicalSearch: true  // maintain the FTS5 index for searchText/searchHybrid
    )

    let rows = try await store.count()
    return rows
}

/// Snippets/FilteringWithSQL.swift: the text-search filter.
func snippetFilteringText(store: VectorStore) async throws -> [SearchResult] {
    let lexical = try await store.searchText(
        "cell",
        where: "json_extract(metadata, '$.page') <= ?",
        bindings: [.int(50)]
    )
    return lexical
}

/// Snippets/EmbeddingSpaceManifest.swift.
func snippetManifest(store: VectorStore) async throws -> Bool {
    let manifest = EmbeddingSpaceManifest(
        modelID: "com.example.LocalEmbedding",
        modelRevision: "2026-07-01",
        dimension: 512,
        distanceMetric: DistanceMetric.cosine.rawValue,
        languageStrategy: "english-only",
        poolingStrategy: "mean-token-pooling",
        transformID: "mean-centering",
        transformVersion: "v1",
        centroidHash: "sha256:7f4b..."
    )

    try await store.execute(
        """
        CREATE TABLE IF NOT EXISTS embedding_space_manifest(
            key TEXT PRIMARY KEY CHECK (key = 'current'),
            json TEXT NOT NULL
        )
        """)

    let data = try JSONEncoder().encode(manifest)
    let json = String(decoding: data, as: UTF8.self)

    try await store.execute(
        """
        INSERT OR REPLACE INTO embedding_space_manifest(key, json)
        VALUES ('current', ?)
        """, bindings: [.text(json)])

    let rows = try await store.query(
        "SELECT json FROM embedding_space_manifest WHERE key = 'current'")
    if let savedJSON = rows.first?.text("json") {
        let saved = try JSONDecoder().decode(
            EmbeddingSpaceManifest.self,
            from: Data(savedJSON.utf8)
        )
        precondition(saved == manifest)
        return true
    }
    return false
}

/// Snippets/OwnTables.swift: the update's changed-row count.
func snippetOwnTablesUpdate(store: VectorStore) async throws -> Int {
    let changed = try await store.execute(
        "UPDATE docs SET author = ? WHERE name = ?",
        bindings: [.text("Bob"), .text("bio")])
    print("\(changed) row(s) updated")
    return changed
}

// MARK: The README's free names

/// A document to chunk (the README's `documents` elements).
struct ReadmeDocument {
    let baseID: Int
    let name: String
    let text: String
}

/// One chunk per sentence.
func chunk(_ document: ReadmeDocument) -> [String] {
    document.text.split(separator: ".").map { $0.trimmingCharacters(in: .whitespaces) + "." }
}

/// A deterministic 512-d bag-of-words embedding: texts sharing words are near.
func embed(_ text: String) -> [Float] { HashingEmbedder(dimension: 512).vector(text) }

/// What an embedding API returning doubles would give.
func fetchEmbedding(for text: String) async throws -> [Double] { embed(text).map(Double.init) }

// MARK: Running them

@Suite("SQLiteVecKit README, ported")
struct ReadmePortTests {
    let directory: TemporaryDirectory
    let store: VectorStore

    init() throws {
        directory = try TemporaryDirectory()
        store = try VectorStore(dbPath: directory.path("vectors.db"), dimension: 512)
    }

    static let documents = [
        ReadmeDocument(
            baseID: 100, name: "physics.txt",
            text: "Light travels fast. Gravity bends light near stars"),
        ReadmeDocument(
            baseID: 200, name: "cooking.txt", text: "Bread needs yeast. Soup needs salt and time"),
    ]
    // Every word of an FTS5 query must occur in a row (implicit AND), so no "what is".
    static let question = "the powerhouse of the cell"

    /// The store after section 3.
    func ingested() async throws -> VectorEntry {
        let v = embed("an unrelated note")
        let inserted = try await readmeInsert(
            store: store, embedding: embed("The mitochondria is the powerhouse of the cell."), v: v,
            documents: Self.documents)
        #expect(inserted.newID == 46)  // one above the largest id so far (45)
        #expect(inserted.raw.metadata == #"{"page":4}"#)
        #expect(inserted.plain.metadata == nil)
        return inserted.entry
    }

    @Test(
        "1 and the CreatingAStore snippet: a new store is empty; the documents-folder version compiles"
    )
    func create() async throws {
        #expect(try await snippetCreatingAStore() == 0)
        _ = readmeCreateAStore  // compiled; running it would write to the user's documents folder
        #expect(
            store.dimension == 512 && store.distanceMetric == .cosine && store.tableName == "chunks"
        )
    }

    @Test("3: insert, the labeled forms, an assigned id and a batch")
    func insert() async throws {
        let entry = try await ingested()
        #expect(try await store.count() == 3 + 4)  // 42, 45, the assigned 46, and four sentences
        #expect(try await store.fetch(id: 42) == entry)
        #expect(try await store.count(source: "physics.txt") == 2)
        #expect(try await store.fetch(id: 201)?.content == "Soup needs salt and time.")
        let info = try #require(
            try await store.search(vector: entry.vector, topK: 1).first?.decodeMetadata(
                ChunkInfo.self))
        #expect(info.page == 3 && info.section == "Cells")
    }

    @Test("4: vector search, nearest first, metadata decoded, scoped to a source")
    func search() async throws {
        _ = try await ingested()
        let found = try await readmeSearch(store: store, queryEmbedding: embed(Self.question))
        #expect(found.all.first?.id == 42)
        #expect(found.all.count == 5)
        #expect(found.all.map(\.distance) == found.all.map(\.distance).sorted())
        #expect(found.pages == [3])
        #expect(found.scoped.map(\.id) == [42])
    }

    @Test("5: update, upsert, delete, read back")
    func maintain() async throws {
        let entry = try await ingested()
        let state = try await readmeMaintain(store: store, entry: entry)
        #expect(state.entry == nil && !state.exists && state.total == 0 && state.inDoc == 0)
        await #expect(throws: SQLiteError.self) { try await store.update(entry) }
    }

    @Test("6: BM25 in distance for text search; hybrid ranks the row both lists agree on first")
    func lexicalAndHybrid() async throws {
        _ = try await ingested()
        let found = try await readmeLexicalAndHybrid(
            store: store, question: Self.question, queryEmbedding: embed(Self.question))
        #expect(found.lexical.map(\.id) == [42])
        #expect(try #require(found.lexical.first).distance < 0)
        let top = try #require(found.hybrid.first)
        #expect(top.id == 42 && top.vectorRank == 1 && top.textRank == 1)
        #expect(found.hybrid.map(\.score) == found.hybrid.map(\.score).sorted(by: >))
    }

    @Test("7: SQL filters over JSON metadata, applied before ranking")
    func filtering() async throws {
        let pages = [
            (1, "en", 12, "Cells"), (2, "en", 5, "Cells"), (3, "fr", 30, "Cells"),
            (4, "en", 40, "Genes"),
        ]
        for (id, lang, page, section) in pages {
            try await store.insert(
                id: id, content: "chunk \(id) about the cell", source: "bio",
                metadata: #"{"lang":"\#(lang)","page":\#(page),"section":"\#(section)"}"#,
                vector: embed("chunk \(id)"))
        }
        try await store.insert(
            id: 5, content: "no metadata", source: "bio", vector: embed("chunk 5"))
        let found = try await readmeFiltering(store: store, queryEmbedding: embed("chunk 4"))
        #expect(found.results.map(\.id) == [4, 1])
        #expect(Set(found.visible.map(\.id)) == [1, 2, 3])
        #expect(try await snippetFilteringText(store: store).map(\.id).sorted() == [1, 2, 3, 4])
    }

    @Test("8 and the OwnTables snippet: the app's tables join the store's table")
    func ownTables() async throws {
        try await store.insert(
            id: 1, content: "The cell membrane.", source: "bio", vector: embed("membrane"))
        #expect(try await readmeOwnTables(store: store) == "Alice")
        #expect(try await snippetOwnTablesUpdate(store: store) == 1)
    }

    @Test("9 and its snippet: a manifest kept in the app's own table")
    func manifest() async throws {
        #expect(try await snippetManifest(store: store))
    }

    @Test("[Double] embeddings convert to Float everywhere")
    func doubles() async throws {
        let found = try await readmeDoubles(store: store, query: "oat milk")
        #expect(found.entry.vector == embed("oat milk"))
        #expect(found.results.map(\.id) == [2])
        #expect(found.results.first.map { abs($0.distance) < 1e-6 } == true)
    }

    @Test(
        "Error handling: a duplicate id is a SQLiteError with SQLite's constraint code; diagnostics"
    )
    func errors() async throws {
        let entry = try await ingested()
        let description = try await readmeErrorHandling(store: store, entry: entry)
        #expect(description?.contains("19") == true)
        let error = await #expect(throws: SQLiteError.self) { try await store.insert(entry) }
        guard case .stepFailed(19, _)? = error else {
            Issue.record("expected a constraint failure, got \(String(describing: error))")
            return
        }
        #expect(!readmeDiagnostics().isEmpty)
    }
}
