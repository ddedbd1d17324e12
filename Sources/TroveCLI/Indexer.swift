import Foundation
import Trove
import TroveEmbeddings

/// Brings collections' records in line with their files: the one mechanism behind `trove
/// index`, `trove collection add` and `trove index --watch`.
///
/// A file is read and hashed; an unchanged hash is skipped, a changed file is replaced as a
/// unit (its chunks written in place under ids derived from its collection, its path in the
/// collection and their positions, with every model's vectors; chunks past its new end
/// deleted; its hash recorded; see ``Notebook/replace(file:collection:key:sha256:bytes:records:)``)
/// in the transaction of its batch, and a file the collection no longer covers
/// (deleted, outside the mask, or binary) loses its records.
///
/// ```swift
/// let indexer = Indexer(notebook: notebook, embedders: embedders, chunker: chunker, context: context)
/// var summary = IndexSummary()
/// try await indexer.refresh([notes], into: &summary)
/// ```
final class Indexer {
    /// A file read, hashed and chunked, waiting for its vectors.
    private struct Prepared {
        var collection: String
        var path: String
        /// The path's ``NoteCollection/key(of:)``, which the records' ids come from.
        var key: String
        var sha256: String
        var bytes: Int
        var isNew: Bool
        var records: [(content: String, source: String, metadata: String)]
    }

    /// Texts embedded together: enough to keep both cores busy.
    static let embeddingBatch = 64

    let notebook: Notebook
    let embedders: [any Embedder]
    let chunker: Chunker
    let context: CommandContext
    private var pending: [Prepared] = []
    private var pendingChunks = 0

    init(notebook: Notebook, embedders: [any Embedder], chunker: Chunker, context: CommandContext) {
        self.notebook = notebook
        self.embedders = embedders
        self.chunker = chunker
        self.context = context
    }

    /// The files a collection covers now; a path that no longer exists is warned about and
    /// contributes none (so its files' records go). A path, folder or entry that cannot be read
    /// now (a link whose target is missing, an unmounted drive, a folder without permission) is
    /// warned about and counted as failed, and its files' records stay.
    func discover(_ collection: NoteCollection) throws -> Discovery {
        let manager = FileManager.default
        var discovery = Discovery()
        for path in collection.paths {
            if !manager.fileExists(atPath: path), let link = FileDiscovery.brokenLink(path) {
                let entry = Discovery.Unreadable(path: path, reason: link)
                if !discovery.unreadable.contains(entry) {
                    discovery.unreadable.append(entry)
                    context.warn(
                        "cannot read \(path): \(link) (skipped; its earlier records are kept)")
                }
                continue
            }
            guard manager.fileExists(atPath: path) else {
                context.warn(
                    "\(path) of collection '\(collection.name)' no longer exists; its notes are removed"
                )
                continue
            }
            let found = try FileDiscovery.discover(
                [path], mask: collection.mask, environment: context.console.environment,
                currentDirectory: context.console.currentDirectory)
            for file in found.files where !discovery.files.contains(file) {
                discovery.files.append(file)
            }
            discovery.folders += found.folders
            for entry in found.unreadable where !discovery.unreadable.contains(entry) {
                discovery.unreadable.append(entry)
                context.warn(
                    "cannot read \(entry.path): \(entry.reason) (skipped; its earlier records are kept)"
                )
            }
        }
        return discovery
    }

    /// Refreshes whole collections: every covered file indexed when changed, every file no
    /// longer covered removed.
    func refresh(_ collections: [NoteCollection], into summary: inout IndexSummary) async throws {
        let console = context.console
        var plans: [(NoteCollection, Discovery, [String: String])] = []
        for collection in collections {
            plans.append(
                (
                    collection, try discover(collection),
                    try await notebook.indexedFiles(collection: collection.name)
                ))
        }
        let files = plans.flatMap { $0.1.files }
        let totalBytes = files.reduce(0) { $0 + Self.size(of: $1.path) }
        let progress = ProgressBar(
            sink: console.err,
            enabled: console.stderrIsTerminal && !context.json && !context.options.quiet,
            totalFiles: files.count, totalBytes: totalBytes)
        defer { progress.finish() }
        for (collection, discovery, known) in plans {
            // A folder that cannot be read now is not a folder emptied: what it held stays.
            summary.failed += discovery.unreadable.count
            let present = Set(discovery.files.map(\.path))
            let vanished = known.keys.sorted().filter { file in
                !present.contains(file) && !discovery.unreadable.contains { $0.covers(file) }
            }
            try await remove(vanished, from: collection, into: &summary)
            for file in discovery.files {
                try await stage(file, collection: collection, known: known, into: &summary)
                progress.update(
                    files: summary.processed, bytes: summary.bytesRead, chunks: summary.chunks)
                if pendingChunks >= Self.embeddingBatch { try await flush(into: &summary) }
            }
        }
        try await flush(into: &summary)
        progress.update(
            files: summary.processed, bytes: summary.bytesRead, chunks: summary.chunks, force: true)
    }

