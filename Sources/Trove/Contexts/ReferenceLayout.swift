import Foundation
import Observation

/// What the contexts need to know about a `@Model` class beyond its ``ModelSchema``: its
/// properties by name (the macro lists them, `_$properties`), how to read,
/// compare and write each one, and its to-one relationships.
///
/// `@unchecked Sendable`: `prefixes` is only touched while holding `lock`; everything else is set
/// once in `init`, and key paths and the accesses' closures are immutable.
final class ReferenceLayout<M: _ReferenceModel>: @unchecked Sendable {
    private let lock = NSLock()
    /// Key path -> property name.
    private let names: [AnyKeyPath: String]
    /// Printed key path of each property (`\M.<computed 0x... (T)>`), to name the first
    /// component of longer key paths (`\M.budget.amount`), which print with it as a prefix.
    private let printed: [(prefix: String, name: String)]
    private var prefixes: [AnyKeyPath: String] = [:]
    /// Property name -> its key path.
    let writable: [String: PartialKeyPath<M>]
    /// Property name -> how to read, compare, write and encode it.
    let accesses: [String: PropertyAccess]
    /// How to read and compare `id` (a save checks every tracked model's id is the one it is
    /// tracked under).
    let idAccess: PropertyAccess
    /// The properties a fetch leaves out (``LazyField``).
    let lazy: Set<String>
    /// The to-one relationships: what each holds, for inserting related models with a model.
    let toOne: [ToOneAccess]

    /// The layout of `M`, derived on first use and cached for the life of the process.
    static func shared() throws -> ReferenceLayout<M> {
        try ReferenceLayoutCache.shared.layout(for: M.self) { try ReferenceLayout<M>() }
    }

    private init() throws {
        // An array of models without `@Relationship` is listed with the columns (the macro
        // cannot tell it from an array of values); it is a relationship, with no column.
        let properties = M._$properties.filter { !($0.valueType is any _ToManyValue.Type) }
        var writable: [String: PartialKeyPath<M>] = [:]
        var names: [AnyKeyPath: String] = [:]
        for property in properties {
            writable[property.name] = property.keyPath
            names[property.keyPath] = property.name
        }
        self.writable = writable
        names[\M.id] = "id"
        names[M._$idKeyPath] = "id"
        self.names = names
        printed = properties.map { (String(describing: $0.keyPath), $0.name) }
        lazy = Set(
            properties.filter { type(of: $0.keyPath).valueType is any LazyFieldValue.Type }.map(
                \.name))
        var accesses: [String: PropertyAccess] = [:]
        var toOne: [ToOneAccess] = []
        for property in properties {
            if let relationship = ToOneAccess(property) {
                toOne.append(relationship)
                accesses[property.name] = relationship.access
            } else {
                accesses[property.name] = PropertyAccess(property)
            }
        }
        self.accesses = accesses
        self.toOne = toOne
        idAccess = PropertyAccess(_ModelProperty("id", \M.id, storage: { $0.id }))
    }

    /// The property `keyPath` names (a key path of `M` whose first component is a property),
    /// or nil when it names none.
    func name(of keyPath: AnyKeyPath) -> String? {
        if let known = names[keyPath] { return known }
        return lock.withLock {
            if let known = prefixes[keyPath] { return known }
            let text = String(describing: keyPath)
            let found = printed.first {
                text.hasPrefix($0.prefix + ".") || text.hasPrefix($0.prefix + "?.")
            }?.name
            if let found { prefixes[keyPath] = found }
            return found
        }
    }

    /// Copies every stored property from `source` into `target` through its setter.
    func copy(from source: M, to target: M) {
        for access in accesses.values { access.write(target, access.read(source)) }
        target._$backing.unloaded = source._$backing.unloaded
    }
}

