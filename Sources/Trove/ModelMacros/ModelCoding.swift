import Foundation

/// The row coding and relationship upkeep ``Model()`` writes out: one call per property,
/// resolved when compiled by the property's type. Values are coded as the compiler's
/// synthesized `Codable` codes them (an optional with `decodeIfPresent`, left out when nil), so
/// a model's columns are the same either way; their getter hooks do nothing and are inlined
/// away, their setter hooks tell the model's context it changed. A to-one relationship
/// (`Other?`) is coded as the other model's id, resolved through the model's context on first
/// access; a to-many one (`[Other]` with an inverse) has no column and reads its children on
/// first access. Called only by generated code.
public enum _ModelCoding {
    // MARK: Values

    @inlinable
    public static func decode<Root, V: Decodable, K>(
        _ keyPath: KeyPath<Root, V>, forKey key: K, from container: KeyedDecodingContainer<K>,
        references: inout _PendingReferences
    ) throws -> V {
        try container.decode(V.self, forKey: key)
    }

    @inlinable
    public static func decode<Root, V: Decodable, K>(
        _ keyPath: KeyPath<Root, V?>, forKey key: K, from container: KeyedDecodingContainer<K>,
        references: inout _PendingReferences
    ) throws -> V? {
        try container.decodeIfPresent(V.self, forKey: key)
    }

    @inlinable
    public static func encode<V: Encodable, K>(
        _ value: V, forKey key: K, to container: inout KeyedEncodingContainer<K>,
        backing: _ModelBacking
    ) throws {
        try container.encode(value, forKey: key)
    }

    @inlinable
    public static func encode<V: Encodable, K>(
        _ value: V?, forKey key: K, to container: inout KeyedEncodingContainer<K>,
        backing: _ModelBacking
    ) throws {
        try container.encodeIfPresent(value, forKey: key)
    }

    @inlinable
    public static func describe<Root, V>(
        _ keyPath: KeyPath<Root, V>, in options: inout ModelOptions
    ) {}

    @inlinable
    public static func resolved<V, M>(_ value: V, name: String, of model: M) -> V? { nil }

    /// After `model.name` changed: the context's next save compares the model (only the models
    /// changed since the last save are compared), against a snapshot taken now if it has none
    /// (the other properties are as saved, `name` was `oldValue`).
    @inlinable
    public static func didSet<V, M: _ReferenceModel>(
        name: String, from oldValue: V, to newValue: V, of model: M
    ) {
        let backing = model._$backing
        if backing.changedIn == nil { backing.changed(model, name: name, from: oldValue) }
    }

    /// After `model.id` changed (the id is stored, not computed: this is its `didSet`): the
    /// context's next save compares the model, and refuses the change.
    @inlinable
    public static func idDidSet<ID, M: _ReferenceModel>(from oldValue: ID, of model: M) {
        let backing = model._$backing
        if backing.changedIn == nil { backing.changed(model, name: "id", from: oldValue) }
    }

    // MARK: External storage

    /// A property that stays in every fetch (non-optional): nothing to read.
    @inlinable
    public static func loadedExternal<V, M>(_ value: V, name: String, of model: M) -> V? { nil }

    /// The value a fetch left out, read on first access (one query), or nil when it is here.
    public static func loadedExternal<V, M: _ReferenceModel>(_ value: V?, name: String, of model: M)
        -> V??
    {
        let backing = model._$backing
        guard backing.unloaded.remove(name) != nil, let store = backing.store else {
            return nil
        }
        return .some(
            store.reading(for: model) {
                store.loadExternal(M.self, name: name, as: V.self, of: model)
            })
    }

    // MARK: To-one relationships

    public static func decode<Root, T: _ReferenceModel, K>(
        _ keyPath: KeyPath<Root, T?>, forKey key: K, from container: KeyedDecodingContainer<K>,
        references: inout _PendingReferences
    ) throws -> T? {
        if let id = try container.decodeIfPresent(T.ID.self, forKey: key) {
            references.ids[key.stringValue] = id.documentID
        }
        return nil
    }

    public static func encode<T: _ReferenceModel, K>(
        _ value: T?, forKey key: K, to container: inout KeyedEncodingContainer<K>,
        backing: _ModelBacking
    ) throws {
        if let value {
            try container.encode(value.id, forKey: key)
        } else if let pending = backing.pending.ids[key.stringValue],
            let id = T.ID(documentID: pending)
        {
            try container.encode(id, forKey: key)
        }
    }

