import Foundation
import Trove
import TroveEmbeddings

/// What `trove index` did; printed as one line, or as JSON with `--json`:
///
/// ```
/// indexed 62 files: 62 added, 0 updated, 0 removed, 0 unchanged (77 chunks) in 9.7 s
/// {"added":62,"updated":0,"removed":0,"unchanged":0,"failed":0,"chunks":77,"seconds":9.7,...}
/// ```
struct IndexSummary: Sendable, Equatable {
    var added = 0
    var updated = 0
    var removed = 0
    var unchanged = 0
    var failed = 0
    /// Chunks written (added and updated files).
    var chunks = 0
    var seconds = 0.0

    var json: JSONValue {
        .object([
            ("added", .int(Int64(added))), ("updated", .int(Int64(updated))),
            ("removed", .int(Int64(removed))), ("unchanged", .int(Int64(unchanged))),
            ("failed", .int(Int64(failed))), ("chunks", .int(Int64(chunks))),
            ("seconds", .double((seconds * 1000).rounded() / 1000)),
        ])
    }

    var line: String {
        var text =
            "\(added) added, \(updated) updated, \(removed) removed, \(unchanged) unchanged"
        if failed > 0 { text += ", \(failed) failed" }
        return text + " (\(chunks) chunks) in " + String(format: "%.1f", seconds) + " s"
    }
}

/// `trove index PATH...`.
enum IndexCommand {
    /// A file read, hashed and chunked, waiting for its vectors.
    private struct Prepared {
        var file: DiscoveredFile
        var sha256: String
        var bytes: Int
        var isNew: Bool
        var records: [(content: String, source: String, metadata: String)]
    }

    /// Texts embedded together: enough to keep both cores busy.
    static let embeddingBatch = 64

