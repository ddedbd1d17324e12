import Foundation

/// A result member whose key is left out when it has no value, where ``JSONOutput`` would
/// otherwise write `null` (a sync status without a server error has no `serverError` key).
///
/// ```swift
/// struct Report: Codable {
///     var space: String
///     @OmittedWhenNil var serverError: String?
/// }
/// try JSONOutput.text(Report(space: "notes", serverError: nil))   // {"space":"notes"}
/// ```
@propertyWrapper
struct OmittedWhenNil<Value: Codable & Sendable>: Codable, Sendable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension OmittedWhenNil: Equatable where Value: Equatable {}

extension KeyedEncodingContainer {
    /// Chosen over the generic `encode` for wrapped members: nothing is written for nil.
    mutating func encode<Value>(_ member: OmittedWhenNil<Value>, forKey key: Key) throws {
        if let value = member.wrappedValue { try encode(value, forKey: key) }
    }
}

extension KeyedDecodingContainer {
    /// A missing key reads as nil.
    func decode<Value>(_ type: OmittedWhenNil<Value>.Type, forKey key: Key) throws
        -> OmittedWhenNil<Value>
    {
        OmittedWhenNil(wrappedValue: try decodeIfPresent(Value.self, forKey: key))
    }
}