    /// The reference's column: a foreign key to `T`'s collection with the delete rule the other
    /// side declares (SwiftData puts it on the to-many side); `.noAction` keeps a plain column.
    public static func describe<Root: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: KeyPath<Root, T?>, in options: inout ModelOptions
    ) {
        // The side of a one-to-one relationship that names the inverse: a plain column (see
        // ``OneToOneAccess``).
        if Root._$toOneRelationships.contains(where: {
            $0.property == keyPath && $0.oneToOne != nil
        }) {
            return
        }
        let rule =
            T._$relationships.first { $0.inverse == keyPath }?.deleteRule
            ?? T._$toOneRelationships.first { $0.inverse == keyPath && $0.oneToOne != nil }?
            .deleteRule
            ?? .nullify
        let stored: DeleteRule? =
            switch rule {
            case .cascade: .cascade
            case .deny: .deny
            case .nullify: .nullify
            case .noAction: nil
            }
        if let stored { options = options.reference(keyPath, T.self, stored) }
    }

    /// The model a row's reference names, resolved through the context on first access.
    public static func resolved<T: _ReferenceModel, M: _ReferenceModel>(
        _ value: T?, name: String, of model: M
    ) -> T?? {
        let backing = model._$backing
        guard value == nil, let id = backing.pending.ids[name], let store = backing.store else {
            return nil
        }
        backing.pending.ids[name] = nil
        return .some(store.reading(for: model) { store.resolve(T.self, id: id) })
    }

    /// After `model.name` changed: the pending reference is gone, the new model joins the
    /// context, and the inverse to-many relationships of both models are kept in step.
    public static func didSet<T: _ReferenceModel, M: _ReferenceModel>(
        name: String, from oldValue: T?, to newValue: T?, of model: M
    ) {
        let backing = model._$backing
        if backing.changedIn == nil {
            backing.changed(model, name: name, from: snapshot(oldValue, name, backing))
        }
        backing.pending.ids[name] = nil
        guard oldValue !== newValue else { return }
        if let newValue { model._$backing.store?.insertRelated(newValue) }
        guard let keyPath = M._$properties.first(where: { $0.name == name })?.keyPath else {
            return
        }
        for relationship in T._$relationships where relationship.inverse == keyPath {
            if let oldValue { relationship.remove(model, oldValue) }
            if let newValue { relationship.add(model, newValue) }
        }
        OneToOneAccess.didSet(keyPath, of: model, from: oldValue, to: newValue)
    }

    // MARK: To-many relationships

    /// The children, read through the context on first access of a model read from a row.
    public static func resolved<C: _ReferenceModel, M: _ReferenceModel>(
        _ value: [C], name: String, inverse: ReferenceWritableKeyPath<C, M?>, of model: M
    ) -> [C]? {
        let backing = model._$backing
        guard backing.isFromRow, !backing.loaded.contains(name), let store = backing.store
        else { return nil }
        backing.loaded.insert(name)
        return store.reading(for: model) { store.children(C.self, inverse: inverse, of: model) }
    }

    public static func resolved<C: _ReferenceModel, M: _ReferenceModel>(
        _ value: [C]?, name: String, inverse: ReferenceWritableKeyPath<C, M?>, of model: M
    ) -> [C]?? {
        resolved(value ?? [], name: name, inverse: inverse, of: model).map { .some($0) }
    }

    /// After `model.name` changed: each added child references `model` (and joins the
    /// context), each removed one references nothing.
    public static func didSet<C: _ReferenceModel, M: _ReferenceModel>(
        name: String, from oldValue: [C], to newValue: [C],
        inverse: ReferenceWritableKeyPath<C, M?>, of model: M
    ) {
        model._$backing.changed(model, name: nil, from: ())
        model._$backing.loaded.insert(name)
        let kept = Set(newValue.map(ObjectIdentifier.init))
        let had = Set(oldValue.map(ObjectIdentifier.init))
        for child in newValue where !had.contains(ObjectIdentifier(child)) {
            if child[keyPath: inverse] !== model { child[keyPath: inverse] = model }
            model._$backing.store?.insertRelated(child)
        }
        for child in oldValue
        where !kept.contains(ObjectIdentifier(child)) && child[keyPath: inverse] === model {
            child[keyPath: inverse] = nil
        }
    }

    public static func didSet<C: _ReferenceModel, M: _ReferenceModel>(
        name: String, from oldValue: [C]?, to newValue: [C]?,
        inverse: ReferenceWritableKeyPath<C, M?>, of model: M
    ) {
        didSet(name: name, from: oldValue ?? [], to: newValue ?? [], inverse: inverse, of: model)
    }

    // MARK: What cannot be stored

    /// A non-optional to-one relationship: a model read before the other side exists has
    /// nothing to hold.
    @available(*, unavailable, message: "a to-one relationship is optional: declare it as 'Other?'")
    public static func decode<Root, T: _ReferenceModel, K>(
        _ keyPath: KeyPath<Root, T>, forKey key: K, from container: KeyedDecodingContainer<K>,
        references: inout _PendingReferences
    ) throws -> T {
        fatalError("unavailable")
    }

    // MARK: To-many relationships without `@Relationship`

    /// An array of models without `@Relationship` (`var tags: [Tag] = []`): a to-many
    /// relationship whose inverse the other side names, as SwiftData infers it. It has no
    /// column, so its row coding reads and writes nothing; an array of values is a column, coded
    /// by the overloads above (the macro cannot tell the two apart, the compiler can).
    public static func decode<Root, T: _ReferenceModel, K>(
        _ keyPath: KeyPath<Root, [T]>, forKey key: K, from container: KeyedDecodingContainer<K>,
        references: inout _PendingReferences
    ) throws -> [T] {
        []
    }

    public static func decode<Root, T: _ReferenceModel, K>(
        _ keyPath: KeyPath<Root, [T]?>, forKey key: K, from container: KeyedDecodingContainer<K>,
        references: inout _PendingReferences
    ) throws -> [T]? {
        []
    }

    public static func encode<T: _ReferenceModel, K>(
        _ value: [T], forKey key: K, to container: inout KeyedEncodingContainer<K>,
        backing: _ModelBacking
    ) throws {}

    public static func encode<T: _ReferenceModel, K>(
        _ value: [T]?, forKey key: K, to container: inout KeyedEncodingContainer<K>,
        backing: _ModelBacking
    ) throws {}

    /// The relationship of an array property without `@Relationship`: none for an array of
    /// values.
    @inlinable
    public static func relationship<Root, V>(_ keyPath: KeyPath<Root, V>, name: String)
        -> _RelationshipMetadata?
    {
        nil
    }

    /// An array of models without `@Relationship`: the side whose inverse the other side names
    /// (its to-one property, or its array), with the default delete rule.
    public static func relationship<P: _ReferenceModel, V: _ToManyValue>(
        _ keyPath: KeyPath<P, V>, name: String
    ) -> _RelationshipMetadata? {
        guard let writable = keyPath as? ReferenceWritableKeyPath<P, V> else { return nil }
        return _RelationshipMetadata(writable, name: name)
    }
}

