import Foundation
import Trove

/// How a file's content becomes documents.
enum DocumentFormat: String, Sendable, Equatable {
    /// The whole file is one document (.txt and anything named explicitly).
    case text
    /// The whole file is one document (.md, .markdown).
    case markdown
    /// One document per line: `{"id", "text", optional "source", "metadata"}`.
    case jsonl

    /// The format for a file name, or nil when folders should not pick the file up.
    static func forFile(named name: String) -> DocumentFormat? {
        switch (name as NSString).pathExtension.lowercased() {
        case "txt", "text": return .text
        case "md", "markdown": return .markdown
        case "jsonl", "ndjson": return .jsonl
        default: return nil
        }
    }
}

/// A file found on the command line or under a folder given there.
struct DiscoveredFile: Sendable, Equatable {
    /// Absolute, standardised path: the records' source and the key of its content hash.
    var path: String
    var format: DocumentFormat
}

/// The files to index, and what was passed over.
struct Discovery: Sendable, Equatable {
    var files: [DiscoveredFile] = []
    /// Folders that were walked: files recorded under them that no longer exist are removed.
    var folders: [String] = []
    /// Folders that could not be listed and entries that could not be examined while walking
    /// (a link that leads nowhere or loops), with the reason; hidden entries are never listed.
    /// Indexing warns about each and fails, and keeps the records it holds under them.
    var unreadable: [Unreadable] = []

    struct Unreadable: Sendable, Equatable {
        var path: String
        var reason: String

        /// Whether `file` is this path or lies under it.
        func covers(_ file: String) -> Bool { file == path || file.hasPrefix(path + "/") }
    }
}

/// Finds the files to index.
enum FileDiscovery {
    /// Expands `paths` into the files to index.
    ///
    /// Files named explicitly are taken whatever their extension (read as text unless .jsonl);
    /// folders are walked recursively for the files whose path relative to the folder matches
    /// `mask` (by default .txt, .md, .markdown and .jsonl files; a file of another extension is
    /// read as text), skipping hidden entries (names starting with `.`) and not following
    /// symbolic links to folders (which could loop).
    ///
    /// ```swift
    /// let found = try FileDiscovery.discover(["~/notes"], environment: env, currentDirectory: cwd)
    /// ```
    /// - Throws: ``CLIError/notFound(_:)`` naming the first path that does not exist,
    ///   ``CLIError/failure(_:)`` for a device, socket or pipe.
    /// - Complexity: O(entries under the folders).
    static func discover(
        _ paths: [String], mask: Glob = .standard, environment: [String: String],
        currentDirectory: String
    ) throws -> Discovery {
        var discovery = Discovery()
        var seen = Set<String>()
        let manager = FileManager.default
        for raw in paths {
            let path = Locations.absolute(
                raw, environment: environment, currentDirectory: currentDirectory)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw CLIError.notFound("no such file or folder: \(raw)")
            }
            if isDirectory.boolValue {
                if !discovery.folders.contains(path) { discovery.folders.append(path) }
                try walk(path, root: path, mask: mask, into: &discovery, seen: &seen)
            } else if let type = try? manager.attributesOfItem(atPath: path)[.type]
                as? FileAttributeType, type != .typeRegular, type != .typeSymbolicLink
            {
                throw CLIError.failure("\(raw) is not a regular file or folder")
            } else if seen.insert(path).inserted {
                let format = DocumentFormat.forFile(named: path) ?? .text
                discovery.files.append(DiscoveredFile(path: path, format: format))
            }
        }
        return discovery
    }

    private static func walk(
        _ folder: String, root: String, mask: Glob, into discovery: inout Discovery,
        seen: inout Set<String>
    ) throws {
        let manager = FileManager.default
        let names: [String]
        do {
            names = try listing(of: folder)
        } catch {
            discovery.unreadable.append(.init(path: folder, reason: error.reason))
            return
        }
        for name in names where !name.hasPrefix(".") {
            let path = (folder as NSString).appendingPathComponent(name)
            guard let attributes = try? manager.attributesOfItem(atPath: path),
                let type = attributes[.type] as? FileAttributeType
            else {
                // Gone since the listing: nothing to read, nothing to report.
                var info = stat()
                if lstat(path, &info) != 0 && errno == ENOENT { continue }
                discovery.unreadable.append(
                    .init(path: path, reason: Self.statFailure(path) ?? "cannot be examined"))
                continue
            }
            switch type {
            case .typeDirectory:
                try walk(path, root: root, mask: mask, into: &discovery, seen: &seen)
            case .typeRegular, .typeSymbolicLink:
                // A link is followed only to a regular file; one that leads nowhere (or loops)
                // may stand for a folder or a note, so it is reported rather than passed over.
                var isDirectory: ObjCBool = false
                guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
                    discovery.unreadable.append(
                        .init(path: path, reason: Self.brokenLink(path) ?? "cannot be examined"))
                    continue
                }
                guard !isDirectory.boolValue else { continue }
                let relative = String(path.dropFirst(root == "/" ? 1 : root.count + 1))
                guard mask.matches(relative) else { continue }
                if seen.insert(path).inserted {
                    let format = DocumentFormat.forFile(named: name) ?? .text
                    discovery.files.append(DiscoveredFile(path: path, format: format))
                }
            default:
                continue
            }
        }
    }
}

