import Foundation

/// Relationship properties of `@Model` classes (``Relationship(_:deleteRule:minimumModelCount:maximumModelCount:originalName:inverse:hashModifier:)``):
/// what their getters and setters ask of the context that tracks the model.
extension ContextStore {
    /// The tracked instance with this id, if any (not deleted).
    func tracked<T: _ReferenceModel>(_ type: T.Type, id: DocumentID) -> T? {
        guard let table = try? table(T.self), let entry = table.entries[id], !entry.isDeleted else {
            return nil
        }
        return table.model(entry)
    }

    /// The model a to-one reference names: the tracked instance, or its row read into one.
    func resolve<T: _ReferenceModel>(_ type: T.Type, id: DocumentID) -> T? {
        if let known = tracked(T.self, id: id) { return known }
        do {
            return try readModel(T.self, id: id)
        } catch {
            relationshipError = error
            return nil
        }
    }

    /// The children of `parent` through `inverse` as this context has them now: the stored
    /// ones (one query) and the tracked ones, each whose reference names `parent` in memory.
    func children<C: _ReferenceModel, P: _ReferenceModel>(
        _ type: C.Type, inverse: ReferenceWritableKeyPath<C, P?>, of parent: P
    ) -> [C] {
        do {
            let table = try self.table(C.self)
            guard let name = table.layout.name(of: inverse),
                let property = table.schema.propertiesByName[name]
            else {
                return []
            }
            var found = try readChildren(
                C.self, column: property.column, parent: parent.id.documentID)
            var seen = Set(found.map(ObjectIdentifier.init))
            for entry in table.trackedEntries where !entry.isDeleted {
                let child = table.model(entry)
                if seen.insert(ObjectIdentifier(child)).inserted { found.append(child) }
            }
            return found.filter { child in
                table.entries[child.id.documentID]?.isDeleted != true
                    && child[keyPath: inverse] === parent
            }
        } catch {
            relationshipError = error
            return []
        }
    }

    /// The value of an `@Attribute(.externalStorage)` property a fetch left out (nil when it is
    /// null or the read fails: the error is thrown by the next save).
    func loadExternal<M: _ReferenceModel, V>(
        _ type: M.Type, name: String, as value: V.Type, of model: M
    ) -> V? {
        do {
            return try table(M.self).loadExternal(name, as: V.self, of: model, on: try connection())
        } catch {
            relationshipError = error
            return nil
        }
    }

    /// Starts tracking a model a tracked model now references (SwiftData inserts related
    /// models with the model), and those it references in turn. An error (a type outside the
    /// schema, another instance with its id) is thrown by the next save.
    func insertRelated<T: _ReferenceModel>(_ model: T) {
        // A detached store tracks nothing: there is no context to save it.
        guard model._$backing.store == nil, !isDetached else { return }
        do {
            try insert(model)
        } catch {
            relationshipError = error
        }
    }

    /// What a new model brings with it: the models its relationships hold join the context,
    /// and each to-one relationship set in its initializer (not through its setter) is added to
    /// the other side's to-many relationship.
    func insertGraph<M: _ReferenceModel>(of model: M) throws {
        let layout = try table(M.self).layout
        for relationship in layout.toOne {
            relationship.linkInverse(model)
            if let target = relationship.target(model) as? any _ReferenceModel {
                insertAny(target)
            }
        }
        for relationship in M._$relationships {
            for child in relationship.children(model) {
                if let child = child as? any _ReferenceModel { insertAny(child) }
            }
            // Children set in the initializer name this model (no setter ran to say so).
            if let oneToMany = relationship.oneToMany {
                for child in relationship.children(model) where oneToMany.parent(child) !== model {
                    oneToMany.setParent(child, model)
                }
            }
            // Models set in the initializer hold this one in their known arrays too.
            guard let inverse = relationship.manyToMany?.other() else { continue }
            for other in relationship.children(model) { inverse.add(model, other) }
        }
    }

    /// Before `model` is deleted: the model on the other side of each of its one-to-one
    /// relationships no longer names it (that side's column may be a plain one, which no
    /// foreign key clears).
    func unlinkOneToOne<M: _ReferenceModel>(_ model: M) {
        for property in M._$properties {
            guard let reference = property.valueType as? any _OptionalModelReference.Type else {
                continue
            }
            func unlink<T: _ReferenceModel>(_: T.Type) {
                guard
                    let other = OneToOneAccess.other(of: property.keyPath, in: M.self, to: T.self),
                    let partner = model[keyPath: property.keyPath] as? T,
                    other.get(partner) === model
                else { return }
                other.set(partner, nil)
            }
            _openExistential(reference.referencedType, do: unlink)
        }
    }

    /// ``insertRelated(_:)`` for a model whose type is not known when compiled.
    func insertAny(_ model: any _ReferenceModel) {
        func insert<T: _ReferenceModel>(_ model: T) { insertRelated(model) }
        insert(model)
    }
}
