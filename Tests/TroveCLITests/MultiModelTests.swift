import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// Two models, one ranking: `--model` repeated on index, search and eval (hashing embedders
/// standing in for the models; the e5 checks at the end use the real model).
@Suite("Two models in the CLI", .serialized)
struct MultiModelTests {
    /// Each model folder gets its own hashing model (different dimension and id).
    static let twoModelServices = Services(loadEmbedder: { folder in
        folder.lastPathComponent == "modelB"
            ? HashingEmbedder(dimension: 48, modelID: "test/model-b")
            : HashingEmbedder(dimension: 64, modelID: "test/model-a")
    })

    func fixture() throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("dentist.md", "Cleaning with Dr. Okafor on Tuesday at 8:30.")
        try fixture.write(
            "garden/tomatoes.txt", "Stake the tomatoes when planting. Water at the base.")
        try fixture.write("work/standup.md", "Standup: freeze the release branch Thursday noon.")
        return fixture
    }

    @Test(
        "index with two models writes a vector per model into each note; search fuses both")
    func indexAndSearchWithTwoModels() async throws {
        let f = try fixture()
        let models = ["--model", "/m/modelA", "--model", "/m/modelB"]
        let index = await f.trove(["index"] + models + ["."], services: Self.twoModelServices)
        #expect(index.status == 0, "\(index.err)")
        let database = try Database(path: f.database)
        let manifests = try await Notebook.manifests(of: database)
        #expect(manifests.map(\.modelID) == ["test/model-a", "test/model-b"])
        let notes = try await SearchCollection(named: "notes", in: database)
        #expect(notes.configuration.vectorFields == ["embedding", "embedding_2"])
        let entries = try await notes.fetch(Query())
        #expect(entries.count == 3)
        for entry in entries {
            #expect(entry.vector == HashingEmbedder(dimension: 64).vector(entry.content))
            #expect(
                entry.additionalVectors == [HashingEmbedder(dimension: 48).vector(entry.content)])
        }
        #expect(try await database.collectionNames().allSatisfy { !$0.hasPrefix("notes_vectors") })

        for mode in ["hybrid", "vector", "text"] {
            let run = await f.trove(
                ["search", "--json", "--mode", mode, "-k", "2"] + models + [
                    "tomatoes", "planting",
                ],
                services: Self.twoModelServices)
            #expect(run.status == 0, "\(mode): \(run.err)")
            let hits = results(try JSONValue.parse(run.out))
            #expect(hits.first?["source"]?.string == f.path("garden/tomatoes.txt"), "mode \(mode)")
            if mode != "text" {
                // Each model's leg carries its own rank; vector_rank is the best of them.
                let legs = hits.first?["legs"]?.array?.filter { $0["leg"]?.string != "text" } ?? []
                let ranks = legs.compactMap { leg -> Int64? in
                    if case .int(let rank)? = leg["rank"] { return rank }
                    return nil
                }
                #expect(legs.count == 2 && ranks.count == 2, "mode \(mode): \(legs)")
                #expect(hits.first?["vector_rank"] == ranks.min().map { .int($0) }, "mode \(mode)")
            }
        }
        // Without --model, search loads what the database was indexed with... which for these
        // unknown test models is the default folder twice: refused, naming both models.
        // Removing a file's records removes every model's vectors with them.
        try FileManager.default.removeItem(atPath: f.path("dentist.md"))
        let again = await f.trove(["index"] + models + ["."], services: Self.twoModelServices)
        #expect(again.err.contains("1 removed"), "\(again.err)")
        #expect(try await notes.count() == 2)
        let rm = await f.trove(
            ["rm", "--source", f.path("work/standup.md")], services: Self.twoModelServices)
        #expect(rm.status == 0, "\(rm.err)")
        #expect(try await notes.count() == 1)
        let second = try await notes.search(
            Query().nearest(
                to: HashingEmbedder(dimension: 48).vector("tomatoes planting"), in: "embedding_2"
            ).limit(5))
        #expect(second.map(\.record.source) == [f.path("garden/tomatoes.txt")])
    }

    @Test("a database indexed with one model refuses a second one, and the reverse")
    func refusesAnotherModelList() async throws {
        let f = try fixture()
        _ = await f.trove(["index", "--model", "/m/modelA", "."], services: Self.twoModelServices)
        let two = await f.trove(
            ["index", "--model", "/m/modelA", "--model", "/m/modelB", "."],
            services: Self.twoModelServices)
        #expect(two.status != 0)
        #expect(two.err.contains("was indexed with test/model-a"), "\(two.err)")
    }

    @Test("eval with two models reports the fused configuration")
    func evalWithTwoModels() async throws {
        let f = try fixture()
        try f.write(
            "docs.jsonl",
            #"{"id": "d1", "text": "Stake the tomatoes when planting."}"# + "\n"
                + #"{"id": "d2", "text": "Freeze the release branch Thursday."}"# + "\n")
        try f.write(
            "queries.jsonl",
            #"{"id": "q1", "query": "tomatoes planting", "answer": "d1", "kind": "k"}"# + "\n")
        let run = await runTrove(
            [
                "eval", "--json", "--docs", f.path("docs.jsonl"), "--queries",
                f.path("queries.jsonl"),
                "--model", "/m/modelA", "--model", "/m/modelB",
            ], services: Self.twoModelServices)
        #expect(run.status == 0, "\(run.err)")
        let document = try JSONValue.parse(run.out)
        #expect(document["model"]?.string == "test/model-a + test/model-b")
    }

    @Test("model names resolve in the model cache; paths stay paths")
    func modelNames() {
        let env = ["HOME": "/home/ana"]
        #expect(
            Locations.modelDirectory(
                value: "multilingual-e5-small", environment: env, currentDirectory: "/w"
            ).path
                == "/home/ana/.cache/trove/models/multilingual-e5-small")
        #expect(
            Locations.modelDirectory(
                value: "all-minilm-l6-v2", environment: env, currentDirectory: "/w"
            ).path
                == "/home/ana/.cache/trove/models/all-MiniLM-L6-v2")
        #expect(
            Locations.modelDirectory(value: "./models/x", environment: env, currentDirectory: "/w")
                .path
                == "/w/models/x")
        #expect(
            Locations.modelDirectory(
                value: "multilingual-e5-small",
                environment: env.merging(["TROVE_E5_MODEL_DIR": "/opt/e5"]) { $1 },
                currentDirectory: "/"
            ).path == "/opt/e5")
    }
}

