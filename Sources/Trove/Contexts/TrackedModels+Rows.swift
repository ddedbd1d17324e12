import Foundation
import TroveSQLite

/// A tracked model's stored values as a row: the whole row (inserts, deletes, a failed
/// update's error), and, for a save, only the properties that changed, now and as saved.
extension TrackedModels {
    func row(_ model: M) throws -> [SQLValue] {
        guard isTyped else { return try schema.row(model, in: store) }
        var writer = _ModelRowWriter(slots: schema.rowSlots, names: propertyNames)
        try model._$write(to: &writer)
        try ModelRowEncoder.complete(&writer.row, id: model.id, slots: schema.rowSlots)
        return writer.row
    }

    /// The row `model` had when `saved` was taken: its row now with the differing slots
    /// encoded from the snapshot.
    func savedRow(_ saved: Snapshot, current: [SQLValue], differing: [Int]) throws
        -> [SQLValue]
    {
        guard !differing.isEmpty else { return current }
        var row = current
        var general: [Int] = []
        for slot in differing {
            if let value = Self.plainValue(saved[slot: slot], schema.rowSlots.plainTypes[slot]) {
                row[slot + 1] = value
            } else {
                general.append(slot)
            }
        }
        guard !general.isEmpty else { return row }
        let encoder = ModelRowEncoder(slots: schema.rowSlots)
        var container = encoder.container(keyedBy: PropertyCodingKey.self)
        for slot in general { try accesses[slot].encode(saved[slot: slot], &container) }
        for slot in general { row[slot + 1] = encoder.row[slot + 1] }
        return row
    }

    /// A snapshot's value of a common type stored as it is (`type`, the slot's plain type), as
    /// the row writers store it (``ModelRowEncoder``'s keyed container, `_ModelCoding.write`);
    /// nil for any other type or pairing, which the general path encodes. A save compares a
    /// changed model's row with its snapshot's this way, without a Codable container per value.
    static func plainValue(_ value: Any, _ type: FieldType?) -> SQLValue? {
        guard let type else { return nil }
        let dynamic = ObjectIdentifier(Swift.type(of: value))
        switch type {
        case .text where dynamic == ObjectIdentifier(String.self):
            return .text(value as! String)
        case .integer where dynamic == ObjectIdentifier(Int.self):
            return .integer(Int64(value as! Int))
        case .integer where dynamic == ObjectIdentifier(Int64.self):
            return .integer(value as! Int64)
        case .real where dynamic == ObjectIdentifier(Double.self):
            let double = value as! Double
            return double.isFinite ? .real(double) : nil
        case .bool where dynamic == ObjectIdentifier(Bool.self):
            return .integer(value as! Bool ? 1 : 0)
        case .date where dynamic == ObjectIdentifier(Date.self):
            return .real((value as! Date).timeIntervalSince1970)
        default:
            return nil
        }
    }

    /// The changed slots of a saved model whose slots `differing` are not bit for bit as
    /// saved (empty when none changed as stored), their stored values now appended to `values`.
    /// Only those slots are encoded, now and as saved: a save writes only them, and the whole
    /// rows are made only when a write fails (``rows(of:)``).
    func changed(
        _ model: M, differing: [Int], saved: Snapshot, into values: inout [SQLValue]
    ) throws -> [Int] {
        var slots = differing
        var kept = 0
        for (i, slot) in differing.enumerated() {
            let now = try storedValue(accesses[slot].read(model), slot: slot)
            if now.isNull, schema.rowSlots.required.contains(slot) {
                throw TroveError.missingField(field: schema.rowSlots.definitions[slot].name)
            }
            guard now != (try storedValue(saved[slot: slot], slot: slot)) else { continue }
            values.append(now)
            if kept != i { slots[kept] = slot }
            kept += 1
        }
        // All changed (the common case): `differing` is kept as it is, with no new array.
        if kept < slots.count { slots.removeLast(slots.count - kept) }
        return slots
    }

    /// The stored value of a value of property `slot` as a snapshot holds it (as ``row(_:)``
    /// writes it).
    func storedValue(_ value: Any, slot: Int) throws -> SQLValue {
        if let plain = Self.plainValue(value, schema.rowSlots.plainTypes[slot]) { return plain }
        let encoder = ModelRowEncoder(slots: schema.rowSlots)
        var container = encoder.container(keyedBy: PropertyCodingKey.self)
        try accesses[slot].encode(value, &container)
        return encoder.row[slot + 1]
    }

    /// The whole row of the tracked model `id` now and as it was read or last saved (an update
    /// that failed names its constraint or conflicting fields with them).
    func rows(of id: DocumentID) throws -> (row: [SQLValue], saved: [SQLValue]) {
        guard let entry = entries[id] else { throw TroveError.documentNotFound(id) }
        var current = try row(model(entry))
        current[0] = id.sqlValue
        guard let saved = entry.snapshot else { return (current, current) }
        let before = try savedRow(
            saved, current: current, differing: differing(model(entry), from: saved))
        return (current, before)
    }

    func unchanged(_ model: M, _ saved: Snapshot) throws -> Bool {
        let differing = differing(model, from: saved)
        guard !differing.isEmpty else { return true }
        let current = try row(model)
        let before = try savedRow(saved, current: current, differing: differing)
        return differing.allSatisfy { current[$0 + 1] == before[$0 + 1] }
    }
}
