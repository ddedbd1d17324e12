import Foundation
import TroveSQLite

extension Database {
    /// The file's timeline (empty when no migrator ever ran on it).
    func appliedMigrations() throws -> [AppliedMigration] {
        try MigrationTimeline.applied(connection)
    }

    /// Applies one migration unless the file has it: embeds what its re-embedding steps need,
    /// then runs every step in one transaction. If a re-embedded collection was written to in
    /// between, embeds the changed rows and tries again.
    func apply(_ migration: Migrator.Migration, registered: [String], mapsVersions: Bool = false)
        async throws
    {
        let runner = MigrationRunner(
            connection: connection, stores: documentStores, clock: clock, mapsVersions: mapsVersions
        )
        let applied = try runner.appliedNames()
        try MigrationTimeline.check(applied: applied, registered: registered)
        if applied.contains(migration.name) { return }
        var prepared: [Int: ReembeddedVectors] = [:]
        let attempts = 4
        for _ in 0..<attempts {
            do {
                for (offset, step) in migration.steps.enumerated() {
                    guard case .reembed(let plan) = step.kind else { continue }
                    let store = try documentStore(step.collection, requested: nil)
                    prepared[offset] = try await embedForMigration(
                        plan, store: store, previous: prepared[offset])
                }
                try runner.run(migration, registered: registered, prepared: prepared)
                return
            } catch is ConcurrentWrite {
                continue
            } catch let refusal as StepRefusal {
                throw MigrationError.invalidStep(migration: migration.name, reason: refusal.reason)
            }
        }
        let collection =
            migration.steps.first { if case .reembed = $0.kind { true } else { false } }?.collection
            ?? ""
        throw MigrationError.concurrentChanges(collection: collection, attempts: attempts)
    }
}

/// Runs migrations on one read-write connection: the database's writer (``Migrator/migrate(_:upTo:)``)
/// or, synchronously, a connection of a ``ModelContainer`` being opened. Re-embedding steps
/// need their vectors computed first (asynchronously, by the database); the synchronous path
/// refuses them.
struct MigrationRunner {
    let connection: Connection
    let stores: DocumentStoreRegistry
    let clock: any ExpiryClock
    /// Whether the migrations are a plan's versions: a timeline written when version
    /// identifiers were strings ("1") names them as ``Schema/Version`` does now ("1.0.0").
    var mapsVersions = false

    /// The timeline's names, short version names read as the plan's names when mapping.
    func appliedNames() throws -> [String] {
        let names = try MigrationTimeline.applied(connection).map(\.name)
        return mapsVersions ? names.map(MigrationTimeline.versionName) : names
    }

    /// Applies every migration of `migrator` the file lacks, synchronously (no re-embedding).
    func migrate(_ migrator: Migrator) throws {
        let registered = migrator.migrationNames
        for migration in migrator.migrations {
            let applied = try appliedNames()
            try MigrationTimeline.check(applied: applied, registered: registered)
            if applied.contains(migration.name) { continue }
            if migration.steps.contains(where: {
                if case .reembed = $0.kind { true } else { false }
            }) {
                throw MigrationError.invalidStep(
                    migration: migration.name,
                    reason:
                        "re-embedding runs with Migrator.migrate(_:) on the database before the container opens it"
                )
            }
            do {
                try run(migration, registered: registered, prepared: [:])
            } catch let refusal as StepRefusal {
                throw MigrationError.invalidStep(migration: migration.name, reason: refusal.reason)
            }
        }
    }

    /// A collection as it was before the migration: registered, or read from the file.
    func open(_ name: String) throws -> DocumentStore {
        if let store = stores[name] { return store }
        let store = try DocumentStore.open(
            connection: connection, name: name, requested: nil, graph: stores.graph, clock: clock)
        return stores.insertIfAbsent(name, store)
    }

    /// The transaction of one migration. Foreign keys are off during it (a table rebuild drops
    /// the old table, which would otherwise delete or orphan children) and checked before commit.
    func run(
        _ migration: Migrator.Migration, registered: [String], prepared: [Int: ReembeddedVectors]
    ) throws {
        precondition(!connection.isInTransaction, "migrate outside of write { }")
        let foreignKeys = try connection.scalar("PRAGMA foreign_keys")?.int64Value == 1
        if foreignKeys { try connection.execute(script: "PRAGMA foreign_keys = OFF") }
        defer {
            if foreignKeys { try? connection.execute(script: "PRAGMA foreign_keys = ON") }
            // Statements prepared against the old (or rolled-back) layout.
            connection.clearStatementCache()
        }
        let state = MigrationState(opened: { try self.open($0) })
        try connection.transaction(.immediate) {
            try MigrationTimeline.create(connection)
            if mapsVersions {
                try MigrationTimeline.renameVersions(connection, registered: registered)
            }
            // Another connection or process may have migrated the file since it was read.
            let applied = try MigrationTimeline.applied(connection).map(\.name)
            try MigrationTimeline.check(applied: applied, registered: registered)
            if applied.contains(migration.name) { return }
            for (offset, vectors) in prepared {
                let store = try state.store(migration.steps[offset].collection)
                guard try store.layout.changeLog.state(connection).maxSeq == vectors.seq else {
                    throw ConcurrentWrite()
                }
            }
            for (offset, step) in migration.steps.enumerated() {
                try run(step, name: migration.name, vectors: prepared[offset], state: state)
            }
            if foreignKeys {
                let violations = try connection.query("PRAGMA foreign_key_check")
                if let table = violations.first?.string(at: 0) {
                    throw MigrationError.foreignKeyViolation(
                        table: table, rows: violations.count { $0.string(at: 0) == table })
                }
            }
            try MigrationTimeline.record(
                connection, name: migration.name, steps: migration.steps.map(\.summary), at: Date())
        }
        // Committed: the new layouts replace the old ones for every later handle and reader.
        for (name, store) in state.stores { stores[name] = store }
        for name in state.dropped where state.stores[name] == nil { stores[name] = nil }
        stores.catchUpAfterCommit(connection)
    }

