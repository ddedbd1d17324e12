import Foundation
import TroveSQLite

/// Many-to-many relationships of `@Model` classes: each pair is one link in the file's edge
/// table (its join table, which deletes a record's links with it and syncs like any
/// collection). A context reads a model's links on first access of the property, and a save
/// writes the difference between each changed array and the links it was read with.
extension ContextStore {
    /// The models `model`'s relationship holds as this context has them now: the stored links
    /// (one query for the ids, one for the models not tracked yet), changed by what tracked
    /// models on the other side hold in memory and have not saved.
    func linked<C: _ReferenceModel, P: _ReferenceModel>(
        _ type: C.Type, _ relationship: _RelationshipMetadata, of model: P
    ) -> [C] {
        guard let access = relationship.manyToMany else { return [] }
        do {
            let stored = try storedLinks(access, of: model.id.documentID)
            model._$backing.linked[relationship.name] = Set(stored)
            let table = try self.table(C.self)
            try prefetch(C.self, ids: stored.compactMap { C.ID(documentID: $0) })
            var found = stored.compactMap { id in
                table.entries[id].flatMap { $0.isDeleted ? nil : table.model($0) }
            }
            // Tracked models of the other side whose arrays are known say what is unsaved.
            if let other = access.other()?.manyToMany {
                for entry in table.trackedEntries
                where !entry.isDeleted && other.isKnown(entry.object) {
                    let holds = other.ids(entry.object).contains(model.id.documentID)
                    let listed = found.contains { $0 === entry.object }
                    if holds && !listed { found.append(table.model(entry)) }
                    if !holds && listed { found.removeAll { $0 === entry.object } }
                }
            }
            return own(found)
        } catch {
            relationshipError = error
            return []
        }
    }

    /// The ids the edge table links `id` to through this relationship.
    private func storedLinks(_ access: ManyToManyAccess, of id: DocumentID) throws -> [DocumentID] {
        let connection = try self.connection()
        guard try EdgeTable.exists(connection) else { return [] }
        let (label, isOrigin, isSymmetric) = access.shape
        let kind = idKind(of: access.otherType)
        let other = access.otherType.collectionName
        var ids: [DocumentID] = []
        reads += 1
        if isOrigin || isSymmetric {
            ids += try connection.query(
                "SELECT to_id FROM \(EdgeTable.table) WHERE from_collection = ? AND from_id = ? AND label = ? AND to_collection = ? ORDER BY id",
                [.text(access.collection), id.sqlValue, .text(label), .text(other)]
            ).compactMap { DocumentID.read($0[0], kind: kind) }
        }
        if !isOrigin || isSymmetric {
            ids += try connection.query(
                "SELECT from_id FROM \(EdgeTable.table) WHERE to_collection = ? AND to_id = ? AND label = ? AND from_collection = ? ORDER BY id",
                [.text(access.collection), id.sqlValue, .text(label), .text(other)]
            ).compactMap { DocumentID.read($0[0], kind: kind) }
        }
        var seen = Set<DocumentID>()
        return ids.filter { seen.insert($0).inserted }
    }

    /// Called by the setter of a many-to-many property: the model has links to save.
    func linksChanged(_ model: some _ReferenceModel) {
        // A detached store saves nothing (and holding the model would hold the store back).
        guard !isDetached else { return }
        linkEdits[ObjectIdentifier(model)] = model
    }

    /// What the next save writes to the edge table: each changed array against the links it
    /// was read with (a model deleted in this save loses its links with its row).
    func linkChanges() -> LinkChanges {
        var changes = LinkChanges()
        for model in linkEdits.values {
            guard model._$backing.store === self, let graph = trackedHere(model) else {
                continue
            }
            changes.graph = changes.graph ?? graph
            for relationship in type(of: model)._$relationships {
                guard let access = relationship.manyToMany, access.isKnown(model) else { continue }
                let id = model.id.documentID
                let now = access.ids(model)
                let before = model._$backing.linked[relationship.name] ?? []
                let (label, isOrigin, _) = access.shape
                let other = access.otherType.collectionName
                func link(_ to: DocumentID) -> Link {
                    let (a, b) = (GraphNode(access.collection, id), GraphNode(other, to))
                    return isOrigin
                        ? Link(from: a, label: label, to: b) : Link(from: b, label: label, to: a)
                }
                changes.added += now.filter { !before.contains($0) }.map(link)
                changes.removed += before.filter { !now.contains($0) }.map(link)
            }
        }
        return changes
    }

