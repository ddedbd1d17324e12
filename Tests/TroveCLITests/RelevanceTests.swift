import Foundation
import Testing
import Trove
import TroveEmbeddings
import TroveTestSupport

@testable import TroveCLI

/// The calibrated 0..1 score of `trove search`, `--min-score` and `--all`.
///
/// The check that scores are comparable across queries: one database, several queries; a
/// query whose note is in the database must score its note higher than any result of a query
/// about nothing in the database, so one `--min-score` separates them for every query. The
/// hashing embedder shows the mechanism; the real models (when installed) show the curves.
@Suite("Relevance", .serialized)
struct RelevanceTests {

    func scores(_ document: JSONValue) -> [Double] {
        results(document).compactMap {
            if case .double(let x)? = $0["score"] { return x }
            if case .int(let x)? = $0["score"] { return Double(x) }
            return nil
        }
    }

    @Test("monotone: capped by the result above; unchanged where already non-increasing")
    func monotoneCap() {
        #expect(Relevance.monotone([0.9, 0.95, 0.4, 0.5, 0.1]) == [0.9, 0.9, 0.4, 0.4, 0.1])
        #expect(Relevance.monotone([0.8, 0.3]) == [0.8, 0.3])
        #expect(Relevance.monotone([]) == [])
    }

