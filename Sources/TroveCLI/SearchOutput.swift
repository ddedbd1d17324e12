import Foundation

/// How `trove search` prints results for a person:
///
/// ```
///  1  0.87  garden/tomatoes.md · Tomatoes  #3f2a9c01  [meaning #1, words #1]
///     Stake the tomatoes when planting. Water at the base.
///     home: Personal notes
/// ```
///
/// rank, relevance (two decimals), path (relative to the current folder, `~/` under home), the
/// note's title, its short id (for `trove get`), the legs' ranks in hybrid mode; then a snippet with the query's words
/// highlighted (bold yellow on a terminal; plain when piped or with `--no-color`); then the
/// collection's context when it has one. `--files` prints `score<TAB>path` per line.
struct SearchOutput {
    let context: CommandContext
    let query: String
    let mode: String

    /// Relevance as printed: two decimals.
    static func score(_ value: Double) -> String { String(format: "%.2f", value) }

    /// Relevance in JSON: four decimals are plenty and read well.
    static func rounded(_ value: Double) -> Double { (value * 10_000).rounded() / 10_000 }

    /// A note's title: its first Markdown heading, else its first line when the note has more
    /// than one and that line is short (at most 80 characters); nil otherwise.
    static func title(of content: String) -> String? {
        let lines = content.split(separator: "\n", omittingEmptySubsequences: true)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if let heading = lines.first(where: { $0.hasPrefix("#") }) {
            let text = heading.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            if !text.isEmpty { return String(text.prefix(80)) }
        }
        guard lines.count > 1, let first = lines.first, first.count <= 80 else { return nil }
        return first
    }

    /// `0.87<TAB>/home/ana/notes/x.md` (the source as stored: absolute for files).
    func fileLine(_ hit: NoteSearch.NoteHit) -> String {
        Self.score(hit.relevance) + "\t" + hit.result.record.source + "\n"
    }

    /// The three lines of one result.
    func render(_ hit: NoteSearch.NoteHit, rank: Int) -> String {
        let style = context.style
        let result = hit.result
        var place = SearchCommand.displayPath(
            result.record.source, environment: context.console.environment,
            currentDirectory: context.console.currentDirectory)
        if let doc = hit.metadata?["doc_id"]?.idString { place += " · \(doc)" }
        if case .int(let chunk)? = hit.metadata?["chunk"],
            case .int(let chunks)? = hit.metadata?["chunks"],
            chunks > 1
        {
            place += " (part \(chunk + 1)/\(chunks))"
        }
        let score = Self.score(hit.relevance)
        let colored =
            hit.relevance >= 0.7
            ? style.green(score) : hit.relevance >= 0.4 ? style.yellow(score) : style.dim(score)
        var header = "\(style.bold(String(format: "%2d", rank)))  \(colored)  \(style.cyan(place))"
        if let title = Self.title(of: result.record.content) { header += " · " + style.bold(title) }
        if let note = Notebook.note(metadata: result.record.metadata, source: result.record.source)
        {
            header += "  " + style.dim(note.shortID)
        }
        if mode == "hybrid" {
            let legs = [
                "meaning " + (result.meaningRank.map { "#\($0)" } ?? "-"),
                "words " + (result.textRank.map { "#\($0)" } ?? "-"),
            ]
            header += "  " + style.dim("[" + legs.joined(separator: ", ") + "]")
        }
        var text =
            header + "\n    "
            + Snippet.make(content: result.record.content, query: query, style: style)
            + "\n"
        if let collection = hit.collection, let note = hit.context {
            text += "    " + style.dim("\(collection): \(note)") + "\n"
        }
        return text
    }
}
