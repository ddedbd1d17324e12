import Foundation
import Testing
import Trove
import TroveTestSupport

@testable import TroveCLI

/// The engine's ``CompetenceFusion`` against the CLI's former multi-model fusion
/// (``FormerMultiModelSearch``), on seeded notes: the same hits in the same order, with the
/// same scores, whether the legs are a document collection's vector fields or the notes' (a
/// search collection of several models), against the former layout of a collection per model.
@Suite("MultiModelSearch", .serialized)
struct MultiModelSearchTests {
    static let words = [
        "tomato", "garden", "dentist", "invoice", "ferry", "router", "recipe", "insurance",
        "tires", "winter", "school", "budget", "passport", "flight", "lunch", "meeting",
        "doctor", "battery", "laptop", "birthday", "cake", "paint", "kitchen", "window",
    ]
    static let dimensions = [8, 6, 5]

    static func embedder(_ model: Int) -> HashingEmbedder {
        HashingEmbedder(dimension: dimensions[model], modelID: "test/model-\(model)")
    }

    /// One seeded data set in both layouts.
    struct Notes {
        let database: Database
        let former: FormerMultiModelSearch
        /// The same notes in one collection, a vector field per model.
        let documents: DocumentCollection
        /// The same notes as `trove index` keeps them: one search collection of every model.
        let notes: SearchCollection
        let models: Int
        var rng: SeededGenerator

        static func field(_ model: Int) -> String {
            model == 0 ? "embedding" : "embedding_\(model + 1)"
        }

        static func make(seed: UInt64, models: Int, count: Int, directory: TemporaryDirectory)
            async throws -> Notes
        {
            var rng = SeededGenerator(seed: seed)
            let database = try Database(path: directory.path("notes-\(seed).sqlite"))
            let notes = try await SearchCollection(
                "notes", in: database, dimension: MultiModelSearchTests.dimensions[0],
                tokenizer: Notebook.defaultTokenizer)
            var companions: [SearchCollection] = []
            for model in 1..<models {
                companions.append(
                    try await SearchCollection(
                        NotebookMigration.formerModelCollection(model), in: database,
                        dimension: MultiModelSearchTests.dimensions[model],
                        lexicalSearch: false))
            }
            let manifests = (0..<models).map {
                MultiModelSearchTests.embedder($0).manifest
            }
            let multi = try await SearchCollection(
                "multi", in: database,
                configuration: CollectionConfiguration(
                    dimension: MultiModelSearchTests.dimensions[0],
                    tokenizer: Notebook.defaultTokenizer, embedding: manifests[0],
                    additionalEmbeddings: Array(manifests.dropFirst())))
            let documents = try await database.documents(
                "one",
                schema: DocumentSchema(
                    fields: [.text("content"), .text("source", indexed: true)]
                        + (0..<models).map {
                            .vector(
                                field($0), dimension: MultiModelSearchTests.dimensions[$0],
                                optional: true)
                        },
                    fullText: FullTextDefinition(
                        fields: ["content"], tokenizer: Notebook.defaultTokenizer)))
            var entries: [[VectorEntry]] = Array(repeating: [], count: models)
            var rows: [Document] = []
            var multiEntries: [VectorEntry] = []
            for id in 1...Int64(count) {
                let content = (0..<Int.random(in: 3...9, using: &rng)).map { _ in
                    MultiModelSearchTests.words.randomElement(using: &rng)!
                }.joined(separator: " ")
                let source = ["phone", "laptop", "scan"].randomElement(using: &rng)!
                var fields: [String: Value] = [
                    "content": .string(content), "source": .string(source),
                ]
                for model in 0..<models {
                    let vector = rng.unitVector(dimension: MultiModelSearchTests.dimensions[model])
                    entries[model].append(
                        VectorEntry(id: .int(id), content: content, source: source, vector: vector))
                    fields[field(model)] = .vector(vector)
                }
                rows.append(Document(id: .int(id), fields))
                multiEntries.append(
                    VectorEntry(
                        id: .int(id), content: content, source: source,
                        vector: entries[0].last!.vector,
                        additionalVectors: entries.dropFirst().map { $0.last!.vector }))
            }
            try await notes.insert(entries[0])
            for (companion, rows) in zip(companions, entries.dropFirst()) {
                try await companion.insert(rows)
            }
            try await documents.insert(rows)
            try await multi.insert(multiEntries)
            return Notes(
                database: database,
                former: FormerMultiModelSearch(collection: notes, companions: companions),
                documents: documents, notes: multi, models: models, rng: rng)
        }