/// A to-one property declared with `@Relationship`: the inverse it names
/// (`@Relationship(inverse: \Trip.stops) var trip: Trip?`), so that the other side's array,
/// left unnamed there, finds it, and its delete rule. Made by generated code.
///
/// `@unchecked Sendable`: key paths are immutable, and the closure captures only a key path.
public struct _ToOneRelationship: @unchecked Sendable {
    /// The to-one property (`\Stop.trip`) and its name.
    let property: AnyKeyPath
    let name: String
    /// The array it names as its inverse (`\Trip.stops`), if it names one.
    let inverse: AnyKeyPath?
    /// What deleting the model that holds the property does to the model it names (SwiftData's
    /// rule: `.cascade` deletes it too, `.deny` refuses while there is one, `.nullify` and
    /// `.noAction` leave it).
    let deleteRule: RelationshipDeleteRule
    /// The model the property names, read through it (resolved if need be).
    let target: (AnyObject) -> (any _ReferenceModel)?
    /// When the inverse is the other model's to-one property (a one-to-one relationship): both
    /// sides, read and set through their properties; nil otherwise.
    let oneToOne: OneToOneAccess?

    public init<M: _ReferenceModel, T: _ReferenceModel>(
        _ property: ReferenceWritableKeyPath<M, T?>, name: String, inverse: AnyKeyPath? = nil,
        deleteRule: RelationshipDeleteRule = .nullify
    ) {
        (self.property, self.name, self.inverse, self.deleteRule, oneToOne) = (
            property, name, inverse, deleteRule, nil
        )
        target = { model in unsafeDowncast(model, to: M.self)[keyPath: property] }
    }

