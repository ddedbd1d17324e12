import Foundation

/// One stored property of a reference model reached through its key path: read into a
/// snapshot, compared with one, written back and encoded, with the property's type known
/// inside each closure (built once per type, in ``ReferenceLayout``).
///
/// This is how a context finds changes without encoding every model: a snapshot holds the
/// values as read (sharing their storage: a string or a blob is not copied), and a property is
/// unchanged when its value is bit for bit the one taken (then its encoding is the same too).
/// Only properties that fail that test are encoded and compared as stored values; a value
/// assigned again with equal contents is found equal there and not written.
struct PropertyAccess<M: ReferenceModel> {
    let name: String
    let read: (M) -> Any
    /// Whether two values taken (by ``read`` or ``SnapshotEncoder``) are bit for bit the same
    /// (false for class-typed properties, whose contents can change behind the same reference).
    let isSame: (Any, Any) -> Bool
    /// Sets a value taken by ``read`` back through the property's setter (observers hear of it).
    let write: (M, Any) -> Void
    /// Encodes a value taken by ``read`` into the property's slot of a row encoder's container.
    let encode: (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void

    init(name: String, keyPath: PartialKeyPath<M>) {
        func make<V>(_: V.Type) -> PropertyAccess<M> { PropertyAccess(name: name, typed: keyPath as! KeyPath<M, V>) }
        self = _openExistential(type(of: keyPath).valueType, do: make)
    }

    private init<V>(name: String, typed keyPath: KeyPath<M, V>) {
        self.name = name
        read = { $0[keyPath: keyPath] }
        let comparable = !(V.self is AnyObject.Type)
        // Values of V that an `Any` holds inline (in its first `size` bytes) are compared there,
        // with no cast (a cast to a generic V looks its metadata up on every call).
        let size = MemoryLayout<V>.size
        let inline = comparable && size <= 3 * MemoryLayout<Int>.size && MemoryLayout<V>.alignment <= MemoryLayout<Int>.alignment
        // Types compared by identity: `==` on metatypes looks up `Optional<Any.Type>` per call.
        let (typeV, absent) = (ObjectIdentifier(V.self), ObjectIdentifier(SnapshotEncoder.Absent.self))
        isSame = { a, b in
            let (aType, bType) = (ObjectIdentifier(type(of: a)), ObjectIdentifier(type(of: b)))
            if inline, aType == typeV, bType == typeV { return sameInlineBits(a, b, size: size) }
            let (aAbsent, bAbsent) = (aType == absent, bType == absent)
            if aAbsent || bAbsent { return aAbsent && bAbsent }
            guard comparable, let a = a as? V, let b = b as? V else { return false }
            return sameBits(a, b)
        }
        let none = (V.self as? any OptionalEncodable.Type)?.nothing as? V
        if let writable = keyPath as? ReferenceWritableKeyPath<M, V> {
            write = { model, value in
                if let value = value as? V {
                    model[keyPath: writable] = value
                } else if let none, type(of: value) == SnapshotEncoder.Absent.self {
                    model[keyPath: writable] = none
                }
            }
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

/// Whether two values have the same bits (for values holding references: the same storage).
private func sameBits<V>(_ a: V, _ b: V) -> Bool {
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
    }
}

/// Whether two `Any`s holding values of one type of `size` bytes that fits their inline buffer
/// have the same first `size` bytes there. A value the `Any` keeps boxed all the same (a type
/// that is not bitwise takable) is compared by its box: equal boxes hold equal values, so this
/// never finds two different values the same.
private func sameInlineBits(_ a: Any, _ b: Any, size: Int) -> Bool {
    withUnsafeBytes(of: a) { x in
        withUnsafeBytes(of: b) { y in size == 0 || memcmp(x.baseAddress!, y.baseAddress!, size) == 0 }
    }
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
    /// nil, as this optional type.
    static var nothing: Any { get }
}

extension Optional: OptionalEncodable where Wrapped: Encodable {
    fileprivate static var nothing: Any { Wrapped?.none as Any }

    fileprivate static func encoder(_ key: PropertyCodingKey) -> (Any, inout KeyedEncodingContainer<PropertyCodingKey>) throws -> Void {
        { value, container in
            if let wrapped = value as? Wrapped { try container.encode(wrapped, forKey: key) } else { try container.encodeNil(forKey: key) }
        }
    }
}