/// The model folder of multilingual-e5-small, when installed (CI fetches it).
let installedE5: URL? = {
    let directory = Locations.modelDirectory(
        value: "multilingual-e5-small", environment: ProcessInfo.processInfo.environment,
        currentDirectory: FileManager.default.currentDirectoryPath)
    return FileManager.default.fileExists(
        atPath: directory.appendingPathComponent("e5-small-q4.bin").path)
        ? directory : nil
}()

@Suite("With multilingual-e5-small", .serialized, .enabled(if: installedE5 != nil))
struct E5CommandLineTests {
    func numbers(_ line: Substring) throws -> [Float] {
        guard case .array(let values) = try JSONValue.parse(String(line)) else { return [] }
        return values.map { value -> Float in
            if case .double(let x) = value { return Float(x) }
            if case .int(let x) = value { return Float(x) }
            return .nan
        }
    }

    @Test(
        "embed --model multilingual-e5-small prints passage vectors, and query vectors with --query"
    )
    func embed() async throws {
        let e5 = try E5Embedder(modelDirectory: try #require(installedE5))
        let passages = await runTrove(
            ["embed", "--json", "--model", "multilingual-e5-small", "数据库管理系统的性能优化", "Tokyo sushi"],
            environment: ProcessInfo.processInfo.environment, services: .standard)
        #expect(passages.status == 0, "\(passages.err)")
        let lines = passages.out.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(try numbers(lines[0]) == (try await e5.embed(["数据库管理系统的性能优化"]))[0])
        let query = await runTrove(
            ["embed", "--json", "--query", "--model", "multilingual-e5-small", "数据库"],
            environment: ProcessInfo.processInfo.environment, services: .standard)
        #expect(
            try numbers(query.out.split(separator: "\n")[0])
                == (try await e5.embedQueries(["数据库"]))[0])
    }

