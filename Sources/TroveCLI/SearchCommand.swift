import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite

/// `trove search QUERY...`.
enum SearchCommand {
    static func run(_ context: CommandContext) async throws -> Int32 {
        let search = try NotesSearch(context)
        let path = try context.databasePath()
        // Text search needs no model; load them only for the modes that embed the query.
        var embedders: [any Embedder]?
        if search.needsModels, FileManager.default.fileExists(atPath: path) {
            let database = try EncryptionPassphrase.openDatabase(path: path, context: context)
            embedders = try context.loadEmbedders(matching: try await Notebook.manifests(of: database))
        }
        let notebook = try await Notebook.openExisting(path: path, embedders: embedders, context: context)
        let results = try await search.run(notebook: notebook, embedders: embedders, context: context)
        let hits = results.hits

        if context.json {
            context.console.out.write(search.document(results).serialized() + "\n")
            return ExitCode.success
        }
        if hits.isEmpty {
            context.console.err.write("no results for \"\(search.query)\"\n")
            return ExitCode.success
        }
        let style = context.style
        for (index, hit) in hits.enumerated() {
            context.console.out.write(
                render(hit, rank: index + 1, query: search.query, mode: search.modeName, style: style,
                       context: context, contexts: results.contexts))
        }
        return ExitCode.success
    }

    /// The first (best) hit of each document: a file, or one line of a .jsonl file.
    static func bestChunkPerDocument(_ hits: [SearchResult]) -> [SearchResult] {
        var seen = Set<String>()
        return hits.filter { hit in
            let metadata = hit.metadata.flatMap { try? JSONValue.parse($0) }
            guard let file = metadata?["file"]?.string else { return true }
            let key = file + "\u{0}" + (metadata?["doc_id"]?.idString ?? "")
            return seen.insert(key).inserted
        }
    }

    /// Records of the collections named with `-c` (`.all` without one).
    /// - Throws: ``CLIError/notFound(_:)`` for a name that is not a collection.
    static func collectionFilter(_ names: [String], among collections: [NoteCollection]) throws -> Filter {
        guard !names.isEmpty else { return .all }
        for name in names where !collections.contains(where: { $0.name == name }) {
            throw CollectionCommand.unknown(name, among: collections, command: "search")
        }
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        return .sql("json_extract(metadata, '$.collection') IN (\(marks))", names.map(SQLValue.text))
    }

    /// The `--where` fragment with its typed `--bind` values, `.all` without one.
    static func whereClause(_ context: CommandContext) throws -> Filter {
        let sql = context.arguments.value("where")
        let binds = context.arguments.all("bind")
        guard let sql else {
            if !binds.isEmpty {
                throw CLIError.usage("--bind needs a --where with ? placeholders", command: "search")
            }
            return .all
        }
        let placeholders = countPlaceholders(sql)
        guard placeholders == binds.count else {
            throw CLIError.usage(
                "--where has \(placeholders) ? placeholder\(placeholders == 1 ? "" : "s") but "
                    + "\(binds.count) --bind value\(binds.count == 1 ? " was" : "s were") given",
                command: "search")
        }
        return .sql(sql, binds.map(bindValue))
    }

    /// Whole numbers bind as integers, decimals as reals, everything else as text — so
    /// `json_extract(metadata, '$.chunk') = ?` with `--bind 0` compares numbers with numbers.
    static func bindValue(_ text: String) -> SQLValue {
        if let integer = Int64(text) { return .integer(integer) }
        if let real = Double(text), real.isFinite, text.contains(where: \.isNumber),
            !text.lowercased().contains("n")  // not "nan"/"inf"
        {
            return .real(real)
        }
        return .text(text)
    }

