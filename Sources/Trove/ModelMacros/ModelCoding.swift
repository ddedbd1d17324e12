import Foundation

/// The row coding ``Model()`` writes out: one call per property, resolved at compile time by the
/// property's type (an optional is decoded with `decodeIfPresent` and left out when nil, as the
/// compiler's synthesized `Codable` does, so a model's columns are the same either way). Called
/// only by generated code.
public enum _ModelCoding {
    @inlinable
    public static func decode<V: Decodable, K>(_ type: V.Type, forKey key: K, from container: KeyedDecodingContainer<K>) throws -> V {
        try container.decode(V.self, forKey: key)
    }

    @inlinable
    public static func decode<V: Decodable, K>(_ type: V?.Type, forKey key: K, from container: KeyedDecodingContainer<K>) throws -> V? {
        try container.decodeIfPresent(V.self, forKey: key)
    }

    @inlinable
    public static func encode<V: Encodable, K>(_ value: V, forKey key: K, to container: inout KeyedEncodingContainer<K>) throws {
        try container.encode(value, forKey: key)
    }

    @inlinable
    public static func encode<V: Encodable, K>(_ value: V?, forKey key: K, to container: inout KeyedEncodingContainer<K>) throws {
        try container.encodeIfPresent(value, forKey: key)
    }

    /// A property whose type is another model class: object relationships are not stored yet.
    @available(*, unavailable, message: "object relationships are not stored yet: store the other model's id (Other.ID?) and declare it with ModelOptions.reference(_:to:onDelete:)")
    public static func decode<T: _ReferenceModel, K>(_ type: T?.Type, forKey key: K, from container: KeyedDecodingContainer<K>) throws -> T? {
        fatalError()
    }

    /// A property whose type is another model class: object relationships are not stored yet.
    @available(*, unavailable, message: "object relationships are not stored yet: store the other model's id (Other.ID) and declare it with ModelOptions.reference(_:to:onDelete:)")
    public static func decode<T: _ReferenceModel, K>(_ type: T.Type, forKey key: K, from container: KeyedDecodingContainer<K>) throws -> T {
        fatalError()
    }

    /// A property whose type is an array of model classes: object relationships are not stored yet.
    @available(*, unavailable, message: "object relationships are not stored yet: read the children with ModelContext.children(_:of:)")
    public static func decode<T: _ReferenceModel, K>(_ type: [T].Type, forKey key: K, from container: KeyedDecodingContainer<K>) throws -> [T] {
        fatalError()
    }
}
