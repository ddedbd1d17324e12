import Foundation
import TroveSQLite

/// One model type's instances in one context: the identity map (one instance per row) and, for
/// each instance, the encoding it was read or last saved with and the row version it was at.
/// Changes are found by encoding each instance again and comparing (DESIGN.md section 13).
///
/// Not Sendable: it lives in its context's isolation, as the instances do.
final class TrackedModels<M: ReferenceModel>: AnyTrackedModels {
    final class Entry {
        let object: M
        /// The row (`id, <fields in schema order>`) as stored; nil for a model inserted since
        /// the last save.
        var saved: [SQLValue]?
        var version: Int64
        var isDeleted = false
        init(object: M, saved: [SQLValue]?, version: Int64) {
            self.object = object
            self.saved = saved
            self.version = version
        }
    }

    let schema: ModelSchema<M>
    let layout: ReferenceLayout<M>
    let collection: DocumentCollection
    /// The identity map. Memory: one entry, one instance and one saved row per tracked model.
    private(set) var entries: [DocumentID: Entry] = [:]
    /// Inserted ids in insertion order, so a save writes them in the order they were inserted.
    private var insertedOrder: [DocumentID] = []

    /// The columns fetches read (all but the lazy ones), and the lazy ones' slots.
    let fetchedColumns: [String]?
    let lazySlots: Set<Int>

    init(collection: DocumentCollection) throws {
        let schema = try ModelSchema<M>.shared()
        let layout = try ReferenceLayout<M>.shared()
        let lazy = layout.lazy
        let properties = schema.properties
        self.schema = schema
        self.layout = layout
        self.collection = collection
        fetchedColumns = lazy.isEmpty ? nil : properties.filter { !lazy.contains($0.name) }.map(\.column)
        lazySlots = Set(properties.indices.filter { lazy.contains(properties[$0].name) })
    }

    /// A fetch of `descriptor` that leaves the lazy columns out.
    func query(_ descriptor: FetchDescriptor<M>) throws -> Query {
        var query = try descriptor.query(schema)
        query.projection = fetchedColumns
        return query
    }

    var name: String { collection.name }

    // MARK: Tracking

    func insert(_ model: M) throws {
        let id = model.id.documentID
        if let entry = entries[id] {
            guard entry.object === model else { throw TroveError.duplicateDocumentID(id) }
            entry.isDeleted = false
            return
        }
        entries[id] = Entry(object: model, saved: nil, version: 0)
        insertedOrder.append(id)
    }

    func delete(_ model: M) {
        guard let entry = entries[model.id.documentID], entry.object === model else { return }
        entry.isDeleted = true
    }

    /// Stops tracking a row that is gone.
    func forget(_ id: DocumentID) { entries[id] = nil }

    func isTracked(_ model: M) -> Bool { entries[model.id.documentID]?.object === model }

    /// The tracked instance of a fetched document: the one already in the map, or a new one.
    /// An instance with unsaved changes keeps them; one without takes the stored values when
    /// the row has moved on.
    func instance(for fetched: Document) throws -> M {
        var document = fetched
        for slot in lazySlots where document.fields[schema.properties[slot].column] == nil {
            document.fields[schema.properties[slot].column] = .null
        }
        return try adopt(schema.decode(document), id: document.id, version: document.version, row: nil)
    }

    /// The tracked instance of a row decoded elsewhere (`fresh`, with its encoding `row` when
    /// known): the one already in the map, refreshed from `fresh` when it has no unsaved
    /// changes and the row has moved on, or `fresh` itself, now tracked.
    func adopt(_ fresh: M, id: DocumentID, version: Int64, row known: [SQLValue]?) throws -> M {
        if let entry = entries[id] {
            if let saved = entry.saved, !entry.isDeleted, version > entry.version, try row(entry.object) == saved {
                layout.copy(from: fresh, to: entry.object)
                entry.saved = try row(entry.object)
                entry.version = version
            }
            return entry.object
        }
        entries[id] = Entry(object: fresh, saved: try known ?? row(fresh), version: version)
        return fresh
    }

    func row(_ model: M) throws -> [SQLValue] { try schema.row(model, in: collection.store) }

    // MARK: Changes

    var hasChanges: Bool {
        for entry in entries.values {
            guard let saved = entry.saved else { if !entry.isDeleted { return true } else { continue } }
            if entry.isDeleted { return true }
            if (try? row(entry.object)) != saved { return true }
        }
        return false
    }

    func changes() throws -> TableChanges {
        var changes = TableChanges(
            name: name, model: String(describing: M.self), columns: schema.properties.map(\.column), lazySlots: lazySlots)
        for id in insertedOrder {
            guard let entry = entries[id], entry.saved == nil, !entry.isDeleted else { continue }
            changes.inserts.append(try checkedRow(entry, id: id))
        }
        for (id, entry) in entries {
            guard let saved = entry.saved else { continue }
            if entry.isDeleted {
                changes.deletes.append(RowDelete(id: id, version: entry.version, saved: saved))
                continue
            }
            let current = try checkedRow(entry, id: id)
            var slots: [Int] = []
            for i in 1..<current.count where current[i] != saved[i] { slots.append(i - 1) }
            if !slots.isEmpty {
                changes.updates.append(RowUpdate(id: id, version: entry.version, slots: slots, row: current, saved: saved))
            }
        }
        return changes
    }

