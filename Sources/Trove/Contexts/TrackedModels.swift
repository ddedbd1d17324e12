import Foundation
import TroveSQLite

/// One model type's instances in one context: the identity map (one instance per row) and, for
/// each instance, the row version it was at and, once it changes, a snapshot of its stored
/// properties as read or last saved. The models' setters list each changed model once
/// (`changedList`), taking its snapshot then; a save compares only those with their
/// snapshots, property by property, bit for bit, and encodes only the properties that differ
/// (``PropertyAccess``; DESIGN.md section 13): a fetch snapshots and encodes nothing, a save
/// visits and encodes only the models that changed.
///
/// Not Sendable: it lives in its context's isolation, as the instances do.
final class TrackedModels<M: _ReferenceModel>: AnyTrackedModels {
    /// Entries are not generic (``TrackedEntry``), so the identity map is a concrete dictionary
    /// whose operations are specialized once, not resolved per call for each model type.
    typealias Entry = TrackedEntry

    let schema: ModelSchema<M>
    let layout: ReferenceLayout<M>
    let store: DocumentStore
    /// The context store that owns this table, which every model tracked here names (its
    /// backing's store), so that its setters list it here. Unowned: the store owns its tables.
    unowned(unsafe) let owner: ContextStore?
    /// The properties in schema order (slot i is `schema.properties[i]`).
    let accesses: [PropertyAccess]
    /// What a snapshot reads: the properties, then the id (so a save finds a changed id by
    /// comparing, without calling each model's getter).
    let snapshotted: [PropertyAccess]
    /// The slot of each property in a snapshot, by name (the id's last).
    let snapshotSlots: [String: Int]
    /// The identity map. Memory: one entry and one instance per tracked model, and one snapshot
    /// per changed one.
    private(set) var entries: [DocumentID: Entry] = [:]
    /// The models changed or deleted since the last save, each once, in the order of their
    /// first change: what a save and a rollback visit (besides the inserted models). A model
    /// is in it exactly when its backing's ``_ModelBacking/changedIn`` names this table. Every
    /// way a stored value changes goes through a setter the macro wrote (the id's `didSet`, the
    /// relationship calls' key path writes) or through ``delete(_:)``.
    ///
    /// Each is kept as its entry (the model is its object) and the id it was tracked under when
    /// listed, so a save does not look it up again; not as an array of `M`, whose operations
    /// are not specialized for the app's model type (each would look generic metadata up).
    private var changedList: [ListedModel] = []
    /// The models listed in `changedList`, in order.
    var changedModels: [M] { changedList.map { model($0.entry) } }
    /// Inserted ids in insertion order, so a save writes them in the order they were inserted.
    private var insertedOrder: [DocumentID] = []
    /// What the save under way wrote, taken as saved once it commits: each entry and whether it
    /// was inserted (its storage is then its saved state: it needs no snapshot).
    private var saving: [SavingEntry] = []

    /// The columns fetches read (all but the lazy ones), and the lazy ones' slots.
    let fetchedColumns: [String]?
    let lazySlots: Set<Int>
    /// Whether rows, snapshots and comparisons go through the code the macro wrote for the
    /// type (`init(_$row:)`, `_$write(to:)`, `_$snapshot(into:)`, `_$differing(from:)`): when
    /// its properties are in the schema's order, as `init(from:)` decodes them. Else through
    /// Codable and the property accesses, with the same results.
    let isTyped: Bool
    /// The property of each row slot.
    let propertyNames: [String]

    init(store: DocumentStore, owner: ContextStore? = nil) throws {
        let schema = try ModelSchema<M>.shared()
        let layout = try ReferenceLayout<M>.shared()
        let lazy = layout.lazy.union(M.declaredOptions.externalNames)
        let properties = schema.properties
        self.schema = schema
        self.layout = layout
        self.store = store
        self.owner = owner
        accesses = try properties.map { property in
            guard let access = layout.accesses[property.name] else {
                throw TroveError.invalidModel(
                    type: String(describing: M.self),
                    reason: "properties does not list \(property.name)")
            }
            return access
        }
        snapshotted = accesses + [layout.idAccess]
        snapshotSlots = Dictionary(
            uniqueKeysWithValues: properties.enumerated().map { ($1.name, $0) }
                + [("id", properties.count)])
        fetchedColumns =
            lazy.isEmpty ? nil : properties.filter { !lazy.contains($0.name) }.map(\.column)
        lazySlots = Set(properties.indices.filter { lazy.contains(properties[$0].name) })
        let names = M._$properties.map(\.name)
        propertyNames = properties.map(\.name)
        isTyped = propertyNames == names && schema.rowColumns.names == ["id"] + names
    }