    @Test("calibrations rise with the raw score and stay inside 0...1")
    func calibrationsRise() {
        for curve in [Relevance.miniLM, Relevance.e5, Relevance.unknownModel, Relevance.text] {
            let values = stride(from: -1.0, through: 1.0, by: 0.05).map(curve.relevance)
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
            #expect(values.allSatisfy { $0 > 0 && $0 < 1 })
        }
        #expect(
            Relevance.calibration(modelID: "sentence-transformers/all-MiniLM-L6-v2")
                == Relevance.miniLM)
        #expect(Relevance.calibration(modelID: E5Embedder.modelID) == Relevance.e5)
    }

    @Test("coverage: the share of the query's content words the note holds")
    func coverage() {
        #expect(Relevance.coverage(query: "stake tomatoes", content: "Stake the tomatoes.") == 1)
        #expect(Relevance.coverage(query: "when to stake tomatoes", content: "Tomatoes!") == 0.5)
        #expect(Relevance.coverage(query: "dentist", content: "Two dentists") == 1)
        #expect(Relevance.coverage(query: "quantum", content: "Stake the tomatoes.") == 0)
        // Unspaced scripts count by character pairs, as the bigram text index matches them.
        #expect(Relevance.coverage(query: "护照续签", content: "孩子的护照续签需要准备什么") == 1)
        #expect(Relevance.coverage(query: "护照续签", content: "护照在抽屉里") == 1.0 / 3.0)
        #expect(Relevance.coverage(query: "数据库", content: "Stake the tomatoes.") == 0)
    }

    @Test(
        "every mode: scores in 0...1, non-increasing down the list",
        arguments: ["hybrid", "vector", "text"])
    func monotoneInRank(mode: String) async throws {
        let f = try NotesFixture.errands()
        _ = await f.trove(["index", "."])
        for query in ["tomatoes planting", "dentist Tuesday", "bank errand", "winter tires"] {
            let found = try await f.json(["search", "--mode", mode, "-k", "15", query])
            let values = scores(found)
            #expect(!values.isEmpty, "\(mode) \(query)")
            #expect(values.allSatisfy { (0...1).contains($0) }, "\(values)")
            #expect(
                zip(values, values.dropFirst()).allSatisfy { $0 >= $1 },
                "\(mode) \(query): \(values)")
            // The raw per-leg ranks and scores stay in --json.
            let legs = results(found).first?["legs"]?.array ?? []
            #expect(!legs.isEmpty)
            #expect(results(found).first?["fused_score"] != nil)
        }
    }

    @Test("--min-score keeps exactly the prefix of the ranking at or above it")
    func minScorePrefix() async throws {
        let f = try NotesFixture.errands()
        _ = await f.trove(["index", "."])
        let full = scores(try await f.json(["search", "--all", "stake tomatoes"]))
        #expect(full.count == 17)  // --all: every note
        for bar in [0.0, 0.3, 0.5, 0.7, 0.95] {
            let cut = scores(
                try await f.json(["search", "--all", "--min-score", String(bar), "stake tomatoes"]))
            #expect(cut == full.filter { $0 >= bar }, "bar \(bar)")
        }
        let bad = await f.trove(["search", "--min-score", "1.5", "x"])
        #expect(bad.status == ExitCode.usage)
        let both = await f.trove(["search", "--all", "-k", "3", "x"])
        #expect(both.status == ExitCode.usage)
    }

    @Test(
        "comparable across queries: a query's own note outscores every result of a query about nothing here"
    )
    func comparableAcrossQueries() async throws {
        let f = try NotesFixture.errands()
        _ = await f.trove(["index", "."])
        let answered = [
            ("stake the tomatoes when planting", "garden/tomatoes.txt"),
            ("freeze the release branch", "work/standup.md"),
            ("winter tires stored at Eastside", "car.md"),
        ]
        let nothing = ["quantum chromodynamics lecture", "volcano eruption seismograph"]
        for mode in ["hybrid", "text"] {
            var lowestRight = 1.0
            for (query, file) in answered {
                let found = try await f.json(["search", "--mode", mode, query])
                #expect(results(found).first?["source"]?.string == f.path(file), "\(mode) \(query)")
                lowestRight = min(lowestRight, scores(found).first ?? 0)
            }
            var highestWrong = 0.0
            for query in nothing {
                highestWrong = max(
                    highestWrong,
                    scores(try await f.json(["search", "--mode", mode, query])).first ?? 0)
            }
            #expect(
                lowestRight > highestWrong, "\(mode): right \(lowestRight), wrong \(highestWrong)")
            #expect(
                lowestRight >= 0.5 && highestWrong < 0.5,
                "\(mode): right \(lowestRight), wrong \(highestWrong)")
        }
    }

    @Test("vector mode with two models shows relevance, not a fused z-score")
    func vectorModeTwoModels() async throws {
        let f = try NotesFixture.errands()
        let models = ["--model", "/m/modelA", "--model", "/m/modelB"]
        let services = MultiModelTests.twoModelServices
        _ = await f.trove(["index"] + models + ["."], services: services)
        let run = await f.trove(
            ["search", "--json", "--mode", "vector"] + models + ["stake", "tomatoes"],
            services: services)
        let values = scores(try JSONValue.parse(run.out))
        #expect(!values.isEmpty && values.allSatisfy { (0...1).contains($0) }, "\(values)")
        let legs = results(try JSONValue.parse(run.out)).first?["legs"]?.array ?? []
        #expect(legs.count == 2)  // one per model, each with its cosine
    }

    @Test("coverage: an identifier is one term, matched whole; identifier-only queries")
    func identifierCoverage() {
        #expect(Relevance.identifierTerms("DEC-0054") == [["dec", "0054"]])
        #expect(
            Relevance.identifierTerms("release v1.2.3 and well-known 2026") == [
                ["v1", "2", "3"], ["2026"],
            ])
        #expect(Relevance.identifierTerms("第2章の要約") == [])
        #expect(
            Relevance.coverage(query: "DEC-0054", content: "DEC-0055: keep SQLite for the cache.")
                == 0)
        #expect(
            Relevance.coverage(query: "DEC-0054", content: "Decision DEC-0054: adopt Trove.") == 1)
        #expect(Relevance.coverage(query: "dec-0054", content: "see dec 0054") == 1)
        #expect(
            Relevance.coverage(
                query: "DEC-0054 cache", content: "DEC-0055: keep SQLite for the cache.") == 0.5)
        #expect(
            Relevance.coverage(query: "well-known tomatoes", content: "well tomatoes") == 2.0 / 3.0)
        #expect(Relevance.isIdentifierQuery("DEC-0054"))
        #expect(Relevance.isIdentifierQuery("the DEC-0054"))
        #expect(!Relevance.isIdentifierQuery("DEC-0054 cache"))
        #expect(!Relevance.isIdentifierQuery("stake tomatoes"))
    }

    /// Decision records numbered alike: the query's own record, and one holding only a near miss.
    static func decisions(withAnswer: Bool) throws -> NotesFixture {
        let f = try NotesFixture.errands()
        try f.write(
            "decisions/dec-0055.md", "DEC-0055: keep SQLite for the cache. Status: accepted.")
        try f.write("decisions/dec-0061.md", "DEC-0061: move the nightly build to 02:00.")
        if withAnswer {
            try f.write(
                "decisions/dec-0054.md", "DEC-0054: adopt Trove for note search. Status: accepted.")
        }
        return f
    }

    @Test(
        "an identifier query: a note holding only a near miss is not a strong match (issue 42)",
        arguments: ["text", "hybrid"])
    func identifierNearMiss(mode: String) async throws {
        let missing = try Self.decisions(withAnswer: false)
        #expect(await missing.trove(["index", "."]).status == 0)
        let found = try await missing.json(["search", "--mode", mode, "DEC-0054"])
        for (hit, score) in zip(results(found), scores(found)) {
            #expect(score < 0.5, "\(mode): \(hit["source"]?.string ?? "?") scores \(score)")
        }
        // With the record there, it comes first and strong; the near miss stays weak.
        let present = try Self.decisions(withAnswer: true)
        #expect(await present.trove(["index", "."]).status == 0)
        let answered = try await present.json(["search", "--mode", mode, "DEC-0054"])
        #expect(
            results(answered).first?["source"]?.string == present.path("decisions/dec-0054.md"),
            "\(mode)")
        #expect((scores(answered).first ?? 0) >= 0.8, "\(mode): \(scores(answered))")
        #expect(
            scores(answered).dropFirst().allSatisfy { $0 < 0.5 }, "\(mode): \(scores(answered))")
    }

    @Test(
        "an identifier query with the real model: a near miss is not a strong match (issue 42)",
        .enabled(if: installedModel != nil))
    func identifierNearMissRealModel() async throws {
        let model = try #require(installedModel)
        let f = try Self.decisions(withAnswer: false)
        #expect(
            await f.trove(["index", "--model", model.path, "."], services: .standard).status == 0)
        let run = await f.trove(
            ["search", "--json", "--model", model.path, "DEC-0054"], services: .standard)
        let found = try JSONValue.parse(run.out)
        #expect(!results(found).isEmpty)
        #expect(scores(found).allSatisfy { $0 < 0.5 }, "\(scores(found))")
    }
}
