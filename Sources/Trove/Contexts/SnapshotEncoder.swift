import Foundation

/// Takes a reference model's stored values as its `encode(to:)` hands them over: from the
/// backing storage, without key paths or Observation's access tracking. A fetch snapshots every
/// model and a save compares every tracked one, so this is the hot path of change tracking;
/// reading each property through its key path costs several times more.
///
/// Values land in the slots of the model's row (``ModelRowEncoder/Slots``); a property encoded
/// as nil (or skipped by `encodeIfPresent`) is ``Absent``. A model whose `encode(to:)` asks for
/// nested containers or super encoders is read through its key paths instead (``capture(_:)``
/// returns nil).
final class SnapshotEncoder: Encoder {
    /// A property with no value (nil).
    struct Absent {}

    let slots: ModelRowEncoder.Slots
    var values: [Any]
    var needsKeyPaths = false
    /// The next planned slot.
    fileprivate var next = 0
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// An encoder for models whose rows have `slots`, used for one capture after another (one
    /// per table of a context, so a save that compares every model allocates no encoder each).
    init(slots: ModelRowEncoder.Slots) {
        self.slots = slots
        values = Array(repeating: Absent(), count: slots.definitions.count)
    }

    /// The values of `model`'s stored properties by slot, or nil when they must be read
    /// through key paths. Values that are `kept` are the caller's; others are cleared in place
    /// by the next capture (when nothing else holds them), which then allocates nothing.
    func capture<M: PersistentModel>(_ model: M, kept: Bool) -> [Any]? {
        if values.isEmpty {
            values = Array(repeating: Absent(), count: slots.definitions.count)
        } else {
            for slot in values.indices { values[slot] = Absent() }
        }
        needsKeyPaths = false
        next = 0
        defer { if kept { values = [] } }
        do { try model.encode(to: self) } catch { return nil }
        return needsKeyPaths ? nil : values
    }

    /// The slot of `name`: the expected one, or looked up (nil for the id and unknown names).
    fileprivate func slot(_ name: String) -> Int? {
        let order = slots.order
        if next < order.count, order[next].name == name {
            next += 1
            return order[next - 1].slot
        }
        return slots.byProperty[name]
    }

    fileprivate func put(_ value: Any, _ name: String) {
        if let slot = slot(name) { values[slot] = value }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(Keyed<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        needsKeyPaths = true
        return ValueEncoder().unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        needsKeyPaths = true
        return ValueEncoder().singleValueContainer()
    }

    private struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: SnapshotEncoder
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { encoder.put(Absent(), key.stringValue) }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: String, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Int, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Int64, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Double, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Bool, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Float, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Int8, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Int16, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: Int32, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: UInt, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: UInt8, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: UInt16, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: UInt32, forKey key: Key) throws { encoder.put(value, key.stringValue) }
        mutating func encode(_ value: UInt64, forKey key: Key) throws { encoder.put(value, key.stringValue) }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            encoder.needsKeyPaths = true
            return ValueEncoder().container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.needsKeyPaths = true
            return ValueEncoder().unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            encoder.needsKeyPaths = true
            return ValueEncoder()
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            encoder.needsKeyPaths = true
            return ValueEncoder()
        }
    }
}
