import Foundation
import Trove
import TroveSQLite

/// `trove backup`: a consistent copy of the database file.
struct BackupCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "backup",
        summary: "copy the database to a new file while it stays in use",
        usage: "backup [options] TARGET",
        discussion: """
            Copies the database with SQLite's online backup API: other programs may keep reading
            and writing meanwhile, and the copy is the database as of one moment. An encrypted
            database gives an encrypted copy that opens with the same passphrase. An existing
            TARGET is refused (exit status 7) unless --overwrite is given.
            """,
        options: [OptionSpec("overwrite", help: "replace TARGET if it exists")] + Commands.database
            + Commands.common,
        positionals: (1, 1),
        examples: [
            ("trove backup ~/backups/notes.sqlite", "a consistent copy, even while indexing"),
            ("trove backup --overwrite nightly.sqlite", "replace last night's copy"),
        ])

    var target: String
    var overwrite: Bool

    init(parsing arguments: ParsedArguments) throws {
        target = arguments.positionals[0]
        overwrite = arguments.flag("overwrite")
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let (database, path) = try VerifyCommand.open(context)
        let target = context.absolutePath(target)
        do {
            try await database.backup(to: target, overwrite: overwrite)
        } catch TroveError.fileExists(let existing) {
            throw CLIError.targetExists(
                "\(existing) already exists (pass --overwrite to replace it)")
        }
        let bytes = (try? FileManager.default.attributesOfItem(atPath: target)[.size] as? Int) ?? 0
        if context.json {
            try context.printJSON(BackupResult(database: path, backup: target, bytes: bytes))
        } else {
            context.console.out.write("backed up \(path) to \(target) (\(bytes) bytes)\n")
        }
        return ExitCode.success
    }
}

/// `trove dump`: every collection as JSON lines.
struct DumpCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "dump",
        summary: "write every collection and record to a portable JSON-lines file",
        usage: "dump [options] FILE",
        discussion: """
            Writes a versioned, line-oriented JSON dump: a header with every collection's schema
            or configuration (and embedding model), then one line per record with its vectors
            bit for bit and its expiry time, then a checksummed trailer. FILE '-' writes to
            standard output. The dump reads one snapshot, so the database stays in use.
            'trove load' reads it back; dumping the loaded database gives the same bytes.
            """,
        options: [OptionSpec("overwrite", help: "replace FILE if it exists")] + Commands.database
            + Commands.common,
        positionals: (1, 1),
        examples: [
            ("trove dump notes.trove-dump", "dump the default database"),
            ("trove dump - | gzip > notes.trove-dump.gz", "to standard output"),
        ])

    /// The dump's path, or `-` for stdout.
    var file: String
    var overwrite: Bool

    init(parsing arguments: ParsedArguments) throws {
        file = arguments.positionals[0]
        overwrite = arguments.flag("overwrite")
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let (database, path) = try VerifyCommand.open(context)
        let report: DumpReport
        if file == "-" {
            // Chunks end at line ends, so each is whole UTF-8.
            let out = context.console.out
            report = try await database.dump { chunk in
                out.write(String(decoding: chunk, as: UTF8.self))
            }
            return ExitCode.success
        }
        let target = context.absolutePath(file)
        do {
            report = try await database.dump(to: target, overwrite: overwrite)
        } catch TroveError.fileExists(let existing) {
            throw CLIError.targetExists(
                "\(existing) already exists (pass --overwrite to replace it)")
        }
        let records = report.records.values.reduce(0, +)
        if context.json {
            try context.printJSON(
                DumpResult(
                    database: path, dump: target, bytes: report.bytes,
                    records: NamedValues(sorted: report.records)))
        } else {
            context.console.out.write(
                "dumped \(records) records of \(report.records.count) collections to \(target) (\(report.bytes) bytes)\n"
            )
        }
        return ExitCode.success
    }
}

