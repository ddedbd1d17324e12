import Foundation

/// One tracked model: the instance (of its table's type), the row version it was at, and,
/// once it has changed since it was read or last saved, a snapshot of its stored properties
/// (schema order) as they were then, sharing storage with the model's own. Until its first
/// change a model's storage is its saved state, so a fetch takes no snapshot: the setters take
/// it on the first change (``TrackedModels/markChanged(_:name:from:)``).
final class TrackedEntry {
    let object: AnyObject
    /// The stored values as read or last saved; nil when the storage holds them (no change
    /// since), and for an inserted model.
    var snapshot: Snapshot?
    /// Whether the model was inserted and has no row yet.
    var isInserted: Bool
    var version: Int64
    var isDeleted = false
    /// Whether the identity map holds this entry (cleared when it leaves the map): a listed
    /// model's entry, taken when it was listed, is still its entry while this holds.
    var isTracked = true

    init(object: AnyObject, snapshot: Snapshot? = nil, isInserted: Bool = false, version: Int64) {
        self.object = object
        self.snapshot = snapshot
        self.isInserted = isInserted
        self.version = version
    }
}

/// A tracked model's stored property values (schema order, then the id) as read or last saved.
struct Snapshot {
    private var values: ArraySlice<Any>

    init(_ values: ArraySlice<Any>) { self.values = values }

    /// The value of property `slot`.
    subscript(slot slot: Int) -> Any {
        get { values[values.startIndex + slot] }
        set { values[values.startIndex + slot] = newValue }
    }

    func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Any>) throws -> R) rethrows -> R {
        try values.withUnsafeBufferPointer(body)
    }
}

/// A model listed as changed (``TrackedModels``): its entry and the id it was tracked under.
/// A struct, not a tuple: an array of tuples is copied and freed through the runtime's generic
/// tuple witnesses, element by element.
struct ListedModel {
    let id: DocumentID
    let entry: TrackedEntry
}

/// An entry a save under way writes, and whether it was inserted (a struct for the same reason).
struct SavingEntry {
    let entry: TrackedEntry
    let inserted: Bool
}
