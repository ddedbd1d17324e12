import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reports the paths that changed under some folders, in batches: a burst of saves becomes one
/// batch once the folders have been quiet for ``quiet`` (or ``longest`` after its first
/// change, so a steady stream of writes is still indexed).
///
/// On Linux it is inotify (one watch per folder, new folders watched as they appear); elsewhere
/// it compares the folders' files' sizes and modification times every ``pollInterval``.
/// `next()` blocks, so it runs on a thread of its own (see ``Watcher``); ``stop()`` may be
/// called from any thread (a signal handler's queue) and makes `next()` return nil.
///
/// ```swift
/// let watcher = try FolderWatcher(folders: ["/home/ana/notes"])
/// while let batch = watcher.next() { print(batch.paths) }
/// ```
// @unchecked Sendable: `stop()` only writes to the wake-up pipe (a thread-safe system call);
// everything else is used by the one thread that calls `next()`.
final class FolderWatcher: @unchecked Sendable {
    /// Quiet time that ends a batch.
    static let quiet = 0.05
    /// Longest a batch waits after its first change.
    static let longest = 0.3
    /// The polling fallback's period.
    static let pollInterval = 0.25

    private let folders: [String]
    /// Read end and write end of the pipe that wakes `next()` to stop.
    private let wake: (read: Int32, write: Int32)
    #if os(Linux)
        private let inotify: Int32
        /// Watched folder by watch descriptor.
        private var watched: [Int32: String] = [:]
    #else
        private var snapshot: [String: [Double]] = [:]
    #endif