    /// The link graph of the file, when this context tracks `model`.
    private func trackedHere<M: _ReferenceModel>(_ model: M) -> GraphStore? {
        guard let table = try? table(M.self), table.isTracked(model) else { return nil }
        return table.store.graph
    }

    /// After a save: the arrays as saved are what the links hold now.
    func didSaveLinks() {
        for model in linkEdits.values {
            for relationship in type(of: model)._$relationships {
                guard let access = relationship.manyToMany, access.isKnown(model) else { continue }
                model._$backing.linked[relationship.name] = Set(access.ids(model))
            }
        }
        linkEdits = [:]
    }

    /// Puts each changed array back as it was read (through the setters, so the other sides
    /// follow). Models inserted since the last save are gone from the context already.
    func rollbackLinks() {
        let edited = Array(linkEdits.values)
        for model in edited where model._$backing.isFromRow {
            for relationship in type(of: model)._$relationships {
                guard let access = relationship.manyToMany, access.isKnown(model),
                    let before = model._$backing.linked[relationship.name]
                else { continue }
                let models = before.compactMap { trackedObject(access.otherType, id: $0) }
                access.set(model, models)
            }
        }
        linkEdits = [:]
    }

    private func idKind<T: _ReferenceModel>(of _: T.Type) -> IDKind { T.ID.idKind }

    private func trackedObject(_ type: any _ReferenceModel.Type, id: DocumentID) -> AnyObject? {
        func open<T: _ReferenceModel>(_: T.Type) -> AnyObject? { resolve(T.self, id: id) }
        return open(type)
    }

    /// Delete rules of many-to-many relationships, checked before a save writes: `.deny`
    /// refuses to delete a model that still holds others; `.cascade` was applied by
    /// ``deleteLinked(_:)`` when the model was deleted.
    func checkLinkDeleteRules() throws {
        for table in allTables {
            let relationships = table.modelType._$relationships.filter {
                $0.manyToMany != nil && $0.deleteRule == .deny
            }
            guard !relationships.isEmpty else { continue }
            for model in table.models(deleted: true) {
                for relationship in relationships where !relationship.children(model).isEmpty {
                    throw TroveError.deleteDenied(
                        collection: table.name, id: (model as! any _ReferenceModel).id.documentID,
                        referencedBy: "\(table.name).\(relationship.name)")
                }
            }
        }
    }

    /// `.cascade` on a many-to-many relationship: deleting a model deletes the models it holds.
    func deleteLinked<M: _ReferenceModel>(_ model: M) throws {
        for relationship in M._$relationships
        where relationship.manyToMany != nil && relationship.deleteRule == .cascade {
            for case let other as any _ReferenceModel in relationship.children(model) {
                func delete<T: _ReferenceModel>(_ other: T) throws { try self.delete(other) }
                try delete(other)
            }
        }
    }

    /// After a save that deleted models: the arrays of tracked models that held them leave
    /// them out (the edge table dropped their links with their rows).
    func forgetLinks(to deleted: [String: Set<DocumentID>]) {
        guard !deleted.isEmpty else { return }
        for table in allTables {
            for relationship in table.modelType._$relationships {
                guard let access = relationship.manyToMany,
                    let gone = deleted[access.otherType.collectionName]
                else {
                    continue
                }
                for model in table.models(deleted: false) where access.isKnown(model) {
                    let ids = access.ids(model)
                    guard ids.contains(where: gone.contains) else { continue }
                    let kept = relationship.children(model).filter {
                        !gone.contains(($0 as! any _ReferenceModel).id.documentID)
                    }
                    access.set(model, kept)
                    let backing = (model as! any _ReferenceModel)._$backing
                    backing.linked[relationship.name] = backing.linked[relationship.name]?
                        .subtracting(gone)
                }
            }
        }
        linkEdits = [:]
    }
}

/// The edge-table writes of one save.
struct LinkChanges {
    var graph: GraphStore?
    var added: [Link] = []
    var removed: [Link] = []

    var isEmpty: Bool { added.isEmpty && removed.isEmpty }

    func write(on connection: Connection) throws {
        guard let graph, !isEmpty else { return }
        for link in removed {
            _ = try graph.unlink(from: link.from, to: link.to, label: link.label, on: connection)
        }
        if !added.isEmpty { try graph.link(added, on: connection) }
    }
}
