import Foundation
import TroveSQLite

/// The file's record of applied migrations, in a table of its own:
///
/// ```
/// trove_migrations(seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
///                  applied_at REAL NOT NULL,   -- seconds since 1970
///                  steps TEXT NOT NULL)        -- what the migration did, for people
/// ```
enum MigrationTimeline {
    static let table = "trove_migrations"

    static func create(_ connection: Connection) throws {
        try connection.execute(
            script: """
                CREATE TABLE IF NOT EXISTS \(table)(
                    seq INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at REAL NOT NULL, steps TEXT NOT NULL)
                """)
    }

    /// The applied migrations in order (empty when no migrator ever ran on the file).
    static func applied(_ connection: Connection) throws -> [AppliedMigration] {
        guard
            try connection.scalar(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)])
                != nil
        else {
            return []
        }
        return try connection.query("SELECT name, applied_at FROM \(table) ORDER BY seq").map {
            AppliedMigration(
                name: $0.string(at: 0) ?? "",
                appliedAt: Date(timeIntervalSince1970: $0.double(at: 1) ?? 0))
        }
    }

    static func record(_ connection: Connection, name: String, steps: [String], at date: Date)
        throws
    {
        try connection.execute(
            "INSERT INTO \(table)(name, applied_at, steps) VALUES (?, ?, ?)",
            [.text(name), .real(date.timeIntervalSince1970), .text(steps.joined(separator: "; "))])
    }

    /// A recorded name as a plan names its version now: a string identifier of an earlier Trove
    /// ("1", "v2", "1.1") becomes its ``Schema/Version`` description ("1.0.0", "2.0.0",
    /// "1.1.0"); any other name is kept.
    static func versionName(_ recorded: String) -> String {
        Schema.Version(parsing: recorded).map(\.description) ?? recorded
    }

    /// Renames recorded short version names ("1") to the plan's names ("1.0.0") when the plan
    /// registers the long form and not the short one, so files written when version identifiers
    /// were strings keep their history (inside the migration's transaction).
    static func renameVersions(_ connection: Connection, registered: [String]) throws {
        let known = Set(registered)
        for migration in try applied(connection) where !known.contains(migration.name) {
            let mapped = versionName(migration.name)
            guard mapped != migration.name, known.contains(mapped) else { continue }
            try connection.execute(
                "UPDATE \(table) SET name = ? WHERE name = ?",
                [.text(mapped), .text(migration.name)])
        }
    }

    /// Checks that the applied names are the start of the registered ones.
    ///
    /// - Throws: ``MigrationError/fileIsNewer(unknownMigrations:)`` when the file has names the
    ///   code does not register; ``MigrationError/timelineMismatch(applied:registered:)`` when
    ///   they are all known but out of order.
    static func check(applied: [String], registered: [String]) throws {
        let known = Set(registered)
        let unknown = applied.filter { !known.contains($0) }
        guard unknown.isEmpty else { throw MigrationError.fileIsNewer(unknownMigrations: unknown) }
        guard Array(registered.prefix(applied.count)) == applied else {
            throw MigrationError.timelineMismatch(applied: applied, registered: registered)
        }
    }
}

/// One migration recorded in the file.
public struct AppliedMigration: Hashable, Sendable {
    /// The name it was registered with.
    public var name: String
    /// When it was applied.
    public var appliedAt: Date
}