    private func run(
        _ step: MigrationStep, name: String, vectors: ReembeddedVectors?, state: MigrationState
    ) throws {
        let migration = CollectionMigration(
            connection: connection, graph: stores.graph, clock: clock)
        switch step.kind {
        case .createCollection(let schema):
            state.stores[step.collection] = try migration.create(step.collection, schema: schema)
            state.dropped.remove(step.collection)
        case .dropCollection:
            let store = try state.store(step.collection)
            try store.layout.drop(on: connection)
            state.stores[step.collection] = nil
            state.dropped.insert(step.collection)
        case .custom(let body):
            try body(
                MigrationContext(
                    migration: name,
                    transaction: Transaction(
                        connection: connection, lookup: state.store, graph: stores.graph)))
        case .reembed(let plan):
            let store = try state.store(step.collection)
            guard let vectors else { preconditionFailure("re-embedding without vectors") }
            state.stores[step.collection] = try migration.apply(
                try store.schema.reembedded(
                    plan, vectors: vectors, collection: step.collection, connection: connection,
                    layout: store.layout),
                to: store)
        case .lightweight(let target, let renamed, let fills):
            let store: DocumentStore
            do {
                store = try state.store(step.collection)
            } catch TroveError.collectionNotFound {
                state.stores[step.collection] = try migration.create(
                    step.collection, schema: target)
                state.dropped.remove(step.collection)
                return
            }
            var current = store
            for kind in try store.schema.lightweightSteps(
                to: target, renamed: renamed, collection: step.collection, fills: fills)
            {
                current = try migration.apply(
                    try current.schema.edited(by: kind, collection: step.collection), to: current)
            }
            // Fields added at the end of the table: store the target's order, so the schema reads
            // exactly as the one the code declares.
            let final = current.schema.adopting(target)
            if final != current.schema {
                current = try migration.apply(SchemaEdit(schema: final, table: .none), to: current)
            }
            state.stores[step.collection] = current
        default:
            let store = try state.store(step.collection)
            state.stores[step.collection] = try migration.apply(
                try store.schema.edited(by: step.kind, collection: step.collection), to: store)
        }
    }
}

/// The collections as a migration's steps have left them so far (committed to the database's
/// registry only when the migration commits).
final class MigrationState {
    var stores: [String: DocumentStore] = [:]
    var dropped: Set<String> = []
    /// The collections as they were before the migration.
    let opened: (String) throws -> DocumentStore

    init(opened: @escaping (String) throws -> DocumentStore) { self.opened = opened }

    func store(_ name: String) throws -> DocumentStore {
        if let store = stores[name] { return store }
        if dropped.contains(name) { throw TroveError.collectionNotFound(name) }
        return try opened(name)
    }
}

/// The collection being re-embedded was written to after its texts were read.
struct ConcurrentWrite: Error {}

extension DocumentSchema {
    /// The edit of a re-embedding step: the vector field takes the new model's dimension and
    /// source; the rows' texts must still be those that were embedded.
    func reembedded(
        _ plan: ReembeddingPlan, vectors: ReembeddedVectors, collection: String,
        connection: Connection,
        layout: DocumentLayout
    ) throws -> SchemaEdit {
        guard let old = field(plan.vectorField), case .vector(_, let metric) = old.type else {
            throw StepRefusal(reason: "\(collection).\(plan.vectorField) is not a vector field")
        }
        guard field(plan.textField)?.type == .text else {
            throw StepRefusal(
                reason: "\(collection).\(plan.textField) is not a text field at this step")
        }
        var current = 0
        try connection.prepare(
            "SELECT \(layout.rid), \"\(plan.textField)\" FROM \(layout.table) WHERE \"\(plan.textField)\" IS NOT NULL"
        )
        .forEachRow { row in
            current += 1
            guard vectors.texts[row.int64(at: 0)] == row.string(at: 1) else {
                throw StepRefusal(
                    reason:
                        "an earlier step of this migration changed \(collection).\(plan.textField); re-embed in a migration of its own"
                )
            }
        }
        guard current == vectors.texts.count else {
            throw StepRefusal(
                reason:
                    "an earlier step of this migration changed which rows of \(collection) have a \(plan.textField); re-embed in a migration of its own"
            )
        }
        var next = self
        var field = old
        field.type = .vector(dimension: plan.embedder.dimension, metric: metric)
        next.fields = fields.map { $0.name == old.name ? field : $0 }
        next.embeddingSources[old.name] = EmbeddingSource(
            textField: plan.textField, manifest: plan.embedder.manifest)
        try next.validate()
        var sources = copyingAll(next, except: old.name, with: .vectors(vectors))
        sources[old.name] = .vectors(vectors)
        return SchemaEdit(schema: next, table: .rebuild(sources))
    }
}
