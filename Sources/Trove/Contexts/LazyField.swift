import Foundation

/// A property a context does not read when it fetches (a large `Data` or text): its column is
/// left out of the fetch's SQL and read on first ``ModelContext/load(_:of:)``, once.
///
/// ```swift
/// @Observable final class Photo: _ReferenceModel {
///     var id: Int64
///     var caption: String
///     var pixels: LazyField<Data>
///     ...
/// }
/// let photos = try context.fetch(FetchDescriptor<Photo>())   // no pixels read
/// let pixels = try context.load(\.pixels, of: photos[0])      // one query, then kept
/// photos[1].pixels = LazyField(Data(count: 16))                   // saved like any change
/// ```
///
/// Value models and ``ModelCollection`` reads always load it. Its column is nullable (null
/// until a value is saved).
public struct LazyField<Value: Codable & Sendable>: Codable, Sendable, LazyFieldValue {
    /// The value, or nil until loaded (``ModelContext/load(_:of:)``) or set.
    public private(set) var value: Value?

    /// A field holding `value` (saved with the model).
    ///
    /// - Parameter value: the value.
    public init(_ value: Value) { self.value = value }

    /// A field not loaded yet.
    public init() { value = nil }

    /// Whether the value is here (loaded or set).
    public var isLoaded: Bool { value != nil }

    /// Decodes the stored value; null (a column a fetch skipped) is a field not loaded yet.
    ///
    /// - Parameter decoder: the decoder.
    /// - Throws: `DecodingError` when the value does not fit `Value`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        value = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    /// Encodes the value, or null when it is not loaded (a save then leaves the column alone).
    ///
    /// - Parameter encoder: the encoder.
    /// - Throws: the encoder's errors.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let value { try container.encode(value) } else { try container.encodeNil() }
    }
}

/// Marks ``LazyField`` for the shape recorder and the coders, whatever its value type.
protocol LazyFieldValue {
    /// The value stored as its column (null when not loaded), or nil when it is not a scalar.
    func storedValue(inJSON: Bool) -> Value?
}

extension LazyField {
    func storedValue(inJSON: Bool) -> Trove.Value? {
        guard let value else { return Trove.Value.null }
        return ValueEncoder.scalar(value, inJSON: inJSON)
    }
}