    @Test("index and search with e5 alone: a Chinese query finds the Chinese note by meaning")
    func searchByMeaning() async throws {
        let fixture = try NotesFixture()
        try fixture.write("zh.md", "数据库管理系统的性能优化")
        try fixture.write("ja.md", "東京で寿司を食べました")
        try fixture.write("en.md", "Remember to water the tomatoes in the garden.")
        let env = ProcessInfo.processInfo.environment
        let index = await runTrove(
            ["index", "--model", "multilingual-e5-small", "--db", fixture.database, fixture.notes],
            environment: env, services: .standard)
        #expect(index.status == 0, "\(index.err)")
        // No --model: the database says which model it was indexed with.
        let search = await runTrove(
            [
                "search", "--json", "--mode", "vector", "-k", "1", "--db", fixture.database,
                "how to make a database faster",
            ],
            environment: env, services: .standard)
        #expect(search.status == 0, "\(search.err)")
        guard case .array(let hits)? = try JSONValue.parse(search.out)["results"] else {
            Issue.record("no results")
            return
        }
        #expect(hits.first?["source"]?.string == fixture.path("zh.md"))
    }
}

/// Both built-in models on real text: stats and help name both vector fields; scores and the
/// competence rule with the real curves.
@Suite(
    "With both built-in models", .serialized,
    .enabled(if: installedE5 != nil && installedModel != nil))
struct BothModelsTests {
    let environment = ProcessInfo.processInfo.environment

    func indexed() async throws -> NotesFixture {
        let fixture = try NotesFixture()
        try fixture.write("insurance.md", "Car insurance renews Aug 1 with Belair: $1,842 a year.")
        try fixture.write("tires.md", "Winter tires on by Nov 15, stored at Eastside Auto.")
        try fixture.write(
            "tamales.md",
            "Tamales de rajas de mamá: masa para tamales, manteca, chiles poblanos asados.")
        try fixture.write("garden.md", "Stake the tomatoes when planting. Water at the base.")
        let index = await runTrove(
            [
                "index", "--model", "all-MiniLM-L6-v2", "--model", "multilingual-e5-small", "--db",
                fixture.database,
                fixture.notes,
            ], environment: environment, services: .standard)
        #expect(index.status == 0, "\(index.err)")
        return fixture
    }

    @Test("stats names both models' vector fields; index --help names both models")
    func statsNamesBoth() async throws {
        let f = try await indexed()
        let text = await runTrove(
            ["stats", "--db", f.database], environment: environment, services: .standard)
        #expect(
            text.out.contains("all-MiniLM-L6-v2: 384-d")
                && text.out.contains("multilingual-e5-small: 384-d"),
            "\(text.out)")
        let json = try JSONValue.parse(
            await runTrove(["stats", "--json", "--db", f.database], environment: environment).out)
        #expect(
            json["vector_fields"]?.array?.map { $0["model"] } == [
                .string("all-MiniLM-L6-v2"), .string("multilingual-e5-small"),
            ])
        let help = await runTrove(["index", "--help"])
        #expect(help.out.contains("all-MiniLM-L6-v2") && help.out.contains("multilingual-e5-small"))
    }

    @Test(
        "a question's own note scores high and an unrelated question's best result low, in every language"
    )
    func realScoresComparable() async throws {
        let f = try await indexed()
        func top(_ query: String) async throws -> (source: String?, score: Double) {
            let run = await runTrove(
                ["search", "--json", "-k", "1", "--db", f.database, query],
                environment: environment,
                services: .standard)
            let hit = try JSONValue.parse(run.out)["results"]?.array?.first
            if case .double(let score)? = hit?["score"] { return (hit?["source"]?.string, score) }
            return (hit?["source"]?.string, 0)
        }
        let right = [
            ("when does the car insurance renew", "insurance.md"),
            ("gaadi ka insurance kab renew karna hai?", "insurance.md"),
            ("Bis wann müssen die Winterreifen aufs Auto?", "tires.md"),
            ("my mother's tamale recipe", "tamales.md"),
        ]
        var lowestRight = 1.0
        for (query, file) in right {
            let hit = try await top(query)
            #expect(hit.source == f.path(file), "\(query)")
            lowestRight = min(lowestRight, hit.score)
        }
        var highestWrong = 0.0
        for query in ["quantum chromodynamics lecture notes", "¿dónde está la estación de tren?"] {
            highestWrong = max(highestWrong, try await top(query).score)
        }
        #expect(lowestRight > highestWrong, "right \(lowestRight), wrong \(highestWrong)")
    }
}