    static func run(_ context: CommandContext) async throws -> Int32 {
        let started = Date()
        let path = try context.databasePath()
        let console = context.console
        let discovery = try FileDiscovery.discover(
            context.arguments.positionals, environment: console.environment,
            currentDirectory: console.currentDirectory)
        let embedders = try await context.loadEmbedders(forDatabaseAt: path)
        // Chunks are sized with the first model's tokenizer.
        let chunker = try context.chunker(for: embedders[0])
        let notebook = try await Notebook.openForWriting(
            path: path, embedders: embedders, context: context, encrypt: context.arguments.flag("encrypt"))
        let known = try await notebook.indexedFiles()

        var summary = IndexSummary()
        let totalBytes = discovery.files.reduce(0) { total, file in
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size])
                .flatMap { $0 as? NSNumber }?.intValue
            return total + (size ?? 0)
        }
        let progress = ProgressBar(
            sink: console.err,
            enabled: console.stderrIsTerminal && !context.json && !context.arguments.flag("quiet"),
            totalFiles: discovery.files.count, totalBytes: totalBytes)
        var filesDone = 0
        var bytesDone = 0

        // Files that vanished from the folders walked this time.
        let present = Set(discovery.files.map(\.path))
        let vanished = known.keys.sorted().filter { file in
            !present.contains(file) && discovery.folders.contains { file.hasPrefix($0 + "/") }
                && !FileManager.default.fileExists(atPath: file)
        }
        if !vanished.isEmpty {
            try await notebook.inTransaction {
                for file in vanished { try await notebook.remove(file: file) }
            }
            summary.removed = vanished.count
        }

        var pending: [Prepared] = []
        var pendingChunks = 0

        func flush() async throws {
            guard !pending.isEmpty else { return }
            let texts = pending.flatMap { $0.records.map(\.content) }
            // Passages: each model with its document prefix (if it has one).
            var vectors: [[[Float]]] = []
            for embedder in embedders { vectors.append(try await embedder.embed(texts)) }
            // One transaction per batch: each file is replaced whole (its old records deleted,
            // the new ones inserted, its hash recorded) together with the batch's other files,
            // and a failure leaves every one of them as it was. Fewer commits, fewer syncs.
            try await notebook.inTransaction {
                var offset = 0
                for prepared in pending {
                    let records = prepared.records.enumerated().map { index, record in
                        Notebook.PendingRecord(
                            content: record.content, source: record.source,
                            metadata: record.metadata, vectors: vectors.map { $0[offset + index] })
                    }
                    offset += records.count
                    try await notebook.replace(
                        file: prepared.file.path, sha256: prepared.sha256, bytes: prepared.bytes,
                        records: records)
                }
            }
            for prepared in pending {
                if prepared.isNew { summary.added += 1 } else { summary.updated += 1 }
                summary.chunks += prepared.records.count
                filesDone += 1
                bytesDone += prepared.bytes
                progress.update(
                    files: filesDone, bytes: bytesDone, chunks: summary.chunks,
                    force: filesDone == discovery.files.count)
            }
            pending.removeAll()
            pendingChunks = 0
        }

        for file in discovery.files {
            let bytes: [UInt8]
            do {
                bytes = try DocumentReader.bytes(of: file.path)
            } catch let error as DocumentError {
                progress.finish()
                context.warn(error.message + " (skipped; its earlier records are kept)")
                summary.failed += 1
                filesDone += 1
                continue
            }
            let hash = SHA256.hex(bytes)
            if known[file.path] == hash {
                summary.unchanged += 1
                filesDone += 1
                bytesDone += bytes.count
                progress.update(files: filesDone, bytes: bytesDone, chunks: summary.chunks)
                continue
            }
            let records: [(content: String, source: String, metadata: String)]
            do {
                let documents = try DocumentReader.documents(
                    in: bytes, format: file.format, path: file.path)
                records = chunkRecords(documents, file: file.path, chunker: chunker)
                // Checked here so one file's oversized metadata is that file's failure, not the
                // batch's.
                let limit = notebook.collection.configuration.metadataByteLimit
                if let large = records.first(where: { $0.metadata.utf8.count > limit }) {
                    throw DocumentError.invalidDocument(
                        path: file.path,
                        reason: "metadata of \(large.metadata.utf8.count) bytes is over the limit of \(limit)")
                }
            } catch let error as DocumentError {
                progress.finish()
                context.warn(error.message + " (skipped; its earlier records are kept)")
                summary.failed += 1
                filesDone += 1
                continue
            }
            pending.append(
                Prepared(
                    file: file, sha256: hash, bytes: bytes.count, isNew: known[file.path] == nil,
                    records: records))
            pendingChunks += records.count
            if pendingChunks >= embeddingBatch { try await flush() }
        }
        try await flush()
        progress.finish()
        // The store merges FTS5 segments once writes pause, but this process ends right away:
        // merge now, so snippets and FTS5 queries don't read one segment per batch (a fraction
        // of a second even for tens of thousands of chunks).
        if summary.added + summary.updated + summary.removed > 0 {
            try await notebook.database.mergeTextIndexes()
        }

        summary.seconds = Date().timeIntervalSince(started)
        if context.json {
            var members = summary.json.members ?? []
            members.append(("database", .string(path)))
            console.out.write(JSONValue.object(members).serialized() + "\n")
        } else if !context.arguments.flag("quiet") {
            let style = Style(
                enabled: console.colorEnabled(
                    terminal: console.stderrIsTerminal,
                    noColorFlag: context.arguments.flag("no-color")))
            let files = discovery.files.count
            console.err.write(
                "\(style.green("indexed")) \(files) file\(files == 1 ? "" : "s"): \(summary.line)\n")
        }
        return summary.failed > 0 ? ExitCode.failure : ExitCode.success
    }

    /// The records of one file: each document split into chunks, each chunk with the file,
    /// its position and (for .jsonl) the document's id and metadata.
    static func chunkRecords(
        _ documents: [SourceDocument], file: String, chunker: Chunker
    ) -> [(content: String, source: String, metadata: String)] {
        var records: [(content: String, source: String, metadata: String)] = []
        for document in documents {
            let chunks = chunker.chunks(of: document.text)
            for (index, chunk) in chunks.enumerated() {
                var metadata = document.metadata.filter {
                    !["file", "chunk", "chunks", "doc_id"].contains($0.0)
                }
                if let key = document.key { metadata.append(("doc_id", .string(key))) }
                metadata += [
                    ("file", .string(file)), ("chunk", .int(Int64(index))),
                    ("chunks", .int(Int64(chunks.count))),
                ]
                records.append(
                    (chunk, document.source ?? file, JSONValue.object(metadata).serialized()))
            }
        }
        return records
    }
}