    /// Refreshes single paths (what `--watch` saw change): each is indexed into every
    /// collection that covers it, and removed from the collections that hold it but no longer
    /// cover it (it was deleted, or is binary now).
    func refresh(
        paths: Set<String>, in collections: [NoteCollection], into summary: inout IndexSummary
    ) async throws {
        let manager = FileManager.default
        for collection in collections {
            let known = try await notebook.indexedFiles(collection: collection.name)
            var gone: [String] = []
            for path in paths.sorted() {
                var isDirectory: ObjCBool = false
                let exists =
                    manager.fileExists(atPath: path, isDirectory: &isDirectory)
                    && !isDirectory.boolValue
                if exists, collection.covers(path) {
                    let format = DocumentFormat.forFile(named: path) ?? .text
                    try await stage(
                        DiscoveredFile(path: path, format: format), collection: collection,
                        known: known,
                        into: &summary)
                } else if !exists {
                    // A file, or a folder with everything that was under it.
                    gone += known.keys.filter { $0 == path || $0.hasPrefix(path + "/") }
                } else if known[path] != nil {
                    gone.append(path)  // no longer covered: outside the mask now
                }
            }
            try await remove(Array(Set(gone)).sorted(), from: collection, into: &summary)
        }
        try await flush(into: &summary)
    }

    private func remove(
        _ files: [String], from collection: NoteCollection, into summary: inout IndexSummary
    )
        async throws
    {
        guard !files.isEmpty else { return }
        try await notebook.inTransaction {
            for file in files {
                try await notebook.remove(
                    file: file, collection: collection.name, key: collection.key(of: file))
            }
        }
        summary.removed += files.count
    }

    /// Reads, hashes and chunks one file; queues it unless unchanged, skipped or failed.
    private func stage(
        _ file: DiscoveredFile, collection: NoteCollection, known: [String: String],
        into summary: inout IndexSummary
    ) async throws {
        summary.processed += 1
        let bytes: [UInt8]
        do {
            bytes = try DocumentReader.bytes(of: file.path)
        } catch let error as DocumentError {
            context.warn(error.message + " (skipped; its earlier records are kept)")
            summary.failed += 1
            return
        }
        summary.bytesRead += bytes.count
        let hash = SHA256.hexDigest(bytes)
        if known[file.path] == hash {
            summary.unchanged += 1
            return
        }
        let records: [(content: String, source: String, metadata: String)]
        do {
            let documents = try DocumentReader.documents(
                in: bytes, format: file.format, path: file.path)
            records = Self.chunkRecords(
                documents, file: file.path, collection: collection.name, chunker: chunker)
            // Checked here so one file's oversized metadata is that file's failure, not the
            // batch's.
            let limit = notebook.collection.configuration.metadataByteLimit
            if let large = records.first(where: { $0.metadata.utf8.count > limit }) {
                throw DocumentError.invalidDocument(
                    path: file.path,
                    reason:
                        "metadata of \(large.metadata.utf8.count) bytes is over the limit of \(limit)"
                )
            }
        } catch DocumentError.binary {
            // Not a note (README: binary files are skipped); a file that turned binary loses
            // the records of its text days.
            summary.skipped += 1
            if known[file.path] != nil {
                try await remove([file.path], from: collection, into: &summary)
            }
            return
        } catch let error as DocumentError {
            context.warn(error.message + " (skipped; its earlier records are kept)")
            summary.failed += 1
            return
        }
        pending.append(
            Prepared(
                collection: collection.name, path: file.path, key: collection.key(of: file.path),
                sha256: hash,
                bytes: bytes.count,
                isNew: known[file.path] == nil, records: records))
        pendingChunks += records.count
    }

    /// Embeds and writes the queued files.
    func flush(into summary: inout IndexSummary) async throws {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending.removeAll()
        pendingChunks = 0
        let texts = batch.flatMap { $0.records.map(\.content) }
        // Passages: each model with its document prefix (if it has one).
        var vectors: [[[Float]]] = []
        for embedder in embedders { vectors.append(try await embedder.embed(texts)) }
        // One transaction per batch: each file is replaced whole together with the batch's
        // other files, and a failure leaves every one of them as it was. Fewer commits, fewer
        // syncs.
        let notebook = notebook
        try await notebook.inTransaction {
            var offset = 0
            for prepared in batch {
                let records = prepared.records.enumerated().map { index, record in
                    Notebook.PendingRecord(
                        content: record.content, source: record.source,
                        metadata: record.metadata, vectors: vectors.map { $0[offset + index] })
                }
                offset += records.count
                try await notebook.replace(
                    file: prepared.path, collection: prepared.collection, key: prepared.key,
                    sha256: prepared.sha256,
                    bytes: prepared.bytes, records: records)
            }
        }
        for prepared in batch {
            if prepared.isNew { summary.added += 1 } else { summary.updated += 1 }
            summary.chunks += prepared.records.count
        }
    }

    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue
            ?? 0
    }

    /// The records of one file: each document split into chunks, each chunk with the file,
    /// its collection, its position and (for .jsonl) the document's id and metadata.
    static func chunkRecords(
        _ documents: [SourceDocument], file: String, collection: String?, chunker: Chunker
    ) -> [(content: String, source: String, metadata: String)] {
        var records: [(content: String, source: String, metadata: String)] = []
        for document in documents {
            let chunks = chunker.chunks(of: document.text)
            for (index, chunk) in chunks.enumerated() {
                var metadata = document.metadata.filter {
                    !["file", "chunk", "chunks", "doc_id", "collection"].contains($0.0)
                }
                if let key = document.key { metadata.append(("doc_id", .string(key))) }
                metadata += [
                    ("file", .string(file)), ("chunk", .int(Int64(index))),
                    ("chunks", .int(Int64(chunks.count))),
                ]
                if let collection { metadata.append(("collection", .string(collection))) }
                records.append(
                    (chunk, document.source ?? file, JSONValue.object(metadata).serialized()))
            }
        }
        return records
    }
}