    /// A one-to-one relationship (`@Relationship(inverse: \LivingAccommodation.trip) var
    /// livingAccommodation: LivingAccommodation?`, with `var trip: Trip?` on the other side):
    /// the compiler picks this initializer when the inverse is a to-one property.
    public init<M: _ReferenceModel, T: _ReferenceModel>(
        _ property: ReferenceWritableKeyPath<M, T?>, name: String,
        inverse: ReferenceWritableKeyPath<T, M?>,
        deleteRule: RelationshipDeleteRule = .nullify
    ) {
        (self.property, self.name, self.inverse, self.deleteRule) = (
            property, name, inverse, deleteRule
        )
        target = { model in unsafeDowncast(model, to: M.self)[keyPath: property] }
        oneToOne = OneToOneAccess(
            get: { unsafeDowncast($0, to: M.self)[keyPath: property] },
            set: { unsafeDowncast($0, to: M.self)[keyPath: property] = $1.map { $0 as! T } },
            getInverse: { unsafeDowncast($0, to: T.self)[keyPath: inverse] },
            setInverse: { unsafeDowncast($0, to: T.self)[keyPath: inverse] = $1.map { $0 as! M } })
    }
}

/// Both sides of a one-to-one relationship, each read and set through its property (so each
/// setter keeps its own side in step). The side that names the inverse stores the other's id
/// in a plain column; the other side's column is the foreign key, with the delete rule the
/// naming side declares (two foreign keys naming each other would be a cycle of collections).
struct OneToOneAccess {
    let get: (AnyObject) -> AnyObject?
    let set: (AnyObject, AnyObject?) -> Void
    let getInverse: (AnyObject) -> AnyObject?
    let setInverse: (AnyObject, AnyObject?) -> Void

    /// The other side of `M`'s to-one property `keyPath` (to a `T`) when it is one side of a
    /// one-to-one relationship: how to read and set, on a `T`, the property naming an `M`.
    static func other<M: _ReferenceModel, T: _ReferenceModel>(
        of keyPath: AnyKeyPath, in _: M.Type, to _: T.Type
    ) -> (get: (AnyObject) -> AnyObject?, set: (AnyObject, AnyObject?) -> Void)? {
        if let access = M._$toOneRelationships.first(where: { $0.property == keyPath })?.oneToOne {
            return (access.getInverse, access.setInverse)
        }
        if let access = T._$toOneRelationships.first(where: { $0.inverse == keyPath })?.oneToOne {
            return (access.get, access.set)
        }
        return nil
    }

    /// Keeps the other side in step after `model`'s property `keyPath` went from `oldValue` to
    /// `newValue`: the old model no longer names `model`, the new one does (and the model it
    /// named before lets go of it, through its own setter).
    static func didSet<M: _ReferenceModel, T: _ReferenceModel>(
        _ keyPath: AnyKeyPath, of model: M, from oldValue: T?, to newValue: T?
    ) {
        guard let other = other(of: keyPath, in: M.self, to: T.self) else { return }
        if let oldValue, other.get(oldValue) === model { other.set(oldValue, nil) }
        if let newValue, other.get(newValue) !== model { other.set(newValue, model) }
    }
}