        /// A random query: two or three words, one vector per model, a competence rule.
        mutating func query() -> (
            text: String, vectors: [[Float]], competent: (Int, DocumentID) -> Bool
        ) {
            let text = (0..<Int.random(in: 1...3, using: &rng)).map { _ in
                MultiModelSearchTests.words.randomElement(using: &rng)!
            }.joined(separator: " ")
            let vectors = (0..<models).map {
                rng.unitVector(dimension: MultiModelSearchTests.dimensions[$0])
            }
            // Leg 0 sometimes understands nothing of the query (a language it was not trained
            // on), else a seeded third of the notes.
            let deaf = Int.random(in: 0..<4, using: &rng) == 0
            let salt = Int64.random(in: 0..<1000, using: &rng)
            let competent: (Int, DocumentID) -> Bool = { leg, id in
                guard case .int(let n) = id else { return true }
                if leg == 0 && deaf { return false }
                return (n &* 7919 &+ Int64(leg) &* 104_729 &+ salt) % 3 != 0
            }
            return (text, vectors, competent)
        }
    }

    @Test(
        "one query over a vector field per model, re-ranked by CompetenceFusion, equals the former fusion",
        arguments: [(UInt64(1), 2), (UInt64(2), 3), (UInt64(3), 2)])
    func engineMatchesFormer(seed: UInt64, models: Int) async throws {
        let directory = try TemporaryDirectory()
        var notes = try await Notes.make(
            seed: seed, models: models, count: 400, directory: directory)
        for round in 0..<12 {
            let (text, vectors, competent) = notes.query()
            let filter: Filter = round % 4 == 3 ? .source("phone") : .all
            for mode in [SearchMode.vector, .hybrid] {
                for limit in [5, 30] {
                    let expected = try await notes.former.search(
                        text, vectors: vectors, mode: mode, where: filter, limit: limit
                    ) { leg, entry in competent(leg, entry.id) }
                    let fusion = CompetenceFusion(limit: limit)
                    var query = Query(filter)
                    for (model, vector) in vectors.enumerated() {
                        query = query.nearest(to: vector, in: Notes.field(model))
                    }
                    if mode == .hybrid { query = query.matching(.typed(text)) }
                    query = try fusion.query(query)
                    let hits = fusion.rerank(try await notes.documents.search(query), of: query) {
                        leg, document in competent(leg, document.id)
                    }
                    let context = "seed \(seed) round \(round) \(mode) limit \(limit) '\(text)'"
                    #expect(hits.map(\.record.id) == expected.map(\.id), "\(context)")
                    #expect(hits.map(\.score) == expected.map(\.score), "\(context)")
                    #expect(hits.map(\.textRank) == expected.map(\.textRank), "\(context)")
                }
            }
        }
    }

    @Test(
        "the CLI's search over the notes' vector fields equals the former fusion",
        arguments: [(UInt64(4), 2), (UInt64(5), 3)])
    func cliMatchesFormer(seed: UInt64, models: Int) async throws {
        let directory = try TemporaryDirectory()
        var notes = try await Notes.make(
            seed: seed, models: models, count: 300, directory: directory)
        let search = MultiModelSearch(
            collection: notes.notes, embedders: (0..<models).map(Self.embedder))
        for round in 0..<10 {
            let (text, vectors, competent) = notes.query()
            for mode in [SearchMode.vector, .hybrid, .text] {
                let expected = try await notes.former.search(
                    text, vectors: vectors, mode: mode, where: .all, limit: 20
                ) { leg, entry in competent(leg, entry.id) }
                let hits = try await search.search(
                    text, vectors: vectors, mode: mode, where: .all, limit: 20
                ) { leg, entry in competent(leg, entry.id) }
                let context = "seed \(seed) round \(round) \(mode) '\(text)'"
                #expect(hits.map(\.id) == expected.map(\.id), "\(context)")
                #expect(hits.map(\.score) == expected.map(\.score), "\(context)")
            }
        }
    }
}
