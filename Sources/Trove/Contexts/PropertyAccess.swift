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
/// Where the model's storage for the property is known (``ReferenceLayout/fieldOffsets``: the
/// `_name` field `@Observable` keeps, or a plain stored `name`), reads and comparisons go
/// straight to the instance's memory: no getter, no Observation access, no boxing to compare.
/// A save visits every tracked model, so this is what it costs per model. Other models are
/// read through their key paths.
struct PropertyAccess<M: ReferenceModel> {
    let name: String
    /// Whether reads and comparisons go to the instance's storage (else through the key path).
    let readsStorage: Bool
    let read: (M) -> Any
    /// Whether the model's value now is bit for bit `saved` (a value ``read`` took), so it is
    /// unchanged (false for class-typed properties, whose contents can change behind the same
    /// reference).
    let isCurrent: (M, Any) -> Bool
    /// Whether two values taken by ``read`` are bit for bit the same.
    let isSame: (Any, Any) -> Bool
    /// Sets a value taken by ``read`` back through the property's setter (observers hear of it).
    let write: (M, Any) -> Void
    /// Encodes a value taken by ``read`` into the property's slot of a row encoder's container.
    let encode: (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void

    /// - Parameter offset: where the property's value is stored in an instance (from its
    ///   start), when it is known and of the key path's value type.
    init(name: String, keyPath: PartialKeyPath<M>, offset: Int?) {
        func make<V>(_: V.Type) -> PropertyAccess<M> { PropertyAccess(name: name, typed: keyPath as! KeyPath<M, V>, offset: offset) }
        self = _openExistential(type(of: keyPath).valueType, do: make)
    }

    private init<V>(name: String, typed keyPath: KeyPath<M, V>, offset: Int?) {
        self.name = name
        readsStorage = offset != nil
        if let offset {
            read = { model in stored(model, offset, as: V.self).pointee }
        } else {
            read = { $0[keyPath: keyPath] }
        }
        let comparable = !(V.self is AnyObject.Type)
        // Values of V that an `Any` holds inline (in its first `size` bytes) are compared there,
        // with no cast (a cast to a generic V looks its metadata up on every call). A value the
        // `Any` keeps boxed all the same (a type that is not bitwise takable) is compared by its
        // box: never found equal to a different value, only sent to the slower comparison.
        let size = MemoryLayout<V>.size
        let inline = comparable && size <= 3 * MemoryLayout<Int>.size && MemoryLayout<V>.alignment <= MemoryLayout<Int>.alignment
        // Types compared by identity: `==` on metatypes looks up `Optional<Any.Type>` per call.
        let typeV = ObjectIdentifier(V.self)
        let isSame: (Any, Any) -> Bool = { a, b in
            guard ObjectIdentifier(type(of: a)) == typeV, ObjectIdentifier(type(of: b)) == typeV else { return false }
            if inline { return withUnsafeBytes(of: a) { x in withUnsafeBytes(of: b) { y in same(x.baseAddress!, y.baseAddress!, size) } } }
            guard comparable, let a = a as? V, let b = b as? V else { return false }
            return withUnsafeBytes(of: a) { x in withUnsafeBytes(of: b) { y in same(x.baseAddress!, y.baseAddress!, size) } }
        }
        self.isSame = isSame
        if let offset, comparable {
            isCurrent = { model, saved in
                guard ObjectIdentifier(type(of: saved)) == typeV else { return false }
                let field = UnsafeRawPointer(stored(model, offset, as: V.self))
                if inline { return withUnsafeBytes(of: saved) { same(field, $0.baseAddress!, size) } }
                guard let saved = saved as? V else { return false }
                return withUnsafeBytes(of: saved) { same(field, $0.baseAddress!, size) }
            }
        } else {
            let read = read
            isCurrent = { model, saved in isSame(read(model), saved) }
        }
        if let writable = keyPath as? ReferenceWritableKeyPath<M, V> {
            write = { model, value in if let value = value as? V { model[keyPath: writable] = value } }
        } else {
            write = { _, _ in }
        }
        let key = PropertyCodingKey(stringValue: name)
        if let optional = V.self as? any OptionalEncodable.Type {
            encode = optional.encoder(key)
        } else if let encodable = V.self as? any Encodable.Type {
            func open<E: Encodable>(_: E.Type) -> (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void {
                { value, container in try container.encode(value as! E, forKey: key) }
            }
            encode = open(encodable)
        } else {
            // Models are Codable, so every stored property is; nothing to encode otherwise.
            encode = { _, _ in }
        }
    }
}

/// The storage of a property at `offset` in `model`. The context only reads through it, in
/// the model's own isolation, as the model's synthesized `encode(to:)` would.
@inline(__always)
private func stored<M: AnyObject, V>(_ model: M, _ offset: Int, as: V.Type) -> UnsafePointer<V> {
    UnsafeRawPointer(Unmanaged.passUnretained(model).toOpaque()).advanced(by: offset).assumingMemoryBound(to: V.self)
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
    static func encoder(_ key: PropertyCodingKey) -> (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void
}

extension Optional: OptionalEncodable where Wrapped: Encodable {
    fileprivate static func encoder(_ key: PropertyCodingKey) -> (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void {
        { value, container in
            if let wrapped = value as? Wrapped { try container.encode(wrapped, forKey: key) } else { try container.encodeNil(forKey: key) }
        }
    }
}
