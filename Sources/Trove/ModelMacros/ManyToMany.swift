import Foundation

/// `[Other]` or `[Other]?`: the value of a to-many relationship property. Lets one generic
/// overload serve both spellings.
public protocol _ToManyValue {
    associatedtype Element: _ReferenceModel
    var _models: [Element] { get }
    init(_models: [Element])
}

extension Array: _ToManyValue where Element: _ReferenceModel {
    public var _models: [Element] { self }
    public init(_models: [Element]) { self = _models }
}

extension Optional: _ToManyValue where Wrapped: _ToManyValue {
    public typealias Element = Wrapped.Element
    public var _models: [Wrapped.Element] { self?._models ?? [] }
    public init(_models: [Wrapped.Element]) { self = .some(Wrapped(_models: _models)) }
}

extension _ModelCoding {
    // MARK: Many-to-many relationships

    /// The other side's models, read through the context's edge table on first access of a
    /// model read from a row. (The side that names its inverse.)
    public static func resolved<V: _ToManyValue, W: _ToManyValue, M: _ReferenceModel>(
        _ value: V, name: String, inverse: ReferenceWritableKeyPath<V.Element, W>, of model: M
    ) -> V? where W.Element == M {
        resolvedLinks(value, name: name, of: model)
    }

    /// The side whose inverse the other side names (`@Relationship var songs: [Song]`, or an
    /// array of models without `@Relationship`): many-to-many, or one-to-many when the other
    /// side's to-one property names it.
    public static func resolved<V: _ToManyValue, M: _ReferenceModel>(
        _ value: V, name: String, of model: M
    ) -> V? {
        resolvedLinks(value, name: name, of: model)
    }

    private static func resolvedLinks<V: _ToManyValue, M: _ReferenceModel>(
        _ value: V, name: String, of model: M
    ) -> V? {
        let backing = model._$backing
        guard backing.isFromRow, !backing.loaded.contains(name), let store = backing.store
        else { return nil }
        backing.loaded.insert(name)
        guard let relationship = M._$relationships.first(where: { $0.name == name }) else {
            return nil
        }
        // An array whose inverse is the children's to-one property (named on their side).
        if let oneToMany = relationship.oneToMany {
            let children = store.reading(for: model) { oneToMany.load(store, model) }
            return V(_models: children.map { unsafeDowncast($0, to: V.Element.self) })
        }
        return V(
            _models: store.reading(for: model) {
                store.linked(V.Element.self, relationship, of: model)
            })
    }

    /// After `model.name` changed: each added model holds `model` in its inverse array (and
    /// joins the context), each removed one no longer does; the change is saved as links.
    public static func didSet<V: _ToManyValue, W: _ToManyValue, M: _ReferenceModel>(
        name: String, from oldValue: V, to newValue: V,
        inverse: ReferenceWritableKeyPath<V.Element, W>, of model: M
    ) where W.Element == M {
        linksSet(name: name, from: oldValue, to: newValue, of: model)
    }

    public static func didSet<V: _ToManyValue, M: _ReferenceModel>(
        name: String, from oldValue: V, to newValue: V, of model: M
    ) {
        linksSet(name: name, from: oldValue, to: newValue, of: model)
    }

    private static func linksSet<V: _ToManyValue, M: _ReferenceModel>(
        name: String, from oldValue: V, to newValue: V, of model: M
    ) {
        model._$backing.changed(model, name: nil, from: ())
        model._$backing.loaded.insert(name)
        let store = model._$backing.store
        let (old, new) = (oldValue._models, newValue._models)
        let relationship = M._$relationships.first { $0.name == name }
        if let oneToMany = relationship?.oneToMany {
            oneToMany.arrayChanged(model, old, new)
            return
        }
        store?.linksChanged(model)
        let kept = Set(new.map(ObjectIdentifier.init))
        let had = Set(old.map(ObjectIdentifier.init))
        let inverse = relationship?.manyToMany?.other()
        for other in new where !had.contains(ObjectIdentifier(other)) {
            store?.insertRelated(other)
            inverse?.add(model, other)
        }
        for other in old where !kept.contains(ObjectIdentifier(other)) {
            inverse?.remove(model, other)
        }
    }
}

/// How a context reads and writes one many-to-many relationship: as links in the file's edge
/// table (`_trove_edges`), from one side to the other under one label, whichever side is
/// changed. The side whose `collection.property` sorts first is the links' origin and names
/// them, so both sides agree on one link per pair.
///
/// `@unchecked Sendable`: every property is a constant; the closures capture only key paths.
struct ManyToManyAccess: @unchecked Sendable {
    let collection: String
    let otherType: any _ReferenceModel.Type
    /// The other side's relationship (nil when neither side names the other as its inverse).
    let other: () -> _RelationshipMetadata?
    /// Whether the model's array is known without a read (read once, set, or a new model).
    let isKnown: (AnyObject) -> Bool
    /// The ids of the models the array holds now (read without loading it).
    let ids: (AnyObject) -> [DocumentID]
    /// Sets the array (through the setter: the other sides follow).
    let set: (AnyObject, [AnyObject]) -> Void
    let name: String

    init<P: _ReferenceModel, V: _ToManyValue>(
        _ toMany: ReferenceWritableKeyPath<P, V>, name: String,
        other: @escaping () -> _RelationshipMetadata?
    ) {
        self.name = name
        self.other = other
        collection = P.collectionName
        otherType = V.Element.self
        isKnown = { _RelationshipMetadata.knows(unsafeDowncast($0, to: P.self), name) }
        ids = { unsafeDowncast($0, to: P.self)[keyPath: toMany]._models.map(\.id.documentID) }
        set = { model, others in
            unsafeDowncast(model, to: P.self)[keyPath: toMany] = V(
                _models: others.map { unsafeDowncast($0, to: V.Element.self) })
        }
    }

    /// The links' label and whether this side is their origin (both, for a relationship that
    /// is its own inverse: `\Person.friends` with `inverse: \Person.friends`).
    var shape: (label: String, isOrigin: Bool, isSymmetric: Bool) {
        let mine = "\(collection).\(name)"
        let theirs = other().map { "\(otherType.collectionName).\($0.name)" } ?? mine
        return (min(mine, theirs), mine <= theirs, mine == theirs)
    }
}
