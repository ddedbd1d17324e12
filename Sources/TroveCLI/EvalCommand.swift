import Foundation
import Trove
import TroveEmbeddings

/// `trove eval --docs NOTES.jsonl --queries QUERIES.jsonl [--out DIR]`.
struct EvalCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "eval",
        summary: "measure retrieval quality on a labelled query set",
        usage: "eval [options] --docs NOTES.jsonl --queries QUERIES.jsonl",
        discussion: """
            Indexes the documents into a temporary database (deleted afterwards),
            runs every query in text, vector and hybrid mode, and prints hit@1, hit@3, hit@10,
            MRR@10 and nDCG@10 per mode, overall and per query kind, computed as
            shared/eval/score.py does. Documents: {"id", "text", ...} per line; queries:
            {"id", "query", "answer", "kind"} per line. With --out, writes text.jsonl,
            vector.jsonl and hybrid.jsonl there: {"id": query id, "ranked": [top 10 doc ids]}.
            """,
        options: [
            OptionSpec("docs", value: "FILE", help: "documents, one JSON object per line"),
            OptionSpec("queries", value: "FILE", help: "queries with their answer and kind"),
            OptionSpec("out", value: "DIR", help: "write one run file per mode into DIR"),
            OptionSpec(
                "chunk-tokens", value: "N",
                help:
                    "largest chunk, in estimated model tokens (default \(Chunker.defaultMaxTokens))"
            ),
        ] + Commands.model + Commands.common,
        examples: [
            (
                "trove eval --docs notes-dev/notes.jsonl --queries notes-dev/queries.jsonl --out runs",
                "table per mode; run files in ./runs"
            )
        ])

    var documents: String
    var queries: String
    /// `--out`: where the run files go.
    var out: String?
    var chunkTokens: Int

    init(parsing arguments: ParsedArguments) throws {
        guard let documents = arguments.value("docs"), let queries = arguments.value("queries")
        else {
            throw CLIError.usage("eval needs --docs FILE and --queries FILE", command: "eval")
        }
        (self.documents, self.queries) = (documents, queries)
        out = arguments.value("out")
        chunkTokens = try arguments.chunkTokens(command: "eval")
    }

    /// The modes compared, in the order they are reported.
    static let modes: [(name: String, mode: SearchMode)] = [
        ("text", .text), ("vector", .vector), ("hybrid", .hybrid),
    ]
    /// Chunks fetched per query before collapsing chunks of one document into one entry.
    static let depth = 50

    func run(_ context: CommandContext) async throws -> Int32 {
        let console = context.console
        let docsPath = context.absolutePath(documents)
        let queriesPath = context.absolutePath(queries)
        for path in [docsPath, queriesPath] where !FileManager.default.fileExists(atPath: path) {
            throw CLIError.notFound("no such file: \(path)")
        }
        guard let docsText = DocumentReader.text(of: try DocumentReader.bytes(of: docsPath)) else {
            throw DocumentError.binary(path: docsPath)
        }
        guard let queriesText = DocumentReader.text(of: try DocumentReader.bytes(of: queriesPath))
        else {
            throw DocumentError.binary(path: queriesPath)
        }
        let documents = try DocumentReader.jsonLines(docsText, path: docsPath)
        let queries = try EvalQuery.load(queriesText, path: queriesPath)
        let known = Set(documents.compactMap(\.key))
        let orphans = queries.filter { !known.contains($0.answer) }
        if !orphans.isEmpty {
            context.warn(
                "\(orphans.count) quer\(orphans.count == 1 ? "y's answer is" : "ies' answers are") "
                    + "not among the documents: "
                    + orphans.prefix(5).map(\.id).joined(separator: ", "))
        }
        let outFolder = out.map(context.absolutePath)

        let embedders = try context.loadEmbedders()
        let chunker = try context.chunker(for: embedders[0], maxTokens: chunkTokens)

        // A private store in a temporary folder, removed when done.
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("trove-eval-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try Database(path: folder.appendingPathComponent("eval.sqlite").path)
        // As `trove index` lays them out: a vector field per model.
        let collection = try await SearchCollection(
            Notebook.collectionName, in: database, embedder: embedders[0],
            additionalEmbedders: Array(embedders.dropFirst()), tokenizer: Notebook.defaultTokenizer)

        let indexStart = Date()
        let records = Indexer.chunkRecords(
            documents, file: docsPath, collection: nil, chunker: chunker)
        let progress = ProgressBar(
            sink: console.err, enabled: console.stderrIsTerminal && !context.json,
            totalFiles: documents.count, totalBytes: records.count)
        var entries: [VectorEntry] = []
        var start = 0
        while start < records.count {
            let end = min(start + Indexer.embeddingBatch, records.count)
            var vectors: [[[Float]]] = []
            for embedder in embedders {
                vectors.append(try await embedder.embed(records[start..<end].map(\.content)))
            }
            for (offset, record) in records[start..<end].enumerated() {
                entries.append(
                    VectorEntry(
                        id: .int(Int64(start + offset + 1)), content: record.content,
                        source: record.source, metadata: record.metadata,
                        vector: vectors[0][offset],
                        additionalVectors: vectors.dropFirst().map { $0[offset] }))
            }
            start = end
            progress.update(files: 0, bytes: start, chunks: start)
        }
        progress.finish()
        try await collection.insert(entries)
        let search = MultiModelSearch(collection: collection, embedders: embedders)
        let indexSeconds = Date().timeIntervalSince(indexStart)
        // Which document each record came from.
        var documentOf: [DocumentID: String] = [:]
        for entry in entries {
            if let metadata = entry.metadata,
                let key = try? JSONValue.parse(metadata)["doc_id"]?.idString
            {
                documentOf[entry.id] = key
            }
        }

        var reports: [(name: String, report: RetrievalReport, seconds: Double)] = []
        for (name, mode) in Self.modes {
            let started = Date()
            var run: [String: [String]] = [:]
            for query in queries {
                let hits = try await search.search(
                    query.query, mode: mode, where: .all, limit: min(Self.depth, entries.count))
                var ranked: [String] = []
                for hit in hits {
                    guard let key = documentOf[hit.id], !ranked.contains(key) else { continue }
                    ranked.append(key)
                    if ranked.count == RetrievalSummary.cutoff { break }
                }
                run[query.id] = ranked
            }
            let report = try RetrievalReport(queries: queries, run: run)
            reports.append((name, report, Date().timeIntervalSince(started)))
            if let outFolder {
                try Self.writeRunFile(
                    RunFile.contents(queries: queries, run: run), folder: outFolder, name: name)
            }
        }

        let model = embedders.map(\.manifest.modelID).joined(separator: " + ")
        if context.json {
            try context.printJSON(
                EvalResult(
                    documents: documents.count, chunks: entries.count, queries: queries.count,
                    model: model,
                    modes: NamedValues(
                        reports.map {
                            ($0.name, NamedValues($0.report.rows.map { ($0.name, $0.summary) }))
                        }),
                    out: outFolder))
            return ExitCode.success
        }
        let style = context.style
        var text =
            "\(documents.count) documents (\(entries.count) chunks), \(queries.count) queries, "
        text += "model \(model); indexed in \(String(format: "%.1f", indexSeconds)) s\n"
        for entry in reports {
            let perQuery = entry.seconds / Double(max(queries.count, 1)) * 1000
            text +=
                "\n" + style.bold("== \(entry.name)")
                + style.dim(
                    String(format: "  (%.1f ms per query)", perQuery)) + "\n"
            text += entry.report.table
        }
        text += "\n" + style.bold("== overall") + "\n"
        text += "mode      hit@1   hit@3   hit@10  MRR@10  nDCG@10\n"
        for entry in reports {
            let s = entry.report.rows[0].summary
            func share(_ hits: Int) -> String {
                String(format: "%-8.2f", Double(hits) / Double(max(s.count, 1)))
            }
            text +=
                entry.name.padding(toLength: 10, withPad: " ", startingAt: 0) + share(s.hitsAt1)
                + share(s.hitsAt3) + share(s.hitsAt10) + String(format: "%-8.3f%.3f", s.mrr, s.ndcg)
                + "\n"
        }
        if let outFolder {
            text +=
                "\nrun files: "
                + Self.modes.map { "\(outFolder)/\($0.name).jsonl" }.joined(separator: ", ") + "\n"
        }
        console.out.write(text)
        return ExitCode.success
    }

    private static func writeRunFile(_ contents: String, folder: String, name: String) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true)
            try contents.write(
                toFile: (folder as NSString).appendingPathComponent("\(name).jsonl"),
                atomically: true, encoding: .utf8)
        } catch {
            throw CLIError.failure(
                "cannot write run files to \(folder): \(error.localizedDescription)")
        }
    }
}

/// What `trove eval --json` prints: the corpus, the model, and per mode the scores overall and
/// per query kind, as score.py --json writes them.
struct EvalResult: Codable, Equatable, Sendable {
    var documents: Int
    var chunks: Int
    var queries: Int
    var model: String
    /// Mode name → kind (`overall` first) → scores.
    var modes: NamedValues<NamedValues<RetrievalSummary>>
    /// The folder the run files were written to.
    var out: String?
}