    /// Starts watching `folders` (absolute paths) and every folder under them, hidden ones aside.
    /// - Throws: ``CLIError/failure(_:)`` when the system refuses (for example too many
    ///   watches: raise `fs.inotify.max_user_watches`).
    init(folders: [String]) throws {
        self.folders = folders
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            throw CLIError.failure("cannot create a pipe: \(String(cString: strerror(errno)))")
        }
        wake = (fds[0], fds[1])
        #if os(Linux)
            inotify = inotify_init1(Int32(IN_CLOEXEC))
            guard inotify >= 0 else {
                close(fds[0])
                close(fds[1])
                throw CLIError.failure(
                    "cannot watch folders (inotify): \(String(cString: strerror(errno)))")
            }
            for folder in folders { try watchTree(folder) }
        #else
            snapshot = scan()
        #endif
    }

    deinit {
        close(wake.read)
        close(wake.write)
        #if os(Linux)
            close(inotify)
        #endif
    }

    /// Makes the current or next `next()` return nil.
    func stop() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// A batch of changed paths, and when the watcher saw the first of them.
    struct Batch: Sendable {
        /// Files created, written, moved or deleted (folders created are walked and their files
        /// reported).
        var paths: Set<String>
        /// When the batch's first change was read: the start of the latency ``Watcher`` reports.
        var firstChange: ContinuousClock.Instant
    }

    /// The next batch of changed paths, or nil once stopped.
    func next() -> Batch? {
        var changed = Set<String>()
        var firstChange: Date?
        var firstInstant = ContinuousClock.now
        while true {
            var timeout = -1.0
            if let first = firstChange {
                timeout = min(Self.quiet, max(0, Self.longest - Date().timeIntervalSince(first)))
            }
            #if !os(Linux)
                timeout = timeout < 0 ? Self.pollInterval : min(timeout, Self.pollInterval)
            #endif
            switch wait(timeout: timeout) {
            case .stopped:
                return nil
            case .timedOut:
                #if !os(Linux)
                    changed.formUnion(pollChanges())
                    if firstChange == nil, !changed.isEmpty {
                        (firstChange, firstInstant) = (Date(), .now)
                    }
                    if firstChange == nil || Date().timeIntervalSince(firstChange!) < Self.quiet {
                        continue
                    }
                #endif
                if !changed.isEmpty { return Batch(paths: changed, firstChange: firstInstant) }
            case .ready:
                #if os(Linux)
                    changed.formUnion(readEvents())
                #endif
                if firstChange == nil, !changed.isEmpty {
                    (firstChange, firstInstant) = (Date(), .now)
                }
            }
        }
    }

    private enum Wait { case ready, timedOut, stopped }

    private func wait(timeout: Double) -> Wait {
        #if os(Linux)
            var fds = [
                pollfd(fd: inotify, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
            ]
        #else
            var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
        #endif
        let milliseconds = timeout < 0 ? -1 : Int32((timeout * 1000).rounded(.up))
        let count = poll(&fds, nfds_t(fds.count), milliseconds)
        if count < 0 { return errno == EINTR ? .timedOut : .stopped }
        if count == 0 { return .timedOut }
        if fds[fds.count - 1].revents != 0 { return .stopped }
        return .ready
    }

    #if os(Linux)
        private static let events = UInt32(
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE)

        private func watchTree(_ folder: String) throws {
            let descriptor = inotify_add_watch(inotify, folder, Self.events | UInt32(IN_ONLYDIR))
            guard descriptor >= 0 else {
                // A folder that vanished meanwhile is no error; running out of watches is.
                if errno == ENOENT || errno == ENOTDIR { return }
                throw CLIError.failure(
                    "cannot watch \(folder): \(String(cString: strerror(errno)))"
                        + (errno == ENOSPC ? " (raise fs.inotify.max_user_watches)" : ""))
            }
            watched[descriptor] = folder
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where !name.hasPrefix(".") {
                let path = folder + "/" + name
                var isDirectory: ObjCBool = false
                if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                    isDirectory.boolValue,
                    (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nil
                {
                    try watchTree(path)
                }
            }
        }

        /// Reads the pending inotify events into changed paths.
        private func readEvents() -> Set<String> {
            var changed = Set<String>()
            // Owned here, 64 KiB: room for hundreds of events per read.
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { return changed }
            var offset = 0
            let header = MemoryLayout<inotify_event>.size
            while offset + header <= count {
                let (descriptor, mask, length) = buffer.withUnsafeBytes { raw in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.wd, event.mask, Int(event.len))
                }
                let nameBytes = buffer[(offset + header)..<min(count, offset + header + length)]
                let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                offset += header + length
                guard let folder = watched[descriptor], !name.isEmpty, !name.hasPrefix(".") else {
                    continue
                }
                let path = folder + "/" + name
                if mask & UInt32(IN_ISDIR) != 0 {
                    // A new folder (created, or moved in): watch it and report its files; a
                    // folder moved out or deleted: report it, the indexer drops what was under it.
                    if mask & UInt32(IN_CREATE | IN_MOVED_TO) != 0 {
                        try? watchTree(path)
                        changed.formUnion(Self.files(under: path))
                    } else {
                        changed.insert(path)
                    }
                } else {
                    changed.insert(path)
                }
            }
            return changed
        }
    #else
        /// Size and modification time of every file under the folders.
        private func scan() -> [String: [Double]] {
            var files: [String: [Double]] = [:]
            for folder in folders {
                for path in Self.files(under: folder) {
                    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
                    let size = (attributes?[.size] as? NSNumber)?.doubleValue ?? 0
                    let modified =
                        (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                    files[path] = [size, modified]
                }
            }
            return files
        }

        private func pollChanges() -> Set<String> {
            let now = scan()
            var changed = Set<String>()
            for (path, stamp) in now where snapshot[path] != stamp { changed.insert(path) }
            for path in snapshot.keys where now[path] == nil { changed.insert(path) }
            snapshot = now
            return changed
        }
    #endif

    /// Every file under `folder`, hidden ones aside.
    static func files(under folder: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var files: [String] = []
        while let relative = enumerator.nextObject() as? String {
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            let path = folder + "/" + relative
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                files.append(path)
            }
        }
        return files
    }
}