/// A to-one relationship property (`var category: Category?`): its ``PropertyAccess`` works on
/// the referenced model's id (what the row stores), read from the storage or the pending
/// reference without resolving it; and what it holds, to insert related models with a model.
struct ToOneAccess {
    let name: String
    let access: PropertyAccess
    /// The model the property holds now (nil when none or not resolved yet).
    let target: (AnyObject) -> AnyObject?
    /// Adds the model to the holder's inverse to-many relationship (when one is declared), or
    /// names it in the holder's inverse to-one property (one-to-one).
    let linkInverse: (_ model: AnyObject) -> Void

    init?<M: _ReferenceModel>(_ property: _ModelProperty<M>) {
        guard let reference = property.valueType as? any _OptionalModelReference.Type else {
            return nil
        }
        func make<T: _ReferenceModel>(_: T.Type) -> ToOneAccess {
            ToOneAccess(
                name: property.name, keyPath: property.keyPath as! ReferenceWritableKeyPath<M, T?>,
                storage: property.storage(as: T?.self))
        }
        self = _openExistential(reference.referencedType, do: make)
    }

    private init<M: _ReferenceModel, T: _ReferenceModel>(
        name: String, keyPath: ReferenceWritableKeyPath<M, T?>, storage: @escaping (M) -> T?
    ) {
        self.name = name
        // The object behind the property, read from its storage (no getter: it would resolve).
        let object = storage
        let id: (AnyObject) -> DocumentID? = { model in
            let model = unsafeDowncast(model, to: M.self)
            return object(model)?.id.documentID ?? model._$backing.pending.ids[name]
        }
        target = { object(unsafeDowncast($0, to: M.self)) }
        linkInverse = { model in
            let model = unsafeDowncast(model, to: M.self)
            guard let target = object(model) else { return }
            for relationship in T._$relationships where relationship.inverse == keyPath {
                relationship.add(model, target)
            }
            if let other = OneToOneAccess.other(of: keyPath, in: M.self, to: T.self),
                other.get(target) !== model
            {
                other.set(target, model)
            }
        }
        let key = PropertyCodingKey(stringValue: name)
        access = PropertyAccess(
            name: name,
            read: { id($0) as Any },
            isCurrent: { model, saved in
                id(model) == (saved.load(as: Any.self) as? DocumentID?) ?? nil
            },
            write: { model, value in
                let model = unsafeDowncast(model, to: M.self)
                let stored = (value as? DocumentID?) ?? nil
                guard stored != id(model) else { return }
                if let stored,
                    let tracked = model._$backing.store?.tracked(T.self, id: stored)
                {
                    model[keyPath: keyPath] = tracked
                } else {
                    model[keyPath: keyPath] = nil
                    if let stored { model._$backing.pending.ids[name] = stored }
                }
            },
            encode: { value, container in
                if let stored = (value as? DocumentID?) ?? nil, let typed = T.ID(documentID: stored)
                {
                    try container.encode(typed, forKey: key)
                } else {
                    try container.encodeNil(forKey: key)
                }
            })
    }
}

/// `T?` for a model class `T`: the type of a to-one relationship property.
protocol _OptionalModelReference {
    static var referencedType: any _ReferenceModel.Type { get }
}

extension Optional: _OptionalModelReference where Wrapped: _ReferenceModel {
    static var referencedType: any _ReferenceModel.Type { Wrapped.self }
}

/// The layouts of every reference model type used in the process, by type.
///
/// `@unchecked Sendable`: `storage` is only touched while holding `lock`.
final class ReferenceLayoutCache: @unchecked Sendable {
    static let shared = ReferenceLayoutCache()
    private let lock = NSLock()
    private var storage: [ObjectIdentifier: AnyObject] = [:]

    func layout<M: _ReferenceModel>(for type: M.Type, derive: () throws -> ReferenceLayout<M>)
        throws
        -> ReferenceLayout<M>
    {
        if let known = lock.withLock({ storage[ObjectIdentifier(type)] }) as? ReferenceLayout<M> {
            return known
        }
        let layout = try derive()
        lock.withLock { storage[ObjectIdentifier(type)] = layout }
        return layout
    }
}