/// A to-many relationship of a ``Model()`` class, as its macro declares it: the inverse to-one
/// property on the child, the delete rule, and how to keep the parent's array in step when a
/// child's reference changes. Made by generated code.
///
/// `@unchecked Sendable`: every property is a constant; the closures capture only key paths and
/// a string.
public struct _RelationshipMetadata: @unchecked Sendable {
    /// The property (`\AnimalCategory.animals`) and its name.
    let toMany: AnyKeyPath
    let name: String
    /// The other side's property: the child's to-one property (`\Animal.category`), or its
    /// array for a many-to-many relationship (nil on the side that leaves the other to name it).
    let inverse: AnyKeyPath?
    let deleteRule: RelationshipDeleteRule
    /// How a many-to-many relationship is read and written (nil for one-to-many).
    let manyToMany: ManyToManyAccess?
    /// How a one-to-many relationship is read and kept in step without its types (nil for
    /// many-to-many): what an array whose inverse the child names goes through.
    let oneToMany: OneToManyAccess?
    /// Adds the child to the parent's array when the parent's children are known.
    let add: (_ child: AnyObject, _ parent: AnyObject) -> Void
    /// Removes the child from the parent's array when the parent's children are known.
    let remove: (_ child: AnyObject, _ parent: AnyObject) -> Void
    /// The parent's children as it holds them (read through the property: loaded if need be).
    let children: (_ parent: AnyObject) -> [AnyObject]

    public init<P: _ReferenceModel, C: _ReferenceModel>(
        _ toMany: ReferenceWritableKeyPath<P, [C]>, name: String,
        inverse: ReferenceWritableKeyPath<C, P?>,
        deleteRule: RelationshipDeleteRule = .nullify
    ) {
        self.init(oneToMany: toMany, name: name, inverse: inverse, deleteRule: deleteRule)
    }

    public init<P: _ReferenceModel, C: _ReferenceModel>(
        _ toMany: ReferenceWritableKeyPath<P, [C]?>, name: String,
        inverse: ReferenceWritableKeyPath<C, P?>,
        deleteRule: RelationshipDeleteRule = .nullify
    ) {
        self.init(oneToMany: toMany, name: name, inverse: inverse, deleteRule: deleteRule)
    }

    /// A one-to-many relationship: the parent's array (`[C]` or `[C]?`) and the children's
    /// to-one property, whichever side named the other.
    private init<P: _ReferenceModel, V: _ToManyValue>(
        oneToMany toMany: ReferenceWritableKeyPath<P, V>, name: String,
        inverse: ReferenceWritableKeyPath<V.Element, P?>, deleteRule: RelationshipDeleteRule
    ) {
        (self.toMany, self.name, self.inverse, self.deleteRule, manyToMany) = (
            toMany, name, inverse, deleteRule, nil
        )
        oneToMany = OneToManyAccess(toMany, name: name, inverse: inverse)
        children = { parent in unsafeDowncast(parent, to: P.self)[keyPath: toMany]._models }
        add = { child, parent in
            let parent = unsafeDowncast(parent, to: P.self)
            guard Self.knows(parent, name) else { return }
            let children = parent[keyPath: toMany]._models
            guard !children.contains(where: { $0 === child }) else { return }
            parent[keyPath: toMany] = V(
                _models: children + [unsafeDowncast(child, to: V.Element.self)])
        }
        remove = { child, parent in
            let parent = unsafeDowncast(parent, to: P.self)
            guard Self.knows(parent, name) else { return }
            let children = parent[keyPath: toMany]._models
            guard children.contains(where: { $0 === child }) else { return }
            parent[keyPath: toMany] = V(_models: children.filter { $0 !== child })
        }
    }

    /// A many-to-many relationship (an array on both sides), stored as links in the file's
    /// edge table (its join table), one link per pair. One side names the other as its inverse.
    public init<P: _ReferenceModel, V: _ToManyValue, W: _ToManyValue>(
        _ toMany: ReferenceWritableKeyPath<P, V>, name: String,
        inverse: ReferenceWritableKeyPath<V.Element, W>,
        deleteRule: RelationshipDeleteRule = .nullify
    ) where W.Element == P {
        self.init(toMany, name: name, inverse: inverse as AnyKeyPath, deleteRule: deleteRule) {
            V.Element._$relationships.first { $0.toMany == inverse }
        }
    }

