import Foundation
import Trove
import TroveEmbeddings
import TroveSQLite

extension SearchCommand {
    func run(_ context: CommandContext) async throws -> Int32 {
        let search = self
        let path = try context.databasePath()
        // Text search needs no model; load them only for the modes that embed the query.
        var embedders: [any Embedder] = []
        if search.mode != .text, FileManager.default.fileExists(atPath: path) {
            let database = try EncryptionPassphrase.openDatabase(path: path, context: context)
            embedders = try context.loadEmbedders(
                matching: try await Notebook.manifests(of: database))
        }
        let notebook = try await Notebook.openExisting(
            path: path, embedders: search.mode == .text ? nil : embedders, context: context)
        let hits = try await results(notebook: notebook, embedders: embedders, context: context)

        if context.json {
            if search.files {
                try context.printJSON(search.fileReport(hits))
            } else {
                try context.printJSON(search.report(hits))
            }
            return ExitCode.success
        }
        if hits.isEmpty {
            let bar =
                search.minimumScore > 0
                ? " with a score of at least \(SearchOutput.score(search.minimumScore))" : ""
            context.console.err.write("no results for \"\(search.query)\"\(bar)\n")
            return ExitCode.success
        }
        let output = SearchOutput(context: context, query: search.query, mode: search.modeName)
        for (index, hit) in hits.enumerated() {
            context.console.out.write(
                search.files ? output.fileLine(hit) : output.render(hit, rank: index + 1))
        }
        return ExitCode.success
    }

    /// `--min-score X`: a number from 0 to 1.
    static func minimumScore(_ text: String?) throws -> Double {
        guard let text else { return 0 }
        guard let value = Double(text), value.isFinite, (0...1).contains(value) else {
            throw CLIError.usage(
                "--min-score expects a number from 0 to 1, got '\(text)'", command: "search")
        }
        return value
    }

    /// Records of the collections named with `-c` (`.all` without one).
    /// - Throws: ``CLIError/notFound(_:)`` for a name that is not a collection.
    static func collectionFilter(_ names: [String], among collections: [NoteCollection]) throws
        -> Filter
    {
        guard !names.isEmpty else { return .all }
        for name in names where !collections.contains(where: { $0.name == name }) {
            throw CollectionCommand.unknown(name, among: collections, command: "search")
        }
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        return .sql(
            "json_extract(metadata, '$.collection') IN (\(marks))", names.map(SQLValue.text))
    }

    /// The `--where` fragment with its typed `--bind` values, `.all` without one.
    static func whereClause(_ arguments: ParsedArguments) throws -> Filter {
        let sql = arguments.value("where")
        let binds = arguments.all("bind")
        guard let sql else {
            if !binds.isEmpty {
                throw CLIError.usage(
                    "--bind needs a --where with ? placeholders", command: "search")
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
        if try await notebook.collection.count(where: .source(source)) > 0 { return source }
        let absolute = Locations.absolute(
            source, environment: context.console.environment,
            currentDirectory: context.console.currentDirectory)
        if try await notebook.collection.count(where: .source(absolute)) > 0 { return absolute }
        return source
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