    /// A fetch of `descriptor` that leaves the lazy columns out.
    func query(_ descriptor: FetchDescriptor<M>) throws -> Query {
        var query = try descriptor.query(schema)
        query.projection = fetchedColumns
        return query
    }

    var name: String { store.name }

    // MARK: Tracking

    /// Starts tracking a new model. A `UUID` or `String` id left to Trove (``ModelID/unassigned``)
    /// gets its time-ordered id now, so the model is tracked under it from the start.
    func insert(_ model: M) throws {
        if model.id.isUnassigned {
            switch M.ID.idKind {
            case .uuid: model.id = M.ID(documentID: .uuid(TimeOrderedIDGenerator.shared.next()))!
            case .string:
                model.id = M.ID(
                    documentID: .string(
                        TimeOrderedIDGenerator.shared.next().uuidString.lowercased()))!
            case .int64:
                throw TroveError.invalidValue(
                    field: "id",
                    reason:
                        "a context inserts \(M.self) under its own id; give it an Int64 id (or use a UUID or String id left to Trove)"
                )
            }
        }
        let id = model.id.documentID
        if let entry = entries[id] {
            guard entry.object === model else { throw TroveError.duplicateDocumentID(id) }
            entry.isDeleted = false
            return
        }
        track(Entry(object: model, isInserted: true, version: 0), id: id)
        insertedOrder.append(id)
    }

    func delete(_ model: M) {
        guard let entry = entries[model.id.documentID], entry.object === model else { return }
        entry.isDeleted = true
        if model._$backing.changedIn == nil { markChanged(model, name: nil, from: ()) }
    }

    /// Lists `model` for the next save (`changedList`), once per model between saves, taking
    /// its snapshot if it has none: its storage then holds the saved values but for property
    /// `name` (nil: none; `"id"`: the id), which held `oldValue`. A model this table does not
    /// track is not listed.
    func markChanged<V>(_ model: M, name: String?, from oldValue: V) {
        let id =
            name == "id"
            ? (oldValue as? M.ID)?.documentID ?? model.id.documentID
            : model.id.documentID
        guard let entry = entries[id], entry.object === model else { return }
        if !entry.isInserted, entry.snapshot == nil {
            var values = snapshot(model)
            if let name, let slot = snapshotSlot(of: name) { values[slot: slot] = oldValue as Any }
            entry.snapshot = values
        }
        model._$backing.changedIn = ObjectIdentifier(self)
        changedList.append(ListedModel(id: id, entry: entry))
    }

    /// The property last looked up in ``snapshotSlots`` and its slot: a loop changes one
    /// property of many models, and the setters name it by the same string, which compares
    /// equal without hashing.
    private var lastSnapshotSlot: (name: String, slot: Int?)?

    /// The slot of property `name` in a snapshot (nil: none).
    private func snapshotSlot(of name: String) -> Int? {
        if let lastSnapshotSlot, lastSnapshotSlot.name == name { return lastSnapshotSlot.slot }
        let slot = snapshotSlots[name]
        lastSnapshotSlot = (name, slot)
        return slot
    }

    /// Empties `changedList` (after a save or a rollback).
    private func clearChanged() {
        for listed in changedList {
            let backing = model(listed.entry)._$backing
            if backing.changedIn == ObjectIdentifier(self) { backing.changedIn = nil }
        }
        changedList = []
    }

    /// The models listed here are listed nowhere else: a table made later (at this address)
    /// must not find them listed.
    deinit { clearChanged() }

