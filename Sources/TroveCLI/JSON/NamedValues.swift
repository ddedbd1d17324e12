import Foundation

/// A JSON object whose keys are data rather than fields (collection names, search modes, query
/// kinds), written in the order given: a dictionary would write them in hash order.
///
/// ```swift
/// let counts = NamedValues([("notes", 12), ("journal", 3)])
/// try JSONOutput.text(counts)   // {"notes":12,"journal":3}
/// ```
struct NamedValues<Value: Codable & Equatable & Sendable>: Codable, Equatable, Sendable {
    var members: [(name: String, value: Value)]

    init(_ members: [(String, Value)]) { self.members = members.map { (name: $0.0, value: $0.1) } }

    /// `dictionary` sorted by key.
    init(sorted dictionary: [String: Value]) {
        self.init(dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    subscript(name: String) -> Value? { members.first { $0.name == name }?.value }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy {
                $0.name == $1.name && $0.value == $1.value
            }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for (name, value) in members { try container.encode(value, forKey: Key(stringValue: name)) }
    }

    /// Read back in key order (a decoder does not keep the text's).
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        members = try container.allKeys.sorted { $0.stringValue < $1.stringValue }.map {
            (name: $0.stringValue, value: try container.decode(Value.self, forKey: $0))
        }
    }
}
