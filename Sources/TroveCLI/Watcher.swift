import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `trove index --watch`: after the first refresh, follows the collections' folders and
/// re-indexes what changes, one batch at a time (``FolderWatcher`` batches bursts), until
/// Ctrl-C (SIGINT) or SIGTERM.
///
/// A batch is written by ``Indexer/refresh(paths:in:into:)``: each group of files is replaced
/// in one transaction. A signal only wakes the watcher; the batch being written is finished
/// (or, if the process is killed outright, rolled back by SQLite), so the database is always
/// consistent when the command returns.
enum Watcher {
    static func run(collections: [NoteCollection], indexer: Indexer, context: CommandContext)
        async throws -> Int32
    {
        let manager = FileManager.default
        var folders: [String] = []
        for path in collections.flatMap(\.paths) {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            // A single file is followed through its folder.
            let folder = isDirectory.boolValue ? path : (path as NSString).deletingLastPathComponent
            if !folders.contains(folder) { folders.append(folder) }
        }
        let watcher = try FolderWatcher(folders: folders)

        // Signals only wake the watcher: the handlers run on a dispatch queue, never inside a
        // write.
        let signals = [SIGINT, SIGTERM].map { number -> DispatchSourceSignal in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { watcher.stop() }
            source.resume()
            return source
        }
        defer {
            for (source, number) in zip(signals, [SIGINT, SIGTERM]) {
                source.cancel()
                signal(number, SIG_DFL)
            }
        }
        let batches = AsyncStream<FolderWatcher.Batch> { continuation in
            // `next()` blocks in poll(2): a thread of its own, not one of the concurrency pool's.
            let thread = Thread {
                while let batch = watcher.next() { continuation.yield(batch) }
                continuation.finish()
            }
            thread.name = "trove-watch"
            thread.start()
        }
        let quiet = context.options.quiet
        let names = collections.map(\.name).joined(separator: ", ")
        if !quiet, !context.json {
            context.console.err.write(
                "watching \(folders.count) folder\(folders.count == 1 ? "" : "s") of \(names); Ctrl-C stops\n"
            )
        }

        for await batch in batches {
            let started = Date()
            var summary = IndexSummary()
            try await indexer.refresh(paths: batch.paths, in: collections, into: &summary)
            guard summary.added + summary.updated + summary.removed + summary.failed > 0 else {
                continue
            }
            summary.seconds = Date().timeIntervalSince(started)
            // From the first file event to the commit: the delay a person sees, measured here
            // (a process watching ours from outside would measure its own scheduling too).
            let latency = ContinuousClock.now - batch.firstChange
            let milliseconds = Int(
                (Double(latency.components.seconds) * 1000
                    + Double(latency.components.attoseconds) / 1e15).rounded())
            if context.json {
                try context.printJSON(
                    WatchBatchResult(summary: summary, latencyMilliseconds: milliseconds))
            } else if !quiet {
                let time = DateFormatter.localizedString(
                    from: Date(), dateStyle: .none, timeStyle: .medium)
                context.console.err.write(
                    "\(time)  \(summary.line); \(milliseconds) ms from the first change to the commit\n"
                )
            }
        }
        if !quiet, !context.json {
            context.console.err.write("stopped watching; the database is up to date\n")
        }
        return ExitCode.success
    }
}