    /// The id a listed model is tracked under and its entry: found by its id, or, when its id
    /// changed (which its save refuses), by identity; nil when it is not tracked.
    private func trackedEntry(of model: M) -> (id: DocumentID, entry: Entry)? {
        let id = model.id.documentID
        if let entry = entries[id], entry.object === model { return (id, entry) }
        return entries.first { $0.value.object === model }.map { ($0.key, $0.value) }
    }

    /// Models inserted since the last save and not deleted, in insertion order (what a fetch
    /// with `includePendingChanges` adds to the stored rows).
    func pendingInserts() -> [M] {
        var models: [M] = []
        for id in insertedOrder {
            guard let entry = entries[id], entry.isInserted, !entry.isDeleted else { continue }
            models.append(model(entry))
        }
        return models
    }

    /// Whether a tracked model is saved, not deleted and has no unsaved change.
    func isUnchanged(_ entry: Entry) -> Bool {
        guard !entry.isInserted, !entry.isDeleted else { return false }
        guard let saved = entry.snapshot else { return true }
        return (try? unchanged(model(entry), saved)) ?? false
    }

    /// Stops tracking a row that is gone.
    func forget(_ id: DocumentID) { untrack(id) }

    private func track(_ entry: Entry, id: DocumentID) {
        if let replaced = entries.updateValue(entry, forKey: id), replaced !== entry {
            replaced.isTracked = false
        }
    }

    private func untrack(_ id: DocumentID) {
        entries.removeValue(forKey: id)?.isTracked = false
    }

    /// Every tracked entry (deleted ones included).
    var trackedEntries: Dictionary<DocumentID, Entry>.Values { entries.values }

    /// The model an entry tracks.
    func model(_ entry: Entry) -> M { unsafeDowncast(entry.object, to: M.self) }

    func isTracked(_ model: M) -> Bool { entries[model.id.documentID]?.object === model }

    var modelType: any _ReferenceModel.Type { M.self }

    func models(deleted: Bool) -> [AnyObject] {
        entries.values.filter { $0.isDeleted == deleted }.map(\.object)
    }

    /// The values of `model`'s stored properties, in schema order, then its id.
    func snapshot(_ model: M) -> Snapshot {
        guard isTyped else {
            return Snapshot(
                PropertyAccess.snapshots(snapshotted, of: CollectionOfOne(model as AnyObject))[...]
            )
        }
        var values: [Any] = []
        values.reserveCapacity(snapshotted.count)
        model._$snapshot(into: &values)
        return Snapshot(values[...])
    }

    /// Whether `model`'s id is bit for bit the one in `saved`.
    private func idIsCurrent(_ model: M, _ saved: Snapshot) -> Bool {
        saved.withUnsafeBufferPointer {
            layout.idAccess.isCurrent(model, UnsafeRawPointer($0.baseAddress! + accesses.count))
        }
    }

    /// The slots whose values are not bit for bit the saved ones (candidates for a change),
    /// compared in the model's storage: an unchanged model costs no copy.
    func differing(_ model: M, from saved: Snapshot) -> [Int] {
        saved.withUnsafeBufferPointer {
            isTyped
                ? model._$differing(from: $0.baseAddress!)
                : PropertyAccess.differing(accesses, of: model, from: $0)
        }
    }

    /// The tracked instance of a fetched document: the one already in the map, or a new one.
    /// An instance with unsaved changes keeps them; one without takes the stored values when
    /// the row has moved on.
    func instance(for fetched: Document) throws -> M {
        var document = fetched
        for slot in lazySlots where document[schema.properties[slot].column] == nil {
            document[schema.properties[slot].column] = .null
        }
        let fresh = try schema.decode(document)
        fresh._$backing.unloaded = externalNames
        return try adopt(fresh, id: document.id, version: document.version).model
    }

    /// The `@Attribute(.externalStorage)` properties fetches leave out.
    var externalNames: Set<String> { M.declaredOptions.externalNames }

