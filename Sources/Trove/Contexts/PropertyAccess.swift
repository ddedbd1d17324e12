import Foundation

/// One stored property of a reference model: read into a snapshot, compared with one, written
/// back and encoded, with the property's type known inside each closure (built once per type,
/// in ``ReferenceLayout``).
///
/// This is how a context finds changes without encoding every model: a snapshot holds the
/// values as read (sharing their storage: a string or a blob is not copied), and a property is
/// unchanged when its value is bit for bit the one taken (then its encoding is the same too).
/// Only properties that fail that test are encoded and compared as stored values; a value
/// assigned again with equal contents is found equal there and not written.
///
/// Reads and comparisons go through the storage reader `@Model` writes for the property
/// (``_ModelProperty``: `{ $0._title }`, compiled with the model): no getter, no Observation
/// access, no key path applied, no boxing to compare. A save visits every model changed since
/// the last one, so this is what it costs per changed model.
///
/// A snapshot or a save calls it for every property of every changed model, from code generic
/// over the model type that is not specialised for it (the app's model is in another module).
/// So it is a class (a struct of five closures would be copied, five retains and releases, on
/// each call) and not generic: its closures take the instance as `AnyObject`, and calling them
/// looks no generic type's metadata up.
///
/// `@unchecked Sendable`: every stored property is a constant, and the closures capture only
/// constants (key paths, storage readers, types), so the accessors are shared by every context of
/// every isolation (a type's layout is made once per process).
final class PropertyAccess: @unchecked Sendable {
    let name: String
    let read: (AnyObject) -> Any
    /// Whether the model's value now is bit for bit the saved one, so it is unchanged (false
    /// for class-typed properties, whose contents can change behind the same reference).
    /// `saved` points at an `Any` that ``read`` took, in a snapshot's storage: read in place,
    /// with no copy and no cast (a save calls this for every property of every tracked model).
    let isCurrent: (AnyObject, UnsafeRawPointer) -> Bool
    /// Sets a value taken by ``read`` back through the property's setter (observers hear of it).
    let write: (AnyObject, Any) -> Void
    /// Encodes a value taken by ``read`` into the property's slot of a row encoder's container.
    let encode: (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void

    /// The access of a property the macro listed, reading its storage.
    convenience init<M: _ReferenceModel>(_ property: _ModelProperty<M>) {
        func make<V>(_: V.Type) -> Closures {
            Self.closures(
                typed: property.keyPath as! KeyPath<M, V>, name: property.name,
                storage: property.storage(as: V.self))
        }
        self.init(name: property.name, _openExistential(property.valueType, do: make))
    }

    /// The access of a property read through its key path (the getter): the tests' oracle
    /// for the storage path.
    convenience init<M: _ReferenceModel>(name: String, keyPath: PartialKeyPath<M>) {
        func make<V>(_: V.Type) -> Closures {
            let typed = keyPath as! KeyPath<M, V>
            return Self.closures(typed: typed, name: name, storage: { $0[keyPath: typed] })
        }
        self.init(name: name, _openExistential(type(of: keyPath).valueType, do: make))
    }

    /// An access made of its closures (a to-one relationship's, ``ToOneAccess``).
    init(
        name: String, read: @escaping (AnyObject) -> Any,
        isCurrent: @escaping (AnyObject, UnsafeRawPointer) -> Bool,
        write: @escaping (AnyObject, Any) -> Void,
        encode: @escaping (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void
    ) {
        self.name = name
        (self.read, self.isCurrent, self.write, self.encode) = (read, isCurrent, write, encode)
    }

    private init(name: String, _ closures: Closures) {
        self.name = name
        (read, isCurrent, write, encode) = closures
    }

    private typealias Closures = (
        read: (AnyObject) -> Any, isCurrent: (AnyObject, UnsafeRawPointer) -> Bool,
        write: (AnyObject, Any) -> Void,
        encode: (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void
    )

    private static func closures<M: _ReferenceModel, V>(
        typed keyPath: KeyPath<M, V>, name: String, storage: @escaping (M) -> V
    ) -> Closures {
        let isCurrent: (AnyObject, UnsafeRawPointer) -> Bool
        let write: (AnyObject, Any) -> Void
        let encode: (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void
        let read: (AnyObject) -> Any = { storage(unsafeDowncast($0, to: M.self)) }
        let comparable = !(V.self is AnyObject.Type)
        // Values of V that an `Any` holds inline (in its first `size` bytes) are compared there,
        // with no cast (a cast to a generic V looks its metadata up on every call). A value the
        // `Any` keeps boxed all the same (a type that is not bitwise takable) is compared by its
        // box: never found equal to a different value, only sent to the slower comparison.
        let size = MemoryLayout<V>.size
        let inline =
            comparable && size <= 3 * MemoryLayout<Int>.size
            && MemoryLayout<V>.alignment <= MemoryLayout<Int>.alignment
        // Types compared by identity: `==` on metatypes looks up `Optional<Any.Type>` per call.
        let typeV = ObjectIdentifier(V.self)
        let isSame: (Any, Any) -> Bool = { a, b in
            guard ObjectIdentifier(type(of: a)) == typeV, ObjectIdentifier(type(of: b)) == typeV
            else { return false }
            if inline {
                return withUnsafeBytes(of: a) { x in
                    withUnsafeBytes(of: b) { y in same(x.baseAddress!, y.baseAddress!, size) }
                }
            }
            guard comparable, let a = a as? V, let b = b as? V else { return false }
            return withUnsafeBytes(of: a) { x in
                withUnsafeBytes(of: b) { y in same(x.baseAddress!, y.baseAddress!, size) }
            }
        }
        // An `Any` is three words that hold a small value inline, then its type's metadata (the
        // existential container's layout, part of Swift's ABI): an inline V is compared where
        // it lies, its type by the metadata word. (V's own metadata: a value of an existential
        // type V is stored under its dynamic type, never taken as unchanged here.)
        let typeMetadata = unsafeBitCast(V.self as Any.Type, to: UnsafeRawPointer.self)
        if inline {
            isCurrent = { model, saved in
                guard
                    saved.load(
                        fromByteOffset: 3 * MemoryLayout<Int>.size, as: UnsafeRawPointer.self)
                        == typeMetadata
                else { return false }
                let value = storage(unsafeDowncast(model, to: M.self))
                return withUnsafeBytes(of: value) { same($0.baseAddress!, saved, size) }
            }
        } else if comparable {
            isCurrent = { model, saved in
                guard let savedValue = saved.load(as: Any.self) as? V else { return false }
                let value = storage(unsafeDowncast(model, to: M.self))
                return withUnsafeBytes(of: value) { x in
                    withUnsafeBytes(of: savedValue) { y in
                        same(x.baseAddress!, y.baseAddress!, size)
                    }
                }
            }
        } else {
            isCurrent = { model, saved in isSame(read(model), saved.load(as: Any.self)) }
        }
        if let writable = keyPath as? ReferenceWritableKeyPath<M, V> {
            write = { model, value in
                if let value = value as? V {
                    unsafeDowncast(model, to: M.self)[keyPath: writable] = value
                }
            }
        } else {
            write = { _, _ in }
        }
        let key = PropertyCodingKey(stringValue: name)
        if let optional = V.self as? any OptionalEncodable.Type {
            encode = optional.encoder(key)
        } else if let encodable = V.self as? any Encodable.Type {
            func open<E: Encodable>(_: E.Type) -> (
                Any, inout KeyedEncodingContainer<PropertyCodingKey>
            ) throws -> Void {
                { value, container in try container.encode(value as! E, forKey: key) }
            }
            encode = open(encodable)
        } else {
            // Models are Codable, so every stored property is; nothing to encode otherwise.
            encode = { _, _ in }
        }
        return (read, isCurrent, write, encode)
    }

    /// The values of each model's properties read by `accesses`, in order (a tracked model's
    /// snapshot), one model after another in one array: a fetch's group of models, or one
    /// model (`CollectionOfOne`, no array for it).
    static func snapshots<Models: Collection<AnyObject>>(
        _ accesses: [PropertyAccess], of models: Models
    ) -> [Any] {
        [Any](unsafeUninitializedCapacity: accesses.count * models.count) { values, count in
            var next = values.baseAddress!
            for model in models {
                for access in accesses {
                    next.initialize(to: access.read(model))
                    next += 1
                }
            }
            count = accesses.count * models.count
        }
    }

    /// The positions in `accesses` whose values in `model` are not bit for bit those of
    /// `saved` (a snapshot): the candidates for a change.
    static func differing(
        _ accesses: [PropertyAccess], of model: AnyObject, from saved: UnsafeBufferPointer<Any>
    )
        -> [Int]
    {
        var slots: [Int] = []
        for i in accesses.indices
        where !accesses[i].isCurrent(model, UnsafeRawPointer(saved.baseAddress! + i)) {
            slots.append(i)
        }
        return slots
    }
}

/// Whether `size` bytes at `a` and `b` are the same (for values holding references: the same
/// storage).
@inline(__always)
private func same(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ size: Int) -> Bool {
    size == 0 || memcmp(a, b, size) == 0
}

/// A property's coding key, by name.
struct PropertyCodingKey: CodingKey {
    let stringValue: String
    init(stringValue: String) { self.stringValue = stringValue }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

/// Optional properties encode as a synthesized `encode(to:)` does: the wrapped value, or null.
private protocol OptionalEncodable {
    static func encoder(_ key: PropertyCodingKey) -> (
        Any, inout KeyedEncodingContainer<PropertyCodingKey>
    ) throws ->
        Void
}

extension Optional: OptionalEncodable where Wrapped: Encodable {
    fileprivate static func encoder(_ key: PropertyCodingKey) -> (
        Any, inout KeyedEncodingContainer<PropertyCodingKey>
    )
        throws -> Void
    {
        { value, container in
            if let wrapped = value as? Wrapped {
                try container.encode(wrapped, forKey: key)
            } else {
                try container.encodeNil(forKey: key)
            }
        }
    }
}