extension FileDiscovery {
    /// Why a folder cannot be listed.
    struct ListingError: Error {
        var reason: String
    }

    /// The names in `folder`, sorted; hidden ones included.
    /// - Throws: ``ListingError`` with the system's reason (`Permission denied`, ...) when the
    ///   folder cannot be opened or read.
    static func listing(of folder: String) throws(ListingError) -> [String] {
        guard let directory = opendir(folder) else {
            throw ListingError(reason: errnoDescription())
        }
        defer { closedir(directory) }
        var names: [String] = []
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw ListingError(reason: errnoDescription()) }
                break
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// For a symbolic link that cannot be followed (its target is missing, or links loop), what
    /// it is: `a link to TARGET: REASON`; nil for anything else.
    static func brokenLink(_ path: String) -> String? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path),
            let reason = statFailure(path)
        else { return nil }
        return "a link to \(target): \(reason)"
    }

    /// The reason `stat` (which follows links) gives for `path`, or nil when it succeeds.
    static func statFailure(_ path: String) -> String? {
        var info = stat()
        return stat(path, &info) == 0 ? nil : errnoDescription()
    }

    private static func errnoDescription() -> String {
        String(cString: strerror(errno))
    }

    /// A folder PATH given on the command line, refused when it cannot be listed.
    /// - Throws: ``CLIError/failure(_:)`` naming the folder and the reason.
    static func checkReadable(folder path: String, as raw: String) throws {
        do {
            _ = try listing(of: path)
        } catch {
            throw CLIError.failure("cannot read the folder \(raw): \(error.reason)")
        }
    }
}

/// One document read from a file, before chunking.
struct SourceDocument: Sendable, Equatable {
    /// The document's own id (.jsonl `id`), nil for whole-file documents.
    var key: String?
    var text: String
    /// The record source: the .jsonl line's `source`, else nil (the file path is used).
    var source: String?
    /// Metadata from the .jsonl line: its `metadata` object, then its other fields.
    var metadata: [(String, JSONValue)]

    init(key: String?, text: String, source: String?, metadata: [(String, JSONValue)]) {
        self.key = key
        self.text = text
        self.source = source
        self.metadata = metadata
    }

    static func == (lhs: SourceDocument, rhs: SourceDocument) -> Bool {
        lhs.key == rhs.key && lhs.text == rhs.text && lhs.source == rhs.source
            && JSONValue.object(lhs.metadata) == JSONValue.object(rhs.metadata)
    }
}

/// Why a file could not be read into documents.
enum DocumentError: Error, Equatable, Sendable {
    /// The file could not be opened or read.
    case unreadable(path: String, reason: String)
    /// The file holds NUL bytes or is not UTF-8.
    case binary(path: String)
    /// A .jsonl line is not a JSON object with a string `text`.
    case malformedLine(path: String, line: Int, reason: String)
    /// The content is readable but cannot be stored (for example metadata over the limit).
    case invalidDocument(path: String, reason: String)