    /// Reads a left-out property of a tracked model (one query) and takes it into the model's
    /// snapshot, so reading it is not a change. The caller puts it into the model's storage.
    func loadExternal<V>(_ name: String, as type: V.Type, of model: M, on connection: Connection)
        throws -> V?
    {
        let id = model.id.documentID
        guard let slot = schema.properties.firstIndex(where: { $0.name == name }),
            let entry = entries[id],
            entry.object === model
        else { return nil }
        let property = schema.properties[slot]
        let raw = try connection.scalar(
            "SELECT \"\(property.column)\" FROM \(store.layout.table) WHERE \"id\" = ?",
            [id.sqlValue])
        guard let raw, !raw.isNull else { return nil }
        guard let decodable = V.self as? any Decodable.Type else { return nil }
        func decode<D: Decodable>(_: D.Type) throws -> V? {
            try ValueDecoder.decode(
                D.self, from: ContextValues.value(raw, as: property.definition), inJSON: false,
                codingPath: []) as? V
        }
        let value = try _openExistential(decodable, do: decode)
        if entry.snapshot != nil { entry.snapshot![slot: slot] = value as Any }
        return value
    }

    /// The tracked instance of a row decoded elsewhere (`fresh`): the one already in the map,
    /// refreshed from `fresh` when it has no unsaved changes and the row has moved on, or
    /// `fresh` itself, now tracked; and whether it is deleted in this context.
    func adopt(_ fresh: M, id: DocumentID, version: Int64) throws -> (model: M, isDeleted: Bool) {
        if let owner { fresh._$backing.store = owner }
        return try adopt(Entry(object: fresh, version: version), id: id) ?? (fresh, false)
    }

    /// The tracked instances of a fetch's models (``ContextStore/readModels(_:_:)``), in order,
    /// without those deleted in this context. Each entry goes into the map as the fetch made
    /// it, its one reference handed over: the models and entries are not touched again, and the
    /// map is changed as a local value (one exclusivity check per fetch, not one per row).
    func adopt(_ decoded: consuming DecodedRows<M>) throws -> [M] {
        let count = decoded.objects.count
        var models = [M](unsafeUninitializedCapacity: count) { buffer, initialized in
            // Moved out from the last: `popLast` hands over the array's reference, where a copy
            // would retain each model here and release it again when the array goes.
            var i = count
            while let object = decoded.objects.popLast() {
                i -= 1
                (buffer.baseAddress! + i).initialize(to: unsafeDowncast(object, to: M.self))
            }
            initialized = count
        }
        var map = entries
        entries = [:]
        map.reserveCapacity(map.count + decoded.entries.count)
        var tracked: [(Int, Entry)] = []
        for i in decoded.entries.indices {
            let entry = decoded.entries[i]
            if let known = map.updateValue(entry.takeRetainedValue(), forKey: decoded.ids[i]) {
                // Tracked already: the tracked entry goes back, the fetched one is adopted below.
                tracked.append((i, map.updateValue(known, forKey: decoded.ids[i])!))
            }
        }
        entries = map
        var deleted: [Int] = []
        for (i, fetched) in tracked {
            let (model, isDeleted) = try adopt(fetched, id: decoded.ids[i])!
            if isDeleted { deleted.append(i) } else { models[i] = model }
        }
        for i in deleted.reversed() { models.remove(at: i) }
        return models
    }

    /// ``adopt(_:id:version:)`` for an entry made with the fetched model's snapshot: it goes
    /// into the map when the row is not tracked yet (one hash of the id, the common case; nil
    /// then: the model is the fetched one), else the tracked model.
    ///
    /// `fresh` is consumed: a fetch hands over the one reference it made, so the common case
    /// stores it without touching the entry again.
    func adopt(_ fresh: consuming Entry, id: DocumentID) throws -> (model: M, isDeleted: Bool)? {
        guard let entry = entries.updateValue(fresh, forKey: id) else { return nil }
        // Tracked already: the tracked entry goes back, the fetched one comes out.
        let fetched = entries.updateValue(entry, forKey: id)!
        if !entry.isInserted, !entry.isDeleted, fetched.version > entry.version,
            try entry.snapshot.map({ try unchanged(model(entry), $0) }) ?? true
        {
            layout.copy(from: model(fetched), to: model(entry))
            // The copy went through the setters, which listed the model with a snapshot of what
            // it held before: what it holds now is its saved state.
            if entry.snapshot != nil { entry.snapshot = snapshot(model(entry)) }
            entry.version = fetched.version
        }
        return (model(entry), entry.isDeleted)
    }

