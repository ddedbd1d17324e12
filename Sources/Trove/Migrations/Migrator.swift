import Foundation

/// A timeline of named, ordered migrations, recorded in the file (as GRDB's `DatabaseMigrator`):
/// ``migrate(_:upTo:)`` applies those not applied yet, each in one transaction, and records each
/// name with the time it was applied. A failing migration rolls back completely, leaving the file
/// at the previous one; a file whose timeline has migrations this code does not register (written
/// by a newer version of the app) is refused.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.registerMigration("v1", steps: [
///     .createCollection("notes", schema: DocumentSchema(fields: [.text("title"), .text("body")])),
/// ])
/// migrator.registerMigration("v2", steps: [
///     .addField(.integer("priority", default: 0), to: "notes"),
///     .addIndex(IndexDefinition([Field("priority")]), to: "notes"),
/// ])
/// let database = try Database(path: "notes.trove")
/// try await migrator.migrate(database)
/// let notes = try await database.documents(named: "notes")
/// ```
///
/// Migrate before opening the collections it changes: a ``DocumentCollection`` handle opened
/// earlier keeps the old layout (open it again afterwards).
public struct Migrator: Sendable {
    struct Migration: Sendable {
        let name: String
        let steps: [MigrationStep]
    }

    private(set) var migrations: [Migration] = []
    /// Set for a plan's timeline (``init(plan:)``): recorded string versions ("1") are read as
    /// ``Schema/Version`` names ("1.0.0").
    var mapsVersions = false

    public init() {}

    /// The registered names, in order.
    public var migrationNames: [String] { migrations.map(\.name) }

    /// Registers a migration of declarative steps (and custom ones), run in order in one
    /// transaction. Names must be unique; register new migrations after the existing ones.
    public mutating func registerMigration(_ name: String, steps: [MigrationStep]) {
        precondition(
            !migrations.contains { $0.name == name }, "migration \(name) is registered twice")
        migrations.append(Migration(name: name, steps: steps))
    }

    /// Registers a migration that is one custom step: raw SQL and the documents API.
    ///
    /// ```swift
    /// migrator.registerMigration("backfill titles") { context in
    ///     try context.execute("UPDATE notes SET title = 'Untitled' WHERE title = ''")
    /// }
    /// ```
    public mutating func registerMigration(
        _ name: String, _ body: @escaping @Sendable (MigrationContext) throws -> Void
    ) {
        registerMigration(name, steps: [.custom(body)])
    }

    /// Applies, in order, every registered migration the file has not applied (up to and
    /// including `target` when given).
    ///
    /// - Throws: ``MigrationError``, the steps' own errors (``TroveError``, `SQLiteError`, ...);
    ///   the failing migration leaves no trace.
    /// - Complexity: per step, see ``MigrationStep``.
    public func migrate(_ database: Database, upTo target: String? = nil) async throws {
        let names = migrationNames
        var pending = migrations
        if let target {
            guard let end = names.firstIndex(of: target) else {
                throw MigrationError.invalidStep(
                    migration: target, reason: "no migration of that name is registered")
            }
            pending = Array(migrations[...end])
        }
        for migration in pending {
            try await database.apply(migration, registered: names, mapsVersions: mapsVersions)
        }
    }

    /// The migrations the file has applied, in order.
    ///
    /// - Throws: ``MigrationError/fileIsNewer(unknownMigrations:)`` for a file from a newer version.
    public func appliedMigrations(in database: Database) async throws -> [AppliedMigration] {
        var applied = try await database.appliedMigrations()
        if mapsVersions {
            applied = applied.map {
                AppliedMigration(
                    name: MigrationTimeline.versionName($0.name), appliedAt: $0.appliedAt)
            }
        }
        try MigrationTimeline.check(applied: applied.map(\.name), registered: migrationNames)
        return applied
    }

    /// The names of the registered migrations the file has not applied yet.
    public func pendingMigrations(in database: Database) async throws -> [String] {
        let applied = try await appliedMigrations(in: database)
        return Array(migrationNames.dropFirst(applied.count))
    }

    /// A test of a migration on data: opens a fresh store (in memory, or at `path`), migrates it
    /// up to `version`, lets `seed` fill it as that version's code would, migrates the rest of
    /// the way (or up to `target`) and hands it to `validate`.
    ///
    /// ```swift
    /// try await migrator.test(seedingAt: "v1", seed: { db in
    ///     try await db.documents(named: "notes").insert(Document(id: 1, ["title": "a", "body": "b"]))
    /// }, validate: { db in
    ///     #expect(try await db.documents(named: "notes").fetch(id: 1)?["priority"] == 0)
    /// })
    /// ```
    public func test(
        seedingAt version: String, upTo target: String? = nil, path: String? = nil,
        seed: (Database) async throws -> Void, validate: (Database) async throws -> Void
    ) async throws {
        let database = try path.map { try Database(path: $0) } ?? Database()
        try await migrate(database, upTo: version)
        try await seed(database)
        try await migrate(database, upTo: target)
        try await validate(database)
    }
}

extension Database {
    /// Opens (or creates) a file and brings it to the migrator's newest migration before handing
    /// it out, so no handle ever sees an older layout. A file written by a newer version of the
    /// app is refused.
    ///
    /// ```swift
    /// let database = try await Database.open(path: "notes.trove", migrating: migrator)
    /// ```
    /// - Throws: ``MigrationError/fileIsNewer(unknownMigrations:)`` and the errors of
    ///   ``Migrator/migrate(_:upTo:)``; those of ``init(path:readOnly:busyTimeout:clock:)``.
    public static func open(path: String, migrating migrator: Migrator) async throws -> Database {
        let database = try Database(path: path)
        try await migrator.migrate(database)
        return database
    }
}