    private func checkedRow(_ entry: Entry, id: DocumentID) throws -> [SQLValue] {
        let current = try row(entry.object)
        guard current[0] == id.sqlValue else {
            throw TroveError.invalidValue(field: "id", reason: "a tracked \(M.self)'s id changed from \(id); ids cannot change")
        }
        return current
    }

    /// Reads a lazy property of a tracked model once: the stored value is set into the model
    /// and into its snapshot (so it is not a change).
    nonisolated(nonsending) func load<V>(_ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M, database: Database)
        async throws -> V
    {
        if let value = model[keyPath: keyPath].value { return value }
        guard let name = layout.name(of: keyPath), let slot = schema.properties.firstIndex(where: { $0.name == name }) else {
            throw TroveError.unsupportedPredicate(node: "\(keyPath)", reason: "it does not name a stored property of \(M.self)")
        }
        let id = model.id.documentID
        guard let entry = entries[id], entry.object === model, entry.saved != nil else {
            throw TroveError.documentNotFound(id)
        }
        let property = schema.properties[slot]
        let (table, column) = (collection.store.layout.table, property.column)
        let raw = try await database.reading(transaction: false) { connection, _ in
            try connection.scalar("SELECT \"\(column)\" FROM \(table) WHERE \"id\" = ?", [id.sqlValue])
        }
        guard let raw else { throw TroveError.documentNotFound(id) }
        let field = try ValueDecoder.decode(
            LazyField<V>.self, from: ContextValues.value(raw, as: property.definition), inJSON: false, codingPath: [])
        guard let value = field.value else { throw TroveError.missingField(field: column) }
        model[keyPath: keyPath] = field
        if entry.saved != nil { entry.saved![slot + 1] = try row(model)[slot + 1] }
        return value
    }

    /// Takes what a save wrote as the new saved state.
    func didSave(_ changes: TableChanges) {
        for row in changes.inserts {
            guard let id = DocumentID.read(row[0], kind: M.ID.idKind), let entry = entries[id] else { continue }
            entry.saved = row
            entry.version = 1
        }
        for update in changes.updates {
            guard let entry = entries[update.id] else { continue }
            entry.saved = update.row
            entry.version += 1
        }
        for delete in changes.deletes { entries[delete.id] = nil }
        insertedOrder.removeAll()
    }

    /// Puts every tracked model back as it was read or last saved.
    func rollback() throws {
        for (id, entry) in entries {
            guard let saved = entry.saved else {
                entries[id] = nil
                continue
            }
            entry.isDeleted = false
            if try row(entry.object) != saved {
                layout.copy(from: try schema.decode(document(saved)), to: entry.object)
            }
        }
        insertedOrder.removeAll()
    }

    /// A saved row as the document it stores.
    private func document(_ row: [SQLValue]) throws -> Document {
        guard let id = DocumentID.read(row[0], kind: M.ID.idKind) else {
            throw TroveError.invalidValue(field: "id", reason: "\(row[0]) is not a \(M.ID.idKind) id")
        }
        var fields: [String: Value] = [:]
        for (offset, property) in schema.properties.enumerated() {
            fields[property.column] = ContextValues.value(row[offset + 1], as: property.definition)
        }
        return Document(id: id, fields)
    }
}

/// What a context keeps per model type, whatever the type.
protocol AnyTrackedModels: AnyObject {
    var name: String { get }
    var collection: DocumentCollection { get }
    var hasChanges: Bool { get }
    func changes() throws -> TableChanges
    func didSave(_ changes: TableChanges)
    func rollback() throws
    nonisolated(nonsending) func reload(using store: ContextStore) async throws
}

/// Stored values read back as field values (the inverse of `FieldCodec.bind`).
enum ContextValues {
    static func value(_ raw: SQLValue, as field: FieldDefinition) -> Value {
        if raw.isNull { return .null }
        switch (field.type, raw) {
        case (.text, .text(let s)): return .string(s)
        case (.integer, .integer(let v)): return .int(v)
        case (.real, _): return raw.doubleValue.map(Value.double) ?? .null
        case (.bool, .integer(let v)): return .bool(v != 0)
        case (.date, _): return raw.doubleValue.map { .date(Date(timeIntervalSince1970: $0)) } ?? .null
        case (.data, .blob(let bytes)): return .data(Data(bytes))
        case (.json, .text(let s)): return (try? JSONCoding.value(s)) ?? .null
        case (.point, .text(let s)): return (try? JSONCoding.value(s))?.pointValue.map(Value.point) ?? .null
        case (.vector(let dimension, _), .blob(let bytes)):
            return bytes.withUnsafeBytes { VectorBlob.vector($0, dimension: dimension) }.map(Value.vector) ?? .null
        default: return DocumentStore.value(raw)
        }
    }
}