    /// `?` outside string literals and quoted identifiers.
    static func countPlaceholders(_ sql: String) -> Int {
        var count = 0
        var quote: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "?" {
                count += 1
            }
        }
        return count
    }

    /// `--source` as typed, or as an absolute path when that is what the records hold (file
    /// sources are stored absolute).
    static func resolveSource(
        _ source: String?, context: CommandContext, notebook: Notebook
    ) async throws -> String? {
        guard let source else { return nil }
        if try await notebook.collection.count(.source(source)) > 0 { return source }
        let absolute = Locations.absolute(
            source, environment: context.console.environment,
            currentDirectory: context.console.currentDirectory)
        if try await notebook.collection.count(.source(absolute)) > 0 { return absolute }
        return source
    }

    static func resultJSON(
        _ hit: SearchResult, rank: Int, mode: String, contexts: [String: String?]
    ) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("rank", .int(Int64(rank))), ("id", .int(hit.id)), ("score", .double(hit.score)),
            ("source", .string(hit.source)),
            ("short_id", Notebook.note(metadata: hit.metadata, source: hit.source).map { .string($0.shortID) } ?? .null),
        ]
        let metadata = hit.metadata.flatMap { try? JSONValue.parse($0) } ?? .null
        let collection = metadata["collection"]?.string
        members.append(("collection", collection.map(JSONValue.string) ?? .null))
        members.append(("context", collection.flatMap { contexts[$0] ?? nil }.map(JSONValue.string) ?? .null))
        members.append(("metadata", metadata))
        // A single-leg search ranks by that leg alone, so its rank is the result's rank.
        let vectorRank = hit.vectorRank ?? (mode == "vector" ? rank : nil)
        let textRank = hit.textRank ?? (mode == "text" ? rank : nil)
        members.append(("vector_rank", vectorRank.map { .int(Int64($0)) } ?? .null))
        members.append(("text_rank", textRank.map { .int(Int64($0)) } ?? .null))
        members.append(("distance", hit.distance.map { .double($0) } ?? .null))
        members.append(("bm25", hit.bm25.map { .double($0) } ?? .null))
        members.append(("content", .string(hit.content)))
        return .object(members)
    }

    static func render(
        _ hit: SearchResult, rank: Int, query: String, mode: String, style: Style,
        context: CommandContext, contexts: [String: String?]
    ) -> String {
        let metadata = hit.metadata.flatMap { try? JSONValue.parse($0) }
        var where_ = displayPath(hit.source, environment: context.console.environment,
                                 currentDirectory: context.console.currentDirectory)
        if let doc = metadata?["doc_id"]?.idString { where_ += " · \(doc)" }
        if case .int(let chunk)? = metadata?["chunk"], case .int(let chunks)? = metadata?["chunks"],
            chunks > 1
        {
            where_ += " (part \(chunk + 1)/\(chunks))"
        }
        var legs: [String] = []
        if mode == "hybrid" {
            legs.append("meaning " + (hit.vectorRank.map { "#\($0)" } ?? "-"))
            legs.append("words " + (hit.textRank.map { "#\($0)" } ?? "-"))
        }
        let score = String(format: "%.4f", hit.score)
        var header = "\(style.bold(String(format: "%2d", rank)))  \(style.dim(score))  \(style.cyan(where_))"
        if let note = Notebook.note(metadata: hit.metadata, source: hit.source) { header += "  " + style.dim(note.shortID) }
        if !legs.isEmpty { header += "  " + style.dim("[" + legs.joined(separator: ", ") + "]") }
        let snippet = Snippet.make(content: hit.content, query: query, style: style)
        var text = header + "\n    " + snippet + "\n"
        if let collection = metadata?["collection"]?.string, let note = contexts[collection] ?? nil {
            text += "    " + style.dim("\(collection): \(note)") + "\n"
        }
        return text
    }

    /// A source for display: `~/…` under the home folder, relative under the current folder.
    static func displayPath(
        _ source: String, environment: [String: String], currentDirectory: String
    ) -> String {
        guard source.hasPrefix("/") else { return source }
        if currentDirectory != "/", source.hasPrefix(currentDirectory + "/") {
            return String(source.dropFirst(currentDirectory.count + 1))
        }
        if let home = environment["HOME"], home != "/", source.hasPrefix(home + "/") {
            return "~" + source.dropFirst(home.count)
        }
        return source
    }
}
