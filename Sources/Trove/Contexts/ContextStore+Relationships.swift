import Foundation
import TroveSQLite

extension ContextStore {
    /// The model a reference property names, through the identity map (read once).
    func referenced<T: _ReferenceModel>(_ id: T.ID?, as type: T.Type) throws -> T? {
        guard let id else { return nil }
        return try model(T.self, id: id)
    }

    /// The models whose reference property `keyPath` names `parent`: the stored ones (one query
    /// the first time, none once loaded or prefetched) as this context has them now, moved
    /// away or in by unsaved edits, plus inserted ones.
    func children<C: _ReferenceModel, P: _ReferenceModel>(
        _ keyPath: KeyPath<C, P.ID?>, of parent: P
    ) throws -> [C] {
        try children(keyPath as AnyKeyPath, of: parent.id, current: { $0[keyPath: keyPath] })
    }

    func children<C: _ReferenceModel, P: _ReferenceModel>(
        _ keyPath: KeyPath<C, P.ID>, of parent: P
    ) throws -> [C] {
        try children(keyPath as AnyKeyPath, of: parent.id, current: { $0[keyPath: keyPath] })
    }

    private func children<C: _ReferenceModel, ParentID: ModelID>(
        _ keyPath: AnyKeyPath, of parent: ParentID, current: (C) -> ParentID?
    ) throws -> [C] {
        let table = try self.table(C.self)
        let column = try table.schema.field(keyPath).field.name
        let key = RelationshipKey(collection: table.name, column: column)
        if loadedChildren[key]?[parent.documentID] == nil {
            try prefetch(table, column: column, parents: [parent.documentID])
        }
        var seen = Set<DocumentID>()
        var result: [C] = []
        for id in loadedChildren[key]?[parent.documentID] ?? [] {
            guard let entry = table.entries[id], !entry.isDeleted,
                current(table.model(entry)) == parent
            else {
                continue
            }
            seen.insert(id)
            result.append(table.model(entry))
        }
        // Moved in or inserted since: the tracked models whose property names the parent now.
        for (id, entry) in table.entries
        where !seen.contains(id) && !entry.isDeleted && current(table.model(entry)) == parent {
            result.append(table.model(entry))
        }
        return result
    }

    /// Reads the children of every parent in one query (see ``prefetch(_:column:parents:)``).
    func prefetchChildren<C: _ReferenceModel, ParentID: ModelID>(
        _ keyPath: KeyPath<C, ParentID?>, of parents: [ParentID]
    ) throws {
        let table = try self.table(C.self)
        try prefetch(
            table, column: try table.schema.field(keyPath).field.name,
            parents: parents.map(\.documentID))
    }

    func prefetchChildren<C: _ReferenceModel, ParentID: ModelID>(
        _ keyPath: KeyPath<C, ParentID>, of parents: [ParentID]
    ) throws {
        let table = try self.table(C.self)
        try prefetch(
            table, column: try table.schema.field(keyPath).field.name,
            parents: parents.map(\.documentID))
    }

    /// Inserts a model unless this context already tracks it.
    func insertIfNew<M: _ReferenceModel>(_ model: M) throws {
        let table = try self.table(M.self)
        if !table.isTracked(model) { try table.insert(model) }
    }

    /// Reads the children of every parent in one query and remembers them per parent.
    func prefetch<C: _ReferenceModel>(
        _ table: TrackedModels<C>, column: String, parents: [DocumentID]
    ) throws {
        let key = RelationshipKey(collection: table.name, column: column)
        var query = try table.query(FetchDescriptor())
        query.filter = .isIn(Field(column), parents.map(\.value))
        let documents = try read(table.name, query)
        var groups = Dictionary(uniqueKeysWithValues: parents.map { ($0, [DocumentID]()) })
        let kind = table.store.schema.field(column)?.reference?.idKind
        for document in documents {
            _ = try table.instance(for: document)
            if let kind, let value = document[column],
                let parent = DocumentID(value: value, kind: kind)
            {
                groups[parent, default: []].append(document.id)
            }
        }
        for (parent, children) in groups { loadedChildren[key, default: [:]][parent] = children }
    }

    /// Reads the models with these ids into the identity map in one query.
    func prefetch<T: _ReferenceModel>(_ type: T.Type, ids: [T.ID]) throws {
        let table = try self.table(T.self)
        let missing = Array(Set(ids.map(\.documentID)).filter { table.entries[$0] == nil })
        guard !missing.isEmpty else { return }
        var query = try table.query(FetchDescriptor())
        query.filter = .isIn(.id, missing.map(\.value))
        for document in try read(table.name, query) { _ = try table.instance(for: document) }
    }

    /// One fetch on the context's connection (counted in ``reads``).
    func read(_ name: String, _ query: Query) throws -> [Document] {
        reads += 1
        guard let store = try registry.store(name) else {
            throw TroveError.collectionNotFound(name)
        }
        return try store.fetch(query, on: try connection(), wantsCursor: false).documents
    }

    /// After a save that deleted rows: the tracked models of collections that reference them
    /// are read again, so the delete rules SQLite applied (cascade, nullify) show in this
    /// context (gone rows leave the identity map; unchanged models take the new values).
    /// - Returns: the tracked models whose rows went with the deleted ones, by collection.
    func reconcile(afterDeletingFrom deleted: Set<String>) throws -> [String: Set<DocumentID>] {
        guard !deleted.isEmpty else { return [:] }
        var gone: [String: Set<DocumentID>] = [:]
        for table in tablesReferencing(deleted) {
            gone[table.name, default: []].formUnion(try table.reload(using: self))
        }
        loadedChildren.removeAll()
        return gone
    }

    private func tablesReferencing(_ collections: Set<String>) -> [any AnyTrackedModels] {
        allTables.filter { table in
            table.store.schema.referenceFields.contains {
                collections.contains($0.reference!.collection)
            }
        }
    }
}

/// A to-many relationship read in a context: the child collection and its reference column.
struct RelationshipKey: Hashable {
    var collection: String
    var column: String
}

extension TrackedModels {
    /// Reads every saved tracked model's row again: gone rows leave the map, unchanged models
    /// take newer values.
    /// - Returns: the ids whose rows are gone.
    func reload(using store: ContextStore) throws -> [DocumentID] {
        let ids = entries.filter { !$0.value.isInserted }.map(\.key)
        guard !ids.isEmpty else { return [] }
        var query = try self.query(FetchDescriptor())
        query.filter = .isIn(.id, ids.map(\.value))
        let documents = try store.read(name, query)
        let found = Set(documents.map(\.id))
        let gone = ids.filter { !found.contains($0) }
        for id in gone { forget(id) }
        for document in documents { _ = try instance(for: document) }
        return gone
    }
}

extension DocumentID {
    /// The id a stored reference value names.
    init?(value: Value, kind: IDKind) {
        switch (value, kind) {
        case (.int(let v), .int64): self = .int(v)
        case (.string(let s), .string): self = .string(s)
        case (.string(let s), .uuid):
            guard let uuid = UUID(uuidString: s) else { return nil }
            self = .uuid(uuid)
        default: return nil
        }
    }
}
