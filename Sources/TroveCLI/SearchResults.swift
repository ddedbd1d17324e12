import Foundation
import Trove

/// What `trove search --json` prints and the MCP search tool returns: the request, then one
/// object per result (``SearchHit``, or ``SearchFileHit`` with `--files`).
///
/// ```json
/// {"query":"tomatoes","mode":"hybrid","k":10,"results":[{"rank":1,"id":"…","score":0.87,…}]}
/// ```
struct SearchResults<Hit: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    var query: String
    /// `hybrid`, `vector` or `text`, as given.
    var mode: String
    /// Most results asked for; null with `--all`.
    var k: Int?
    /// The `--min-score` given; the key is left out without one.
    @OmittedWhenNil var minScore: Double?
    var results: [Hit]

    enum CodingKeys: String, CodingKey {
        case query, mode, k
        case minScore = "min_score"
        case results
    }
}

/// One result of a search: the calibrated `score` people see, then everything it came from (the
/// fusion's own score, each leg's rank, raw score and relevance).
struct SearchHit: Codable, Equatable, Sendable {
    var rank: Int
    /// The record id: a number or text (a UUID).
    var id: JSONValue
    /// Calibrated relevance from 0 to 1, four decimals.
    var score: Double
    var source: String
    /// The note's short id, for `trove get`.
    var shortID: String?
    var title: String?
    var collection: String?
    /// The collection's context: what its notes are.
    var context: String?
    var metadata: JSONValue?
    var vectorRank: Int?
    var textRank: Int?
    var distance: Double?
    var bm25: Double?
    var fusedScore: Double
    var legs: [Leg]
    /// The matching chunk's text.
    var content: String

    /// One leg of the ranking: a model, or `text`.
    struct Leg: Codable, Equatable, Sendable {
        var leg: String
        var rank: Int?
        var score: Double
        var relevance: Double
        var competent: Bool
    }

    enum CodingKeys: String, CodingKey {
        case rank, id, score, source
        case shortID = "short_id"
        case title, collection, context, metadata
        case vectorRank = "vector_rank"
        case textRank = "text_rank"
        case distance, bm25
        case fusedScore = "fused_score"
        case legs, content
    }

    init(_ hit: NoteSearch.NoteHit, rank: Int, mode: String) {
        let result = hit.result
        self.rank = rank
        id = JSONValue(result.id)
        score = SearchOutput.rounded(hit.relevance)
        source = result.record.source
        shortID =
            Notebook.note(metadata: result.record.metadata, source: result.record.source)?
            .shortID
        title = SearchOutput.title(of: result.record.content)
        (collection, context, metadata) = (hit.collection, hit.context, hit.metadata)
        // A single-leg search ranks by that leg alone, so its rank is the result's rank.
        vectorRank = result.meaningRank ?? (mode == "vector" ? rank : nil)
        textRank = result.textRank ?? (mode == "text" ? rank : nil)
        (distance, bm25, fusedScore) = (result.distance, result.bm25, hit.fusedScore)
        legs = hit.legs.map {
            Leg(
                leg: $0.name, rank: $0.rank, score: $0.score, relevance: $0.relevance,
                competent: $0.competent)
        }
        content = result.record.content
    }
}

/// One result of `trove search --files --json`: the path and the score.
struct SearchFileHit: Codable, Equatable, Sendable {
    var source: String
    var score: Double

    init(_ hit: NoteSearch.NoteHit) {
        (source, score) = (hit.result.record.source, SearchOutput.rounded(hit.relevance))
    }
}