/// `trove load`: a dump into a new database.
struct LoadCommand: TroveCommand {
    static let configuration = CommandSpec(
        name: "load",
        summary: "load a dump into an empty or new database",
        usage: "load [options] FILE",
        discussion: """
            Loads a file written by 'trove dump' into the database named by --db, which must be
            new or empty (exit status 7 otherwise). Everything is loaded in one transaction, or
            nothing: a truncated or damaged dump (exit status 8) leaves the database empty.
            The loaded database is verified afterwards (exit status 1 when a problem is found).
            --rename OLD=NEW renames a collection; --rename-field COLLECTION.OLD=NEW renames a
            field of a document collection (COLLECTION is its name in the dump).
            """,
        options: [
            OptionSpec(
                "rename", value: "OLD=NEW", repeatable: true, help: "load collection OLD as NEW"),
            OptionSpec(
                "rename-field", value: "C.OLD=NEW", repeatable: true,
                help: "load field OLD of document collection C as NEW"),
            OptionSpec(
                "encrypt",
                help:
                    "create the database encrypted (passphrase: $TROVE_PASSWORD_FILE, $TROVE_PASSWORD or a prompt)"
            ),
        ] + Commands.database + Commands.common,
        positionals: (1, 1),
        examples: [
            ("trove load --db restored.sqlite notes.trove-dump", "into a new database"),
            (
                "trove load --db new.sqlite --rename notes=archive notes.trove-dump",
                "under another name"
            ),
        ])

    var file: String
    /// `--rename` and `--rename-field`.
    var renames: DumpRenames
    var encrypt: Bool

    init(parsing arguments: ParsedArguments) throws {
        file = arguments.positionals[0]
        renames = try Self.renames(arguments)
        encrypt = arguments.flag("encrypt")
    }

    func run(_ context: CommandContext) async throws -> Int32 {
        let file = context.absolutePath(file)
        guard FileManager.default.fileExists(atPath: file) else {
            throw CLIError.notFound("no dump at \(file)")
        }
        let path = try context.databasePath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let database = try EncryptionPassphrase.openDatabase(
            path: path, context: context, encrypt: encrypt)
        let report: LoadReport
        do {
            report = try await database.load(from: file, renaming: renames)
        } catch TroveError.databaseNotEmpty(let objects) {
            throw CLIError.targetExists(
                "\(path) is not empty (it holds \(objects.prefix(3).joined(separator: ", "))); load into a new --db path"
            )
        } catch TroveError.invalidDump(let line, let reason) {
            throw CLIError.invalidDump("\(file), line \(line): \(reason); nothing was loaded")
        }
        let records = report.records.values.reduce(0, +)
        if context.json {
            try context.printJSON(
                LoadResult(
                    database: path, dump: file, records: NamedValues(sorted: report.records),
                    problems: report.problems))
        } else {
            var text =
                "loaded \(records) records of \(report.records.count) collections into \(path)\n"
            text +=
                report.problems.isEmpty
                ? "verified  \(context.style.green("ok"))\n"
                : report.problems.map { "  - \($0)\n" }.joined()
            context.console.out.write(text)
        }
        return report.problems.isEmpty ? ExitCode.success : ExitCode.failure
    }

    /// `--rename OLD=NEW` and `--rename-field C.OLD=NEW`.
    static func renames(_ arguments: ParsedArguments) throws -> DumpRenames {
        var renames = DumpRenames()
        func split(_ text: String, _ option: String) throws -> (String, String) {
            let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw CLIError.usage("--\(option) takes OLD=NEW, got '\(text)'", command: "load")
            }
            return (parts[0], parts[1])
        }
        for value in arguments.all("rename") {
            let (old, new) = try split(value, "rename")
            renames.collections[old] = new
        }
        for value in arguments.all("rename-field") {
            let (qualified, new) = try split(value, "rename-field")
            let parts = qualified.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw CLIError.usage(
                    "--rename-field takes COLLECTION.OLD=NEW, got '\(value)'", command: "load")
            }
            renames.fields[parts[0], default: [:]][parts[1]] = new
        }
        return renames
    }
}

extension CommandContext {
    /// `path` with `~` expanded, relative to the current folder.
    func absolutePath(_ path: String) -> String {
        Locations.absolute(
            path, environment: console.environment, currentDirectory: console.currentDirectory)
    }
}
