import Foundation

/// A decoder that builds a probe instance of a model from values it makes up, and remembers
/// what it handed out for each top-level property (printed), so the instance can be read back
/// and compared:
///
/// - ``Mode/unique(round:)``: each property gets a value no other property has (strings,
///   numbers, dates, data, URLs, UUIDs, string and float arrays) or, for `Bool`s, one bit of the
///   property's number per round. Reading a key path on the probes then tells which property it
///   names, which printing cannot: `@Observable` turns stored properties into computed ones,
///   printed as `<computed 0x...>` (``ReferenceLayout``). Odd rounds hand out large negative
///   numbers, so an `init(from:)` that clamps or refuses them shows it.
/// - ``Mode/empty``: every optional property is absent, every other one empty or zero (`""`,
///   `0`, `false`, `[]`, the nil UUID, 1970). An `init(from:)` that rejects or replaces such
///   values shows it here (``MemberwiseDecoding``).
final class ModelProbe: Decoder {
    enum Mode: Equatable {
        case unique(round: Int)
        case empty
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let mode: Mode
    /// Property name -> the printed value handed out (`.some(nil)` when it cannot be unique;
    /// absent for a property handed nil through `decodeIfPresent`).
    var handed: [String: String?] = [:]
    /// The properties asked for through `decodeIfPresent` or `decodeNil`, and handed nil.
    var absent: Set<String> = []
    /// Property name -> the printed type decoded.
    var types: [String: String] = [:]
    /// The properties declared ``LazyField``.
    var lazy: Set<String> = []
    private var counter = 0
    private var bools = 0

    init(_ mode: Mode) { self.mode = mode }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(probe: self))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try ShapeRecorder().unkeyedContainer()
    }
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        try ShapeRecorder().singleValueContainer()
    }

    /// A value of `T` for the property `name`: unique among the model's properties when `T`
    /// allows it, or empty (``Mode/empty``).
    func value<T: Decodable>(_ type: T.Type, for name: String) throws -> T {
        counter += 1
        types[name] = String(describing: T.self)
        if type is any LazyFieldValue.Type { lazy.insert(name) }
        let made: Any? =
            switch mode {
            case .unique(let round): unique(type, round: round)
            case .empty: Self.empty(type)
            }
        if let made {
            handed[name] = String(describing: made)
            return made as! T
        }
        handed[name] = .some(nil)
        return try ShapeRecorder.record(type, depth: 1).value
    }

    /// Nil through `decodeIfPresent` in ``Mode/empty``, else ``value(_:for:)``.
    func valueIfPresent<T: Decodable>(_ type: T.Type, for name: String) throws -> T? {
        guard mode == .empty else { return try value(type, for: name) }
        types[name] = String(describing: T.self)
        absent.insert(name)
        return nil
    }

    private func unique<T>(_ type: T.Type, round: Int) -> Any? {
        let n = counter
        // Odd rounds: numbers negative and large, so clamping or refusing them shows.
        let signed = round % 2 == 1 ? -n * 1_000_003 : n
        switch type {
        // Mixed case and spaces at both ends: trimming or changing case shows.
        case is String.Type: return " \u{1}Trove-Probe-\(n) "
        case is Double.Type: return Double(signed) + 0.25
        case is Float.Type: return Float(signed) + 0.25
        case is Date.Type: return Date(timeIntervalSince1970: Double(signed) * 1000 + 0.5)
        case is Data.Type: return Data("trove-probe-\(n)".utf8)
        case is URL.Type: return URL(string: "trove:probe/\(n)")!
        case is UUID.Type:
            return UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", n))!
        case is Decimal.Type: return Decimal(signed) + Decimal(0.25)
        case is [String].Type: return [" \u{1}Trove-Probe-\(n) ", "\u{1}trove-probe-\(n)b"]
        case is [Float].Type: return [Float(n) + 0.25, -Float(n)]
        case is Bool.Type:
            bools += 1
            return (bools >> round) & 1 == 1
        default:
            if let integer = type as? any FixedWidthInteger.Type {
                return integer.init(truncatingIfNeeded: signed)
            }
            return nil
        }
    }

    private static func empty<T>(_ type: T.Type) -> Any? {
        switch type {
        case is String.Type: ""
        case is Double.Type: 0.0
        case is Float.Type: Float(0)
        case is Date.Type: Date(timeIntervalSince1970: 0)
        case is Data.Type: Data()
        case is UUID.Type: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case is Decimal.Type: Decimal(0)
        case is [String].Type: [String]()
        case is [Float].Type: [Float]()
        case is Bool.Type: false
        default: (type as? any FixedWidthInteger.Type).map { $0.init(truncatingIfNeeded: 0) }
        }
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let probe: ModelProbe
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool {
            guard probe.mode == .empty else { return false }
            probe.absent.insert(key.stringValue)
            return true
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try probe.value(type, for: key.stringValue)
        }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try probe.valueIfPresent(type, for: key.stringValue)
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
            throws
            -> KeyedDecodingContainer<NestedKey>
        {
            try ShapeRecorder(depth: 1).container(keyedBy: type)
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ShapeRecorder(depth: 1).unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder { ShapeRecorder(depth: 1) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ShapeRecorder(depth: 1) }
    }
}
