import Foundation

/// A named set of folders (and single files) indexed together, with a glob mask choosing the
/// files under its folders and a context string returned with its search results.
///
/// `trove collection add ~/notes --name notes --mask '**/*.md' --context "Personal notes"`
/// creates one; `trove index PATH...` adds its paths to the implicit collection
/// ``implicitName`` (or the one named with `-c`). Every record carries its collection's name in
/// its metadata (`collection`), so a search is restricted to collections by a filter, and
/// removing a collection removes exactly its records.
///
/// ```swift
/// let notes = NoteCollection(name: "notes", paths: ["/home/ana/notes"],
///                            mask: try Glob("**/*.md"), context: "Personal notes")
/// notes.covers("/home/ana/notes/2026/march.md")   // true
/// ```
struct NoteCollection: Sendable, Equatable {
    /// The collection `trove index PATH...` adds its paths to when no `-c NAME` is given.
    static let implicitName = "default"

    var name: String
    /// Absolute folders and files; files are taken whatever the mask says.
    var paths: [String]
    var mask: Glob
    /// Said with every result of this collection (to people and assistants); nil when unset.
    var context: String?

    /// Whether `name` may name a collection: 1 to 64 letters, digits, `-`, `_` or `.`, not
    /// starting with `-` or `.`.
    static func isValidName(_ name: String) -> Bool {
        guard (1...64).contains(name.count), let first = name.first, first != "-", first != "."
        else {
            return false
        }
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }
    }

    /// Checks a name given on the command line.
    /// - Throws: ``CLIError/usage(_:command:)``.
    static func validate(name: String, command: String) throws {
        guard isValidName(name) else {
            throw CLIError.usage(
                "'\(name)' is not a collection name (letters, digits, '-', '_' and '.', "
                    + "at most 64, not starting with '-' or '.')", command: command)
        }
    }

    /// Whether `path` (absolute) belongs to this collection: one of its files, or a file under
    /// one of its folders, outside hidden folders, whose path relative to that folder matches
    /// the mask.
    func covers(_ path: String) -> Bool {
        paths.contains { root in
            if path == root { return true }
            guard path.hasPrefix(root == "/" ? "/" : root + "/") else { return false }
            let relative = String(path.dropFirst(root == "/" ? 1 : root.count + 1))
            if relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                return false
            }
            return mask.matches(relative)
        }
    }

    /// What names `path` (absolute) inside this collection the same way on every machine: the
    /// last component of the outermost of its paths that holds it, then the path below that
    /// one (`notes/2026/march.md` for `/home/ana/notes/2026/march.md` in a collection of
    /// `/home/ana/notes`, and for `/Users/ana/Documents/notes/2026/march.md` on another
    /// machine); a file that is itself one of the paths is named by its file name. Two of the
    /// collection's paths with the same last component would name different files alike, so
    /// those are named by their absolute paths instead (their files then get the same record
    /// ids only on machines where they lie at the same place), as is a path the collection does
    /// not hold.
    ///
    /// Record ids are derived from it (``NoteRecordID``), so that two machines indexing the
    /// same notes write the same records and sync merges them.
    func key(of path: String) -> String {
        let roots = paths.filter { $0 == path || path.hasPrefix($0 == "/" ? "/" : $0 + "/") }
        guard let root = roots.min(by: { $0.count < $1.count }) else { return path }
        let name = (root as NSString).lastPathComponent
        let shared = paths.contains { $0 != root && ($0 as NSString).lastPathComponent == name }
        let prefix = shared || root == "/" ? root : name
        if path == root { return prefix }
        return (prefix.hasSuffix("/") ? prefix : prefix + "/")
            + path.dropFirst(root == "/" ? 1 : root.count + 1)
    }

    /// Whether `path` is one of the paths or inside one of the folders (mask aside).
    func contains(path: String) -> Bool {
        paths.contains { $0 == path || path.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }
}