    // MARK: Changes

    var hasChanges: Bool {
        for id in insertedOrder {
            if let entry = entries[id], entry.isInserted, !entry.isDeleted { return true }
        }
        for model in changedModels {
            guard let (_, entry) = trackedEntry(of: model), !entry.isInserted,
                let saved = entry.snapshot
            else { continue }
            if entry.isDeleted { return true }
            if (try? unchanged(model, saved)) != true { return true }
        }
        return false
    }

    func changes() throws -> TableChanges {
        var changes = TableChanges(
            name: name, model: String(describing: M.self), columns: schema.properties.map(\.column),
            lazySlots: lazySlots, updateRows: UpdateRows(rows: { [self] in try rows(of: $0) }))
        saving = []
        for id in insertedOrder {
            guard let entry = entries[id], entry.isInserted, !entry.isDeleted else { continue }
            changes.inserts.append(try checkedRow(entry, id: id))
            saving.append(SavingEntry(entry: entry, inserted: true))
        }
        for listed in changedList {
            // The entry taken when the model was listed, while the map still holds it (under
            // the id it had then: an entry leaves the map to change its id); else looked up.
            if listed.entry.isTracked {
                try visit(listed.entry, id: listed.id, into: &changes)
            } else if let (id, entry) = trackedEntry(of: model(listed.entry)) {
                try visit(entry, id: id, into: &changes)
            }
        }
        return changes
    }

    /// Adds what a saved entry's model needs written (an update or a delete) to `changes`.
    private func visit(_ entry: Entry, id: DocumentID, into changes: inout TableChanges) throws {
        guard !entry.isInserted, let saved = entry.snapshot else { return }
        if entry.isDeleted {
            var current = try row(model(entry))
            current[0] = id.sqlValue
            let before = try savedRow(
                saved, current: current, differing: differing(model(entry), from: saved))
            changes.deletes.append(RowDelete(id: id, version: entry.version, saved: before))
            return
        }
        let model = model(entry)
        // A changed id is refused (a bit for bit equal one is the tracked id).
        if !idIsCurrent(model, saved) { _ = try checkedRow(entry, id: id) }
        let differing = differing(model, from: saved)
        guard !differing.isEmpty else { return }
        let start = changes.updateValues.count
        var slots = try changed(
            model, differing: differing, saved: saved, into: &changes.updateValues)
        guard !slots.isEmpty else { return }
        // A loop changing one property makes many updates of the same slots: they share one
        // array.
        if let previous = changes.updates.last?.slots, previous == slots { slots = previous }
        changes.updates.append(
            RowUpdate(id: id, version: entry.version, slots: slots, start: start))
        saving.append(SavingEntry(entry: entry, inserted: false))
    }

    private func checkedRow(_ entry: Entry, id: DocumentID) throws -> [SQLValue] {
        let current = try row(model(entry))
        guard current[0] == id.sqlValue else {
            throw TroveError.invalidValue(
                field: "id",
                reason: "a tracked \(M.self)'s id changed from \(id); ids cannot change")
        }
        return current
    }

    /// Reads a lazy property of a tracked model once: the stored value is set into the model
    /// and into its snapshot (so it is not a change).
    func load<V>(
        _ keyPath: ReferenceWritableKeyPath<M, LazyField<V>>, of model: M, on connection: Connection
    ) throws
        -> V
    {
        if let value = model[keyPath: keyPath].value { return value }
        guard let name = layout.name(of: keyPath),
            let slot = schema.properties.firstIndex(where: { $0.name == name })
        else {
            throw TroveError.unsupportedPredicate(
                node: "\(keyPath)", reason: "it does not name a stored property of \(M.self)")
        }
        let id = model.id.documentID
        guard let entry = entries[id], entry.object === model, !entry.isInserted else {
            throw TroveError.documentNotFound(id)
        }
        let property = schema.properties[slot]
        let (table, column) = (store.layout.table, property.column)
        let raw = try connection.scalar(
            "SELECT \"\(column)\" FROM \(table) WHERE \"id\" = ?", [id.sqlValue])
        guard let raw else { throw TroveError.documentNotFound(id) }
        let field = try ValueDecoder.decode(
            LazyField<V>.self, from: ContextValues.value(raw, as: property.definition),
            inJSON: false, codingPath: [])
        guard let value = field.value else { throw TroveError.missingField(field: column) }
        model[keyPath: keyPath] = field
        if entry.snapshot != nil { entry.snapshot![slot: slot] = accesses[slot].read(model) }
        return value
    }