    /// The side of a many-to-many relationship whose inverse the other side names
    /// (`@Relationship(deleteRule: .cascade) var songs: [Song]` with
    /// `@Relationship(inverse: \Playlist.songs) var playlists: [Playlist]`): naming it on both
    /// sides would make each side's declaration depend on the other's.
    ///
    /// When the other side's to-one property names this array as its inverse
    /// (`@Relationship(inverse: \Trip.stops) var trip: Trip?`), the relationship is
    /// one-to-many, as SwiftData reads it from either side.
    public init<P: _ReferenceModel, V: _ToManyValue>(
        _ toMany: ReferenceWritableKeyPath<P, V>, name: String,
        deleteRule: RelationshipDeleteRule = .nullify
    ) {
        if let toOne = V.Element._$toOneRelationships.first(where: { $0.inverse == toMany })?
            .property
            as? ReferenceWritableKeyPath<V.Element, P?>
        {
            self.init(oneToMany: toMany, name: name, inverse: toOne, deleteRule: deleteRule)
            return
        }
        self.init(toMany, name: name, inverse: nil, deleteRule: deleteRule) {
            V.Element._$relationships.first { $0.inverse == toMany && $0.manyToMany != nil }
        }
    }

    private init<P: _ReferenceModel, V: _ToManyValue>(
        _ toMany: ReferenceWritableKeyPath<P, V>, name: String, inverse: AnyKeyPath?,
        deleteRule: RelationshipDeleteRule,
        other: @escaping () -> _RelationshipMetadata?
    ) {
        (self.toMany, self.name, self.inverse, self.deleteRule, oneToMany) = (
            toMany, name, inverse, deleteRule, nil
        )
        children = { model in unsafeDowncast(model, to: P.self)[keyPath: toMany]._models }
        add = { other, model in
            let model = unsafeDowncast(model, to: P.self)
            guard Self.knows(model, name),
                !model[keyPath: toMany]._models.contains(where: { $0 === other })
            else {
                return
            }
            model[keyPath: toMany] = V(
                _models: model[keyPath: toMany]._models + [
                    unsafeDowncast(other, to: V.Element.self)
                ])
        }
        remove = { other, model in
            let model = unsafeDowncast(model, to: P.self)
            guard Self.knows(model, name) else { return }
            let models = model[keyPath: toMany]._models
            guard models.contains(where: { $0 === other }) else { return }
            model[keyPath: toMany] = V(_models: models.filter { $0 !== other })
        }
        manyToMany = ManyToManyAccess(toMany, name: name, other: other)
    }

    /// Whether `parent`'s children are known without a read: read once, set, or a new model.
    static func knows(_ parent: some _ReferenceModel, _ name: String) -> Bool {
        !parent._$backing.isFromRow || parent._$backing.loaded.contains(name)
    }
}

/// How a one-to-many relationship is read and kept in step from code that knows neither type:
/// the array's getter and setter when the macro could not tell it is a relationship (an array
/// of models without `@Relationship`), and a new model's insertion.
///
/// `@unchecked Sendable`: every property is a constant; the closures capture only key paths and
/// a string.
struct OneToManyAccess: @unchecked Sendable {
    /// The children of a parent as a context has them now (stored and tracked).
    let load: (_ store: ContextStore, _ parent: AnyObject) -> [AnyObject]
    /// The parent a child's to-one property holds.
    let parent: (_ child: AnyObject) -> AnyObject?
    /// Sets a child's to-one property (through its setter: the parents' arrays follow).
    let setParent: (_ child: AnyObject, _ parent: AnyObject?) -> Void
    /// After the parent's array changed: each added child names the parent (and joins its
    /// context), each removed one that named it names nothing (the typed `didSet` of an array
    /// that names its inverse).
    let arrayChanged: (_ parent: AnyObject, _ old: [AnyObject], _ new: [AnyObject]) -> Void

    init<P: _ReferenceModel, V: _ToManyValue>(
        _ toMany: ReferenceWritableKeyPath<P, V>, name: String,
        inverse: ReferenceWritableKeyPath<V.Element, P?>
    ) {
        load = { store, parent in
            store.children(V.Element.self, inverse: inverse, of: unsafeDowncast(parent, to: P.self))
        }
        parent = { unsafeDowncast($0, to: V.Element.self)[keyPath: inverse] }
        setParent = { child, parent in
            unsafeDowncast(child, to: V.Element.self)[keyPath: inverse] = parent.map {
                unsafeDowncast($0, to: P.self)
            }
        }
        arrayChanged = { parent, old, new in
            _ModelCoding.didSet(
                name: name, from: old.map { unsafeDowncast($0, to: V.Element.self) },
                to: new.map { unsafeDowncast($0, to: V.Element.self) }, inverse: inverse,
                of: unsafeDowncast(parent, to: P.self))
        }
    }
}