    var message: String {
        switch self {
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .binary(let path): return "\(path) is not a UTF-8 text file"
        case .malformedLine(let path, let line, let reason): return "\(path):\(line): \(reason)"
        case .invalidDocument(let path, let reason): return "\(path): \(reason)"
        }
    }
}

/// Reads files into documents.
///
/// ```swift
/// let bytes = try DocumentReader.bytes(of: "/home/ana/notes/ideas.jsonl")
/// let documents = try DocumentReader.documents(in: bytes, format: .jsonl, path: "ideas.jsonl")
/// ```
enum DocumentReader {
    /// The bytes of a file.
    /// - Throws: ``DocumentError/unreadable(path:reason:)``.
    static func bytes(of path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason =
                FileManager.default.isReadableFile(atPath: path)
                ? "cannot open" : "permission denied"
            throw DocumentError.unreadable(path: path, reason: reason)
        }
        defer { try? handle.close() }
        do {
            return Array(try handle.readToEnd() ?? Data())
        } catch {
            throw DocumentError.unreadable(path: path, reason: error.localizedDescription)
        }
    }

    /// The text of `bytes`, or nil for binary content (a NUL byte, or not valid UTF-8).
    static func text(of bytes: [UInt8]) -> String? {
        if bytes.contains(0) { return nil }
        var content = bytes[...]
        if content.starts(with: [0xEF, 0xBB, 0xBF]) { content = content.dropFirst(3) }  // BOM
        return String(validating: content, as: UTF8.self)
    }

    /// The documents in a file's content.
    /// - Throws: ``DocumentError``.
    static func documents(
        in bytes: [UInt8], format: DocumentFormat, path: String
    ) throws -> [SourceDocument] {
        guard let text = text(of: bytes) else { throw DocumentError.binary(path: path) }
        switch format {
        case .text, .markdown:
            return [SourceDocument(key: nil, text: text, source: nil, metadata: [])]
        case .jsonl:
            return try jsonLines(text, path: path)
        }
    }

    /// Parses .jsonl: one object per non-blank line with `id` (string or number) and `text`;
    /// optional `source` (string) and `metadata` (object); other fields join the metadata.
    static func jsonLines(_ text: String, path: String) throws -> [SourceDocument] {
        var documents: [SourceDocument] = []
        var keys = Set<String>()
        for (offset, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        {
            let number = offset + 1
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            let value: JSONValue
            do {
                value = try JSONValue.parse(String(line))
            } catch {
                throw DocumentError.malformedLine(
                    path: path, line: number, reason: "not valid JSON (\(error.reason))")
            }
            guard let members = value.members else {
                throw DocumentError.malformedLine(
                    path: path, line: number, reason: "expected a JSON object")
            }
            guard let body = value["text"]?.string else {
                throw DocumentError.malformedLine(
                    path: path, line: number, reason: "field \"text\" missing or not a string")
            }
            guard let key = value["id"]?.idString else {
                throw DocumentError.malformedLine(
                    path: path, line: number,
                    reason: "field \"id\" missing or not a string or whole number")
            }
            guard keys.insert(key).inserted else {
                throw DocumentError.malformedLine(
                    path: path, line: number, reason: "duplicate id \"\(key)\"")
            }
            var source: String?
            if let field = value["source"] {
                guard let text = field.string else {
                    throw DocumentError.malformedLine(
                        path: path, line: number, reason: "field \"source\" is not a string")
                }
                source = text
            }
            var metadata: [(String, JSONValue)] = []
            if let field = value["metadata"], field != .null {
                guard let object = field.members else {
                    throw DocumentError.malformedLine(
                        path: path, line: number, reason: "field \"metadata\" is not an object")
                }
                metadata = object
            }
            for (name, field) in members
            where !["id", "text", "source", "metadata"].contains(name)
                && !metadata.contains(where: { $0.0 == name })
            {
                metadata.append((name, field))
            }
            documents.append(
                SourceDocument(key: key, text: body, source: source, metadata: metadata))
        }
        return documents
    }
}