    /// Takes what the save wrote (``changes()``) as the new saved state.
    func didSave(_ changes: TableChanges) {
        var savedInserts = 0
        for written in saving {
            let (entry, inserted) = (written.entry, written.inserted)
            entry.snapshot = nil
            entry.isInserted = false
            entry.version = inserted ? 1 : entry.version + 1
            if inserted { savedInserts += 1 }
        }
        saving = []
        clearChanged()
        for delete in changes.deletes { untrack(delete.id) }
        // Each listed id the save wrote is saved now: when it wrote them all (the common case),
        // none is left to look up in the map.
        if savedInserts == insertedOrder.count {
            insertedOrder.removeAll()
        } else {
            insertedOrder.removeAll { entries[$0]?.isInserted != true }
        }
    }

    /// An inserted model whose row was written over a stored one (a unique upsert): it takes
    /// that row's id and version. An instance that tracked the row before is no longer tracked
    /// (it holds what the row held; the inserted one is the row now), as one row has one instance.
    func rekey(_ rekey: Rekey) {
        guard let entry = entries[rekey.from] else { return }
        let inserted = model(entry)
        if let previous = entries[rekey.to], previous.object !== entry.object {
            untrack(rekey.to)
            if let backed = previous.object as? any _ReferenceModel {
                backed._$backing.store = nil
            }
        }
        untrack(rekey.from)
        inserted.id = M.ID(documentID: rekey.to)!
        track(
            Entry(object: inserted, version: rekey.version), id: rekey.to
        )
    }

    /// Puts every tracked model back as it was read or last saved: the inserted ones leave the
    /// map, the changed and deleted ones (``changedModels``) take their saved values and ids again.
    func rollback() {
        for id in insertedOrder where entries[id]?.isInserted == true { untrack(id) }
        for model in changedModels {
            guard let (id, entry) = trackedEntry(of: model), !entry.isInserted,
                let saved = entry.snapshot
            else { continue }
            entry.isDeleted = false
            if model.id.documentID != id { model.id = M.ID(documentID: id)! }
            for slot in differing(model, from: saved) {
                accesses[slot].write(model, saved[slot: slot])
            }
        }
        clearChanged()
        insertedOrder.removeAll()
    }
}

/// What a context keeps per model type, whatever the type.
protocol AnyTrackedModels: AnyObject {
    var name: String { get }
    var store: DocumentStore { get }
    var hasChanges: Bool { get }
    var modelType: any _ReferenceModel.Type { get }
    /// The tracked instances, deleted (not saved yet) or not.
    func models(deleted: Bool) -> [AnyObject]
    func changes() throws -> TableChanges
    func didSave(_ changes: TableChanges)
    func rekey(_ rekey: Rekey)
    func rollback()
    func reload(using store: ContextStore) throws -> [DocumentID]
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
        case (.date, _):
            return raw.doubleValue.map { .date(Date(timeIntervalSince1970: $0)) } ?? .null
        case (.data, .blob(let bytes)): return .data(Data(bytes))
        case (.json, .text(let s)): return (try? JSONCoding.value(s)) ?? .null
        case (.point, .text(let s)):
            return (try? JSONCoding.value(s))?.pointValue.map(Value.point) ?? .null
        case (.vector(let dimension, _), .blob(let bytes)):
            return bytes.withUnsafeBytes { VectorBlob.vector($0, dimension: dimension) }.map(
                Value.vector) ?? .null
        default: return DocumentStore.value(raw)
        }
    }
}
